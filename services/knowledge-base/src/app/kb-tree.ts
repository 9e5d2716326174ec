import { errors, type Clock, type IdGenerator } from '@kb/platform';
import type { DocumentReader, Store } from '@kb/store';
import type { CommandBus, CommandSession } from '@kb/eventsourcing';
import type { CallContext } from '@kb/rpc';
import { ROOT_NAME, kbNodeDecider, kbNodeStream, rootIdOf, type KbNodeCommand } from '../domain/kb-node.js';
import { isInScope, visiblePath, wouldCycle } from '../domain/folder-scope.js';
import { checkPage, metadataOf, type Page } from './common.js';
import { KB_NODES, type KbNodeDoc } from '../projections/kb-tree.js';
import { CONTENT_FILING, type ContentFilingDoc } from './content-filing.js';
import { MAX_TAGS_PER_CALL, applyTags, resolveTags, tagsOf, type Target } from './tags.js';

export interface KbTreeDeps {
  store: Store;
  commands: CommandBus;
  ids: IdGenerator;
  clock: Clock;
}

/** Folders first, then content, each in creation order. */
const CHILD_ORDER = [
  { field: 'type', order: 'desc' as const },
  { field: 'seq', order: 'asc' as const },
];
/** A chain longer than this means corrupt parent links, not a deep tree. */
const MAX_DEPTH = 1000;

/** A live node of the organization, or 404 (another organization's node is a missing one). */
export async function requireNode(reader: DocumentReader, orgId: string, nodeId: string): Promise<KbNodeDoc> {
  const doc = await reader.get<KbNodeDoc>(KB_NODES, nodeId);
  if (!doc || doc.org_id !== orgId) throw errors.notFound('Knowledge base node');
  return doc;
}

/** The node's id followed by its ancestors' ids up to the root. */
export async function chainOf(reader: DocumentReader, node: KbNodeDoc): Promise<string[]> {
  const chain = [node.kb_node_id];
  let parent = node.parent_id;
  while (parent !== null && chain.length < MAX_DEPTH) {
    chain.push(parent);
    const doc = await reader.get<KbNodeDoc>(KB_NODES, parent);
    parent = doc?.parent_id ?? null;
  }
  return chain;
}

/** 403 for a scoped key on the whole KB when its scope is empty, before anything else is revealed. */
function requireSomeScope(ctx: CallContext): void {
  if (ctx.folder_scope !== null && ctx.folder_scope.length === 0) {
    throw errors.forbidden('This credential (API key or OAuth grant) may not use the knowledge base', { code: 'folder_scope' });
  }
}

async function requireInScope(reader: DocumentReader, ctx: CallContext, node: KbNodeDoc): Promise<void> {
  if (ctx.folder_scope === null) return;
  if (!isInScope(ctx.folder_scope, await chainOf(reader, node))) {
    throw errors.forbidden('This credential (API key or OAuth grant) may not use this part of the knowledge base', {
      code: 'folder_scope',
    });
  }
}

function requireFolder(node: KbNodeDoc, field: string): void {
  if (node.type !== 'folder') {
    throw errors.validation(`${field} must be a folder`, { code: 'not_a_folder', details: { field } });
  }
}

/** Not a read model: one document per organization that every structural tree write rewrites. */
const TREE_LOCKS = 'kb_tree_locks';

/**
 * Serialises structural changes of one organization's tree (create under, move,
 * delete). SQLite runs transactions one at a time anyway; on MongoDB two
 * transactions that both checked "no cycle" or "parent still there" against the
 * same snapshot would otherwise both commit. Both write this document, so one
 * of them gets a write conflict and is re-run against the other's result.
 */
export async function lockTree(session: CommandSession, orgId: string, at: string): Promise<void> {
  await session.tx.put(TREE_LOCKS, { id: orgId, at });
}

/** Creates the organization's root folder in this transaction unless it exists. Idempotent. */
export async function ensureRoot(session: CommandSession, orgId: string, at: string): Promise<string> {
  const rootId = rootIdOf(orgId);
  const { state } = await session.load(kbNodeDecider, kbNodeStream(rootId));
  if (state.status === 'new') {
    await session.execute(kbNodeDecider, kbNodeStream(rootId), {
      type: 'create',
      kb_node_id: rootId,
      org_id: orgId,
      node_type: 'folder',
      parent_id: null,
      name: ROOT_NAME,
      at,
    });
  }
  return rootId;
}

export const runNode = (session: CommandSession, nodeId: string, command: KbNodeCommand) =>
  session.execute(kbNodeDecider, kbNodeStream(nodeId), command);

/** The tag target of a node: a content node's tags are its content item's. */
export const targetOf = (d: KbNodeDoc): Target =>
  d.content_id !== undefined ? { type: 'content', id: d.content_id } : { type: 'kb_node', id: d.kb_node_id };

export type NodeView = KbNodeDoc & {
  tags: { tag_id: string; name: string; color?: string }[];
  processing_status?: string;
  category_id?: string;
  topic_id?: string;
};

/** The knowledge-base tree (spec 2.6) with folder-scope enforcement (spec 5.2). */
export function createKbTreeService(deps: KbTreeDeps) {
  const { store, commands, ids, clock } = deps;
  const now = () => clock.now().toISOString();

  async function children(orgId: string, nodeId: string, page: Page) {
    const where = { parent_id: nodeId, org_id: orgId };
    const [items, total_count] = await Promise.all([
      store.find<KbNodeDoc>(KB_NODES, { where, sort: CHILD_ORDER, ...page }),
      store.count(KB_NODES, where),
    ]);
    return { children: items, total_count };
  }

  async function setNodeTags(s: CommandSession, orgId: string, target: Target, refs: string[], at: string) {
    if (refs.length > MAX_TAGS_PER_CALL) throw errors.validation(`at most ${MAX_TAGS_PER_CALL} tags`, { details: { field: 'tags' } });
    await applyTags(s, orgId, target, await resolveTags(s, ids, orgId, refs, at), 'set', 'request', at);
  }

  /** Nodes as the API shows them: with their tags, and content nodes with their content's filing. */
  async function views(orgId: string, docs: KbNodeDoc[]): Promise<NodeView[]> {
    const tags = await tagsOf(store, orgId, docs.map(targetOf));
    const contentIds = docs.filter((d) => d.content_id !== undefined).map((d) => d.content_id!);
    const filings = contentIds.length ? await store.find<ContentFilingDoc>(CONTENT_FILING, { where: { id: { $in: contentIds } } }) : [];
    const filingOf = new Map(filings.map((f) => [f.id, f]));
    return docs.map((d) => {
      const t = targetOf(d);
      const filing = d.content_id === undefined ? undefined : filingOf.get(d.content_id);
      return {
        ...d,
        tags: (tags.get(`${t.type}:${t.id}`) ?? []).map(({ tag_id, name, color }) => ({
          tag_id,
          name,
          ...(color !== undefined && { color }),
        })),
        ...(filing && {
          processing_status: filing.status,
          ...(filing.category_id !== undefined && { category_id: filing.category_id }),
          ...(filing.topic_id !== undefined && { topic_id: filing.topic_id }),
        }),
      };
    });
  }
  const view = async (orgId: string, doc: KbNodeDoc) => (await views(orgId, [doc]))[0]!;

  async function viewWithChildren(orgId: string, node: KbNodeDoc, page: Page) {
    const { children: kids, total_count } = await children(orgId, node.kb_node_id, page);
    const [nodeView, ...childViews] = await views(orgId, [node, ...kids]);
    return { node: nodeView!, children: childViews, total_count };
  }

  async function rootOf(ctx: CallContext): Promise<KbNodeDoc> {
    const rootId = rootIdOf(ctx.org_id);
    const existing = await store.get<KbNodeDoc>(KB_NODES, rootId);
    if (existing) return existing;
    await commands.transaction(metadataOf(ctx), (s) => ensureRoot(s, ctx.org_id, now()));
    return (await store.get<KbNodeDoc>(KB_NODES, rootId))!;
  }

  /** Everything under a node, deepest first, so each delete leaves no orphan behind. */
  async function subtreeDeepestFirst(reader: DocumentReader, orgId: string, nodeId: string): Promise<KbNodeDoc[]> {
    const out: KbNodeDoc[] = [];
    const visit = async (id: string) => {
      const kids = await reader.find<KbNodeDoc>(KB_NODES, { where: { parent_id: id, org_id: orgId } });
      for (const kid of kids) {
        if (kid.type === 'folder') await visit(kid.kb_node_id);
        out.push(kid);
      }
    };
    await visit(nodeId);
    return out;
  }

  return {
    /** The root folder and a page of its children. */
    async tree(ctx: CallContext, page: Page) {
      requireSomeScope(ctx);
      checkPage(page);
      const root = await rootOf(ctx);
      await requireInScope(store, ctx, root);
      return viewWithChildren(ctx.org_id, root, page);
    },

    async node(ctx: CallContext, nodeId: string, page: Page) {
      requireSomeScope(ctx);
      checkPage(page);
      const node = await requireNode(store, ctx.org_id, nodeId);
      await requireInScope(store, ctx, node);
      return viewWithChildren(ctx.org_id, node, page);
    },

    /** Root first, down to the node; a scoped key sees the path from its scope folder down. */
    async path(ctx: CallContext, nodeId: string) {
      requireSomeScope(ctx);
      const node = await requireNode(store, ctx.org_id, nodeId);
      const chain = await chainOf(store, node);
      if (!isInScope(ctx.folder_scope, chain))
        throw errors.forbidden('This credential (API key or OAuth grant) may not use this part of the knowledge base', {
          code: 'folder_scope',
        });
      const docs = await Promise.all(chain.map((id) => store.get<KbNodeDoc>(KB_NODES, id)));
      return views(ctx.org_id, visiblePath(ctx.folder_scope, docs.filter((d): d is KbNodeDoc => d !== undefined).reverse()));
    },

    async createFolder(ctx: CallContext, input: { name: string; parent_id?: string; tags?: string[] }) {
      requireSomeScope(ctx);
      const nodeId = ids.uuid();
      await commands.transaction(metadataOf(ctx), async (s) => {
        const at = now();
        await lockTree(s, ctx.org_id, at);
        const rootId = await ensureRoot(s, ctx.org_id, at);
        const parent = await requireNode(s.tx, ctx.org_id, input.parent_id ?? rootId);
        requireFolder(parent, 'parent_id');
        await requireInScope(s.tx, ctx, parent);
        await runNode(s, nodeId, {
          type: 'create',
          kb_node_id: nodeId,
          org_id: ctx.org_id,
          node_type: 'folder',
          parent_id: parent.kb_node_id,
          name: input.name,
          at,
        });
        if (input.tags !== undefined) await setNodeTags(s, ctx.org_id, { type: 'kb_node', id: nodeId }, input.tags, at);
      });
      return view(ctx.org_id, await requireNode(store, ctx.org_id, nodeId));
    },

    /** Rename and/or move; a move into the node's own subtree is 409. */
    /** Rename, move and/or replace the tags (a content node's tags are its content item's). */
    async update(ctx: CallContext, nodeId: string, patch: { name?: string; parent_id?: string; tags?: string[] }) {
      requireSomeScope(ctx);
      await commands.transaction(metadataOf(ctx), async (s) => {
        const at = now();
        const node = await requireNode(s.tx, ctx.org_id, nodeId);
        await requireInScope(s.tx, ctx, node);
        if (patch.parent_id !== undefined) {
          await lockTree(s, ctx.org_id, at);
          const parent = await requireNode(s.tx, ctx.org_id, patch.parent_id);
          requireFolder(parent, 'parent_id');
          const parentChain = await chainOf(s.tx, parent);
          if (ctx.folder_scope !== null && !isInScope(ctx.folder_scope, parentChain)) {
            throw errors.forbidden('This credential (API key or OAuth grant) may not move nodes there', { code: 'folder_scope' });
          }
          if (node.parent_id !== null && wouldCycle(node.kb_node_id, parentChain)) {
            throw errors.conflict('A folder cannot be moved into its own subtree', { code: 'move_cycle' });
          }
          await runNode(s, nodeId, { type: 'move', org_id: ctx.org_id, parent_id: parent.kb_node_id, at });
        }
        if (patch.name !== undefined) await runNode(s, nodeId, { type: 'rename', org_id: ctx.org_id, name: patch.name, at });
        if (patch.tags !== undefined) await setNodeTags(s, ctx.org_id, targetOf(node), patch.tags, at);
      });
      return view(ctx.org_id, await requireNode(store, ctx.org_id, nodeId));
    },

    /** A non-empty folder is 409 unless cascade, which deletes the whole subtree (one kb_node.deleted per node). */
    async remove(ctx: CallContext, nodeId: string, cascade: boolean) {
      requireSomeScope(ctx);
      await commands.transaction(metadataOf(ctx), async (s) => {
        const at = now();
        await lockTree(s, ctx.org_id, at);
        const node = await requireNode(s.tx, ctx.org_id, nodeId);
        await requireInScope(s.tx, ctx, node);
        if (node.parent_id === null) throw errors.conflict('The root folder cannot be deleted', { code: 'root_undeletable' });
        const below = node.type === 'folder' ? await subtreeDeepestFirst(s.tx, ctx.org_id, nodeId) : [];
        if (below.length > 0 && !cascade) {
          throw errors.conflict('The folder is not empty; delete with cascade=true to delete its contents too', {
            code: 'folder_not_empty',
          });
        }
        for (const doc of below) await runNode(s, doc.kb_node_id, { type: 'delete', org_id: ctx.org_id, at });
        await runNode(s, nodeId, { type: 'delete', org_id: ctx.org_id, at });
      });
    },

    /**
     * The caller's folder scope with every folder below it, for listings kept outside the
     * tree (ingest files content by its direct folder). Empty for an unscoped caller.
     */
    async expandScope(ctx: CallContext): Promise<{ folder_ids: string[] }> {
      requireSomeScope(ctx);
      if (ctx.folder_scope === null) return { folder_ids: [] };
      const found = new Set<string>();
      let frontier = [...new Set(ctx.folder_scope)];
      while (frontier.length > 0) {
        // By id (primary key): the scope's own folders may name anything, so each is checked here.
        const nodes = await Promise.all(frontier.map((id) => store.get<KbNodeDoc>(KB_NODES, id)));
        const folders = nodes
          .filter((n): n is KbNodeDoc => n !== undefined && n.org_id === ctx.org_id && n.type === 'folder' && !found.has(n.kb_node_id))
          .map((n) => n.kb_node_id);
        for (const id of folders) found.add(id);
        if (folders.length === 0) break;
        const kids = await store.find<KbNodeDoc>(KB_NODES, { where: { parent_id: { $in: folders }, type: 'folder' } });
        frontier = kids.map((k) => k.kb_node_id);
      }
      return { folder_ids: [...found] };
    },

    /**
     * May this caller file content into this folder (absent: the root)? For the
     * ingest intake, before it accepts an upload. Returns the folder's id.
     */
    async checkFolderAccess(ctx: CallContext, folderId: string | undefined) {
      requireSomeScope(ctx);
      const rootId = rootIdOf(ctx.org_id);
      if (folderId === undefined || folderId === rootId) {
        if (!isInScope(ctx.folder_scope, [rootId])) {
          throw errors.forbidden('This credential (API key or OAuth grant) may not add to the root folder', { code: 'folder_scope' });
        }
        return { folder_id: rootId };
      }
      const folder = await requireNode(store, ctx.org_id, folderId);
      requireFolder(folder, 'parent_id');
      await requireInScope(store, ctx, folder);
      return { folder_id: folder.kb_node_id };
    },
  };
}

export type KbTreeService = ReturnType<typeof createKbTreeService>;
