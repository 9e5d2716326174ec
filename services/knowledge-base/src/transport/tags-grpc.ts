import type { UnaryHandler } from '@kb/rpc';
import type { TagsService } from '../app/tags.js';

const page = (r: { limit?: number; offset?: number }) => ({ limit: r.limit ?? 50, offset: r.offset ?? 0 });

/** Thin mapping from Tags RPCs to the tag use cases. */
export function tagHandlers(tags: TagsService): Record<string, UnaryHandler> {
  return {
    ListTags: (r: { limit?: number; offset?: number }, ctx) => tags.list(ctx, page(r)),
    CreateTag: (r: { name?: string; color?: string }, ctx) =>
      tags.create(ctx, { name: r.name ?? '', ...(r.color !== undefined && { color: r.color }) }),
    UpdateTag: (r: { tag_id: string; name?: string; color?: string; clear_color?: boolean }, ctx) =>
      tags.update(ctx, r.tag_id, {
        ...(r.name !== undefined && { name: r.name }),
        ...(r.clear_color ? { color: null } : r.color !== undefined ? { color: r.color } : {}),
      }),
    DeleteTag: async (r: { tag_id: string }, ctx) => {
      await tags.remove(ctx, r.tag_id);
      return {};
    },
    ResolveTags: async (r: { tags?: string[] }, ctx) => ({ tags: await tags.resolve(ctx, r.tags ?? []) }),
    ListTagRules: (r: { limit?: number; offset?: number }, ctx) => tags.listRules(ctx, page(r)),
    CreateTagRule: (r: { tag?: string; folder_id?: string; format?: string; source_kind?: 'raw' | 'file' | 'url' }, ctx) =>
      tags.createRule(ctx, {
        tag: r.tag ?? '',
        ...(r.folder_id !== undefined && { folder_id: r.folder_id }),
        ...(r.format !== undefined && { format: r.format }),
        ...(r.source_kind !== undefined && { source_kind: r.source_kind }),
      }),
    DeleteTagRule: async (r: { rule_id: string }, ctx) => {
      await tags.removeRule(ctx, r.rule_id);
      return {};
    },
  };
}
