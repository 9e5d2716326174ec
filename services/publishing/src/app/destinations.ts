import { errors } from '@kb/platform';
import type { CallContext } from '@kb/rpc';
import type { StoreTransaction } from '@kb/store';
import { destinationDecider, destinationStream, pieceDecider, pieceStream, toggleDecider, toggleStream } from '../domain/aggregates.js';
import type { DestinationAdapter, ResolvedDestination } from '../destinations/port.js';
import {
  DELIVERIES,
  DESTINATIONS,
  DESTINATION_TOGGLES,
  GLOBAL_ORG,
  derivedUuid,
  type DeliveryDoc,
  type DestinationDoc,
} from '../projections/collections.js';
import { actorOf, metadataOf, type AppDeps, type Page } from './context.js';

export const SHARED_HOSTED_ID = derivedUuid('publishing:shared:hosted');

export interface DestinationInput {
  type: string;
  name: string;
  config?: Record<string, unknown>;
  secret?: string;
}

type Reader = Pick<StoreTransaction, 'get' | 'find'>;

/** Destinations: shared ones seeded globally and switched per organization, and the organization's own. */
export function createDestinationsService(deps: AppDeps & { adapters: Record<string, DestinationAdapter> }) {
  const { store, commands, ids, clock, secrets, adapters } = deps;
  const now = () => clock.now().toISOString();

  async function enabledFor(orgId: string, d: DestinationDoc, reader: Reader = store): Promise<boolean> {
    if (d.org_id !== null) return true;
    const toggle = await reader.get<{ id: string; enabled: boolean }>(DESTINATION_TOGGLES, `${orgId}:${d.id}`);
    return toggle?.enabled ?? d.is_default;
  }

  async function load(orgId: string, id: string, reader: Reader = store): Promise<DestinationDoc> {
    const d = await reader.get<DestinationDoc>(DESTINATIONS, id);
    if (!d || d.removed || (d.org_id !== null && d.org_id !== orgId)) throw errors.notFound('Destination');
    return d;
  }

  async function view(orgId: string, d: DestinationDoc, reader: Reader = store) {
    return {
      destination_id: d.id,
      type: d.type,
      name: d.name,
      scope: d.org_id === null ? 'shared' : 'organization',
      config: d.config,
      has_secret: d.secret_ciphertext !== undefined,
      enabled: await enabledFor(orgId, d, reader),
      is_default: d.org_id === null && d.is_default,
      created_at: d.created_at,
    };
  }

  const resolve = (d: DestinationDoc): ResolvedDestination => ({
    id: d.id,
    type: d.type,
    config: d.config,
    ...(d.secret_ciphertext !== undefined && { secret: secrets.open(d.secret_ciphertext) }),
  });

  return {
    load,
    enabledFor,
    resolve,
    /** The built-in hosted destination, shared and in the default set (idempotent; run at start). */
    async seedShared() {
      if (await store.get(DESTINATIONS, SHARED_HOSTED_ID)) return;
      await commands.transaction({ metadata: { org_id: GLOBAL_ORG, actor: 'system:publishing' } }, async (s) => {
        const { version } = await s.load(destinationDecider, destinationStream(SHARED_HOSTED_ID));
        if (version > 0) return;
        await s.execute(destinationDecider, destinationStream(SHARED_HOSTED_ID), {
          type: 'create',
          data: {
            destination_id: SHARED_HOSTED_ID,
            org_id: null,
            type: 'hosted',
            name: 'Hosted pages',
            config: {},
            is_default: true,
            at: now(),
          },
        });
      });
    },
    async list(ctx: CallContext) {
      const [shared, own] = await Promise.all([
        store.find<DestinationDoc>(DESTINATIONS, { where: { org_id: null, removed: false }, sort: [{ field: 'seq', order: 'asc' }] }),
        store.find<DestinationDoc>(DESTINATIONS, { where: { org_id: ctx.org_id, removed: false }, sort: [{ field: 'seq', order: 'asc' }] }),
      ]);
      return Promise.all([...shared, ...own].map((d) => view(ctx.org_id, d)));
    },
    get: async (ctx: CallContext, id: string) => view(ctx.org_id, await load(ctx.org_id, id)),
    async create(ctx: CallContext, input: DestinationInput) {
      const adapter = adapters[input.type];
      if (!adapter || input.type === 'hosted')
        throw errors.validation(
          input.type === 'hosted'
            ? 'The hosted destination is built in and shared: enable it instead of creating one'
            : `type must be one of ${Object.keys(adapters)
                .filter((t) => t !== 'hosted')
                .join(', ')}`,
          { details: { field: 'type' } },
        );
      const name = (input.name ?? '').trim();
      if (name.length < 1 || name.length > 200) throw errors.validation('name must be 1 to 200 characters', { details: { field: 'name' } });
      const config = adapter.validateConfig(input.config ?? {});
      if (adapter.secret === 'required' && (typeof input.secret !== 'string' || input.secret.length < 8 || input.secret.length > 1000))
        throw errors.validation(`a ${input.type} destination needs a secret of 8 to 1000 characters`, { details: { field: 'secret' } });
      if (adapter.secret === 'none' && input.secret !== undefined)
        throw errors.validation(`a ${input.type} destination takes no secret`, { details: { field: 'secret' } });
      const id = ids.uuid();
      await commands.transaction(metadataOf(ctx), (s) =>
        s.execute(destinationDecider, destinationStream(id), {
          type: 'create',
          data: {
            destination_id: id,
            org_id: ctx.org_id,
            type: adapter.type,
            name,
            config,
            ...(input.secret !== undefined && { secret_ciphertext: secrets.seal(input.secret) }),
            is_default: false,
            at: now(),
          },
        }),
      );
      return view(ctx.org_id, await load(ctx.org_id, id));
    },
    /** Switches a shared destination on or off for the caller's organization. */
    async setEnabled(ctx: CallContext, id: string, enabled: boolean) {
      const d = await load(ctx.org_id, id);
      if (d.org_id !== null)
        throw errors.conflict('Only shared destinations are switched on and off; remove an own destination instead', {
          code: 'not_shared',
        });
      if ((await enabledFor(ctx.org_id, d)) !== enabled)
        await commands.transaction(metadataOf(ctx), (s) =>
          s.execute(toggleDecider, toggleStream(ctx.org_id, id), {
            destination_id: id,
            org_id: ctx.org_id,
            enabled,
            actor: actorOf(ctx),
            at: now(),
          }),
        );
      return view(ctx.org_id, d);
    },
    /**
     * Removal in the transaction of the take-downs: an own destination is
     * removed, a shared one switched off. Its pending deliveries are cancelled
     * (they would otherwise retry to a destination nobody keeps), except those
     * the take-downs just queued (`keep`): they carry the caller's choice.
     */
    async removeIn(
      s: Parameters<Parameters<AppDeps['commands']['transaction']>[1]>[0],
      ctx: CallContext,
      d: DestinationDoc,
      onLive: 'leave' | 'unpublish' | 'delete',
      keep: readonly string[] = [],
    ) {
      const pending = await s.tx.find<DeliveryDoc>(DELIVERIES, { where: { org_id: ctx.org_id, target_id: d.id, status: 'pending' } });
      for (const delivery of pending) {
        if (keep.includes(delivery.id)) continue;
        await s.tx.put<DeliveryDoc>(DELIVERIES, { ...delivery, status: 'cancelled' });
        // A publish waiting for the receiver's acknowledgement will not get it: the piece records the failure.
        const p = delivery.publication;
        if (p)
          await s.execute(pieceDecider, pieceStream(p.piece_id), {
            type: 'record_failure',
            delivery_id: delivery.id,
            destination_id: p.destination_id,
            error: 'the destination was removed before the receiver acknowledged the delivery',
            piece_id: p.piece_id,
            org_id: ctx.org_id,
            revision: p.revision,
            actor: actorOf(ctx),
            at: now(),
          });
      }
      if (d.org_id === null)
        await s.execute(toggleDecider, toggleStream(ctx.org_id, d.id), {
          destination_id: d.id,
          org_id: ctx.org_id,
          enabled: false,
          actor: actorOf(ctx),
          at: now(),
        });
      else
        await s.execute(destinationDecider, destinationStream(d.id), {
          type: 'remove',
          org_id: ctx.org_id,
          on_live_content: onLive,
          actor: actorOf(ctx),
          at: now(),
        });
    },
    /** The set publishing targets when no destination is named: the enabled shared destinations of the default set. */
    async defaultSet(orgId: string, reader: Reader = store): Promise<DestinationDoc[]> {
      const shared = await reader.find<DestinationDoc>(DESTINATIONS, {
        where: { org_id: null, removed: false },
        sort: [{ field: 'seq', order: 'asc' }],
      });
      const out: DestinationDoc[] = [];
      for (const d of shared) if (d.is_default && (await enabledFor(orgId, d, reader))) out.push(d);
      return out;
    },
    async deliveries(ctx: CallContext, id: string, page: Page) {
      await load(ctx.org_id, id);
      const where = { org_id: ctx.org_id, target_id: id };
      const [items, total_count] = await Promise.all([
        store.find<DeliveryDoc>(DELIVERIES, { where, sort: [{ field: 'created_at', order: 'desc' }], ...page }),
        store.count(DELIVERIES, where),
      ]);
      return { items: items.map(deliveryView), total_count };
    },
  };
}

export function deliveryView(d: DeliveryDoc) {
  return {
    delivery_id: d.id,
    source: d.source,
    target_id: d.target_id,
    event_type: d.event_type,
    url: d.url,
    status: d.status,
    attempts: d.attempts,
    next_attempt_at: d.status === 'pending' ? new Date(d.next_attempt_at).toISOString() : null,
    created_at: d.created_at,
    delivered_at: d.delivered_at ?? null,
    log: d.log,
  };
}

export type DestinationsService = ReturnType<typeof createDestinationsService>;
