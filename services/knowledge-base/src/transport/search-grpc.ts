import type { UnaryHandler } from '@kb/rpc';
import type { SearchService } from '../app/search.js';
import type { SearchReadiness } from '../app/search-indexing.js';

interface SearchRequestMessage {
  query?: string;
  max_results?: number;
  org_id?: string;
  category_id?: string;
  topic_id?: string;
  tags?: string[];
  filter_tags?: string[];
  folder_ids?: string[];
  surface?: string;
}

/** Thin mapping from Search RPCs to the use cases. */
export function searchHandlers(
  search: SearchService,
  readiness: (orgId: string, contentId: string) => Promise<SearchReadiness>,
): Record<string, UnaryHandler> {
  return {
    Search: (r: SearchRequestMessage, ctx) =>
      search.search(
        ctx,
        {
          query: r.query ?? '',
          max_results: r.max_results,
          org_id: r.org_id,
          category_id: r.category_id,
          topic_id: r.topic_id,
          tags: r.tags ?? [],
          filter_tags: r.filter_tags ?? [],
          folder_ids: r.folder_ids ?? [],
        },
        r.surface === 'org' ? 'org' : 'sdk',
      ),
    Retrieve: (
      r: { query?: string; max_results?: number; tags?: string[]; folder_ids?: string[]; category_id?: string; topic_id?: string },
      ctx,
    ) =>
      search.retrieve(ctx, {
        query: r.query ?? '',
        max_results: r.max_results,
        category_id: r.category_id,
        topic_id: r.topic_id,
        tags: r.tags ?? [],
        folder_ids: r.folder_ids ?? [],
      }),
    ListSearchQueries: (r: { limit?: number; offset?: number }, ctx) =>
      search.listQueries(ctx, { limit: r.limit ?? 10, offset: r.offset ?? 0 }),
    GetSearchQuery: (r: { query_id: string }, ctx) => search.getQuery(ctx, r.query_id),
    GetSearchReadiness: (r: { content_id?: string }, ctx) => readiness(ctx.org_id, r.content_id ?? ''),
  };
}
