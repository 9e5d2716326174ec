import { errors } from '@kb/platform';
import type { CallContext } from '@kb/rpc';

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
