/**
 * Folder scope of an API key (spec 5.2): null is the whole knowledge base, an
 * array the only folders the key may see and touch (empty: none). A node is
 * inside the scope when it or one of its ancestors is a scope folder.
 *
 * `chain` is the node followed by its ancestors up to the root.
 */
export function isInScope(scope: readonly string[] | null, chain: readonly string[]): boolean {
  if (scope === null) return true;
  return chain.some((id) => scope.includes(id));
}

/** The part of a root-first path a scoped caller may see: from its highest scope folder down. */
export function visiblePath<T extends { kb_node_id: string }>(scope: readonly string[] | null, rootFirst: readonly T[]): T[] {
  if (scope === null) return [...rootFirst];
  const from = rootFirst.findIndex((n) => scope.includes(n.kb_node_id));
  return from < 0 ? [] : rootFirst.slice(from);
}

/** Whether a move of `nodeId` under `newParentChain` (the new parent, then its ancestors) would make a cycle. */
export const wouldCycle = (nodeId: string, newParentChain: readonly string[]): boolean => newParentChain.includes(nodeId);
