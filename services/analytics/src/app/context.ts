import type { CallContext } from '@kb/rpc';

export const metadataOf = (ctx: CallContext) => ({
  metadata: { org_id: ctx.org_id, actor: `${ctx.principal.type}:${ctx.principal.id}`, request_id: ctx.request_id },
});

export interface Page {
  limit: number;
  offset: number;
}
