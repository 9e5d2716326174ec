import { errors } from '@kb/platform';
import type { CallContext } from '@kb/rpc';
import type { DocLike, Store, Where } from '@kb/store';

export const metadataOf = (ctx: CallContext) => ({
  metadata: { org_id: ctx.org_id, actor: `${ctx.principal.type}:${ctx.principal.id}`, request_id: ctx.request_id },
});

export const actorOf = (ctx: CallContext) => `${ctx.principal.type}:${ctx.principal.id}`;

export interface Page {
  limit: number;
  offset: number;
}

export function checkPage(page: { limit?: number | undefined; offset?: number | undefined }, max = 100): Page {
  const limit = page.limit ?? 50;
  const offset = page.offset ?? 0;
  if (!Number.isInteger(limit) || limit < 1 || limit > max)
    throw errors.validation(`limit must be 1 to ${max}`, { details: { field: 'limit' } });
  if (!Number.isInteger(offset) || offset < 0) throw errors.validation('offset must be 0 or more', { details: { field: 'offset' } });
  return { limit, offset };
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: unknown): s is string => typeof s === 'string' && UUID_RE.test(s);

/**
 * A page of a list with its total. For a folder-scoped caller (`visible` set)
 * the rule is applied in memory over the organization's documents, since the
 * store cannot express it; so the page and the total count only what it may see.
 */
export async function visiblePage<T extends DocLike>(
  store: Store,
  collection: string,
  where: Where,
  page: Page,
  visible: ((doc: T) => boolean) | null,
): Promise<{ items: T[]; total_count: number }> {
  const sort = [{ field: 'seq', order: 'desc' as const }];
  if (!visible) {
    const [items, total_count] = await Promise.all([store.find<T>(collection, { where, sort, ...page }), store.count(collection, where)]);
    return { items, total_count };
  }
  const all = (await store.find<T>(collection, { where, sort })).filter(visible);
  return { items: all.slice(page.offset, page.offset + page.limit), total_count: all.length };
}
