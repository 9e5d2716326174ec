import type { UnaryHandler } from '@kb/rpc';
import type { KbTreeService } from '../app/kb-tree.js';

const page = (r: { limit?: number; offset?: number }) => ({ limit: r.limit ?? 50, offset: r.offset ?? 0 });

/** Thin mapping from KnowledgeBaseTree RPCs to the tree use cases. */
export function kbTreeHandlers(tree: KbTreeService): Record<string, UnaryHandler> {
  return {
    GetTree: (r: { limit?: number; offset?: number }, ctx) => tree.tree(ctx, page(r)),
    GetNode: (r: { kb_node_id: string; limit?: number; offset?: number }, ctx) => tree.node(ctx, r.kb_node_id, page(r)),
    GetPath: async (r: { kb_node_id: string }, ctx) => ({ nodes: await tree.path(ctx, r.kb_node_id) }),
    CreateFolder: (r: { name?: string; parent_id?: string; tags?: string[] }, ctx) =>
      tree.createFolder(ctx, {
        name: r.name ?? '',
        ...(r.parent_id !== undefined && { parent_id: r.parent_id }),
        ...(r.tags !== undefined && r.tags.length > 0 ? { tags: r.tags } : {}),
      }),
    UpdateNode: (r: { kb_node_id: string; name?: string; parent_id?: string; set_tags?: boolean; tags?: string[] }, ctx) =>
      tree.update(ctx, r.kb_node_id, {
        ...(r.name !== undefined && { name: r.name }),
        ...(r.parent_id !== undefined && { parent_id: r.parent_id }),
        ...(r.set_tags && { tags: r.tags ?? [] }),
      }),
    DeleteNode: async (r: { kb_node_id: string; cascade?: boolean }, ctx) => {
      await tree.remove(ctx, r.kb_node_id, r.cascade === true);
      return {};
    },
    CheckFolderAccess: (r: { folder_id?: string }, ctx) => tree.checkFolderAccess(ctx, r.folder_id || undefined),
    ExpandFolderScope: (_r: unknown, ctx) => tree.expandScope(ctx),
  };
}
