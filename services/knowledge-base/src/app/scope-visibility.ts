import { errors } from '@kb/platform';
import type { DocumentReader } from '@kb/store';
import type { CallContext } from '@kb/rpc';
import { KB_NODES, type KbNodeDoc } from '../projections/kb-tree.js';
import { SEARCH_QUERIES, type SearchQueryDoc } from '../projections/search-queries.js';
import { isInScope } from '../domain/folder-scope.js';

/**
 * What derives from the knowledge base follows the folder scope exactly as content
 * does (issue 13 item 4): search records, tags on knowledge-base items, suggestions.
 * These are the shared visibility rules; kb-tree and search apply the same scope.
 */

const MAX_DEPTH = 1000;

/** 403 for a key whose folder scope is empty: it may read nothing of the knowledge base. */
export function requireSomeScope(ctx: CallContext): void {
  if (ctx.folder_scope !== null && ctx.folder_scope.length === 0) {
    throw errors.forbidden('This credential (API key or OAuth grant) may not use the knowledge base', { code: 'folder_scope' });
  }
}

async function chain(reader: DocumentReader, node: KbNodeDoc): Promise<string[]> {
  const out = [node.kb_node_id];
  let parent = node.parent_id;
  while (parent !== null && out.length < MAX_DEPTH) {
    out.push(parent);
    parent = (await reader.get<KbNodeDoc>(KB_NODES, parent))?.parent_id ?? null;
  }
  return out;
}

/** A live node (folder or content) of the organization inside the scope. */
export async function nodeVisible(reader: DocumentReader, scope: readonly string[], orgId: string, nodeId: string): Promise<boolean> {
  const node = await reader.get<KbNodeDoc>(KB_NODES, nodeId);
  return node !== undefined && node.org_id === orgId && isInScope(scope, await chain(reader, node));
}

/** A content item whose tree node lies inside the scope. */
export async function contentVisible(reader: DocumentReader, scope: readonly string[], orgId: string, contentId: string): Promise<boolean> {
  const [node] = await reader.find<KbNodeDoc>(KB_NODES, { where: { content_id: contentId }, limit: 1 });
  return node !== undefined && node.org_id === orgId && isInScope(scope, await chain(reader, node));
}

/**
 * A search record as a scoped reader may see it: only when the searcher's scope lay
 * inside the reader's (a whole-KB search never), with only the sources inside the
 * reader's scope; undefined when hidden.
 */
export async function searchRecordVisible(
  reader: DocumentReader,
  scope: readonly string[],
  orgId: string,
  doc: SearchQueryDoc,
): Promise<SearchQueryDoc | undefined> {
  const recorded = doc.folder_scope ?? null;
  if (doc.org_id !== orgId || recorded === null || recorded.length === 0) return undefined;
  for (const folderId of recorded) if (!(await nodeVisible(reader, scope, orgId, folderId))) return undefined;
  const sources: string[] = [];
  for (const contentId of doc.source_ids) if (await contentVisible(reader, scope, orgId, contentId)) sources.push(contentId);
  return { ...doc, source_ids: sources };
}

/** Whether a tagged thing is visible to a scoped reader: prompts are not in the tree (always); the rest by the rules above. */
export async function taggedTargetVisible(
  reader: DocumentReader,
  scope: readonly string[],
  orgId: string,
  target: { target_type: string; target_id: string },
): Promise<boolean> {
  switch (target.target_type) {
    case 'prompt':
      return true;
    case 'kb_node':
      return nodeVisible(reader, scope, orgId, target.target_id);
    case 'content':
      return contentVisible(reader, scope, orgId, target.target_id);
    case 'search_query': {
      const doc = await reader.get<SearchQueryDoc>(SEARCH_QUERIES, target.target_id);
      return doc !== undefined && (await searchRecordVisible(reader, scope, orgId, doc)) !== undefined;
    }
    default:
      return false;
  }
}
