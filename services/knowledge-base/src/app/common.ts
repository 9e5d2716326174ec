import { errors } from '@kb/platform';
import type { CallContext } from '@kb/rpc';

export interface Page {
  limit: number;
  offset: number;
}

/** Event metadata for a command run on behalf of a caller. */
export const metadataOf = (ctx: CallContext) => ({
  metadata: { org_id: ctx.org_id, actor: `${ctx.principal.type}:${ctx.principal.id}`, request_id: ctx.request_id },
});

/** limit 1 to 100, offset at least 0 (gRPC callers are checked too, not only the HTTP edge). */
export function checkPage(page: Page): Page {
  if (!Number.isInteger(page.limit) || page.limit < 1 || page.limit > 100) {
    throw errors.validation('limit must be 1 to 100', { details: { field: 'limit' } });
  }
  if (!Number.isInteger(page.offset) || page.offset < 0)
    throw errors.validation('offset must be at least 0', { details: { field: 'offset' } });
  return page;
}
