import { errors, type Clock, type IdGenerator } from '@kb/platform';
import type { CallContext } from '@kb/rpc';
import type { Store } from '@kb/store';
import type { CommandBus } from '@kb/eventsourcing';
import type { SecretBox } from './secrets.js';

export const actorOf = (ctx: CallContext) => `${ctx.principal.type}:${ctx.principal.id}`;
export const metadataOf = (ctx: CallContext) => ({ metadata: { org_id: ctx.org_id, actor: actorOf(ctx), request_id: ctx.request_id } });

export interface Page {
  limit: number;
  offset: number;
}

export function pageOf(r: { limit?: number; offset?: number }, fallback = 50): Page {
  const limit = r.limit ?? fallback;
  const offset = r.offset ?? 0;
  if (!Number.isInteger(limit) || limit < 1 || limit > 100)
    throw errors.validation('limit must be 1 to 100', { details: { field: 'limit' } });
  if (!Number.isInteger(offset) || offset < 0) throw errors.validation('offset must be 0 or more', { details: { field: 'offset' } });
  return { limit, offset };
}

export interface AppDeps {
  store: Store;
  commands: CommandBus;
  ids: IdGenerator;
  clock: Clock;
  secrets: SecretBox;
  /** Wakes the delivery worker after a commit that queued deliveries. */
  onDeliveriesQueued: () => void;
}
