import { errors } from '@kb/platform';
import type { CallContext } from '@kb/rpc';
import type { StoreTransaction } from '@kb/store';
import type { EventEnvelope } from '@kb/events';
import { subscriptionDecider, subscriptionStream } from '../domain/aggregates.js';
import { refusedUrlReason, type OutboundPolicy } from '@kb/platform/outbound';
import { enqueueDelivery, webhookBody } from '../deliveries/outbox.js';
import {
  DELIVERIES,
  DESTINATIONS,
  SUBSCRIPTIONS,
  derivedUuid,
  type DeliveryDoc,
  type DestinationDoc,
  type SubscriptionDoc,
} from '../projections/collections.js';
import { metadataOf, type AppDeps, type Page } from './context.js';
import { deliveryView } from './destinations.js';

/**
 * Lifecycle webhook kinds and the facts they come from. prompt.won and
 * prompt.lost are derived by publishing from analytics' answer.collected (a
 * prompt's outcome over its latest answers turned won or lost).
 */
export const lifecycleKinds: Record<string, string> = {
  'content.extracted': 'ingestion.completed',
  'content.failed': 'ingestion.failed',
  'generation_run.completed': 'generation.completed',
  'generation_run.failed': 'generation.failed',
  'draft.sources_stale': 'source.changed',
  'piece.approved': 'content.approved',
  'piece.published': 'content.published',
  'piece.publish_failed': 'content.publish_failed',
  'piece.unpublished': 'content.unpublished',
  'prompt.won': 'prompt.won',
  'prompt.lost': 'prompt.lost',
};
export const EVENT_KINDS = [...new Set(Object.values(lifecycleKinds))];

const samples: Record<string, Record<string, unknown>> = {
  'ingestion.completed': { content_id: '00000000-0000-4000-8000-000000000001', version_id: '00000000-0000-4000-8000-000000000002' },
  'ingestion.failed': { content_id: '00000000-0000-4000-8000-000000000001', reason: 'sample' },
  'generation.completed': { run_id: '00000000-0000-4000-8000-000000000003', draft_id: '00000000-0000-4000-8000-000000000004' },
  'generation.failed': { run_id: '00000000-0000-4000-8000-000000000003', reason: 'sample' },
  'source.changed': { draft_id: '00000000-0000-4000-8000-000000000004', stale_sources: [] },
  'content.approved': { piece_id: '00000000-0000-4000-8000-000000000004', revision: 1 },
  'content.published': {
    piece_id: '00000000-0000-4000-8000-000000000004',
    revision: 1,
    destination_id: '00000000-0000-4000-8000-000000000005',
  },
  'content.publish_failed': {
    piece_id: '00000000-0000-4000-8000-000000000004',
    revision: 1,
    destination_id: '00000000-0000-4000-8000-000000000005',
    error: 'sample',
  },
  'content.unpublished': {
    piece_id: '00000000-0000-4000-8000-000000000004',
    revision: 1,
    destination_id: '00000000-0000-4000-8000-000000000005',
  },
  'prompt.won': { prompt_id: '00000000-0000-4000-8000-000000000006', outcome: 'won', previous: 'lost', model: 'gpt-4o', location: 'us' },
  'prompt.lost': { prompt_id: '00000000-0000-4000-8000-000000000006', outcome: 'lost', previous: 'won', model: 'gpt-4o', location: 'us' },
};

/** What a lifecycle webhook says about a fact: its payload without internal fields. */
function payloadOf(event: EventEnvelope): Record<string, unknown> {
  const { actor: _a, ...data } = event.data;
  return { ...data, event_id: event.id };
}

export function createSubscriptionsService(deps: AppDeps & { policy: OutboundPolicy }) {
  const { store, commands, ids, clock, secrets } = deps;
  const now = () => clock.now().toISOString();

  async function load(orgId: string, id: string): Promise<SubscriptionDoc> {
    const d = await store.get<SubscriptionDoc>(SUBSCRIPTIONS, id);
    if (!d || d.deleted || d.org_id !== orgId) throw errors.notFound('Webhook subscription');
    return d;
  }
  const view = (d: SubscriptionDoc) => ({ subscription_id: d.id, url: d.url, event_kinds: d.event_kinds, created_at: d.created_at });

  return {
    async list(ctx: CallContext) {
      const docs = await store.find<SubscriptionDoc>(SUBSCRIPTIONS, {
        where: { org_id: ctx.org_id, deleted: false },
        sort: [{ field: 'seq', order: 'asc' }],
      });
      return docs.map(view);
    },
    get: async (ctx: CallContext, id: string) => view(await load(ctx.org_id, id)),
    async create(ctx: CallContext, input: { url?: string; event_kinds?: string[]; secret?: string }) {
      const refused = refusedUrlReason(input.url, deps.policy);
      if (refused) throw errors.validation(`url: ${refused}`, { details: { field: 'url' } });
      const kinds = [...new Set(input.event_kinds ?? [])];
      if (kinds.length === 0) throw errors.validation('event_kinds needs at least one kind', { details: { field: 'event_kinds' } });
      const unknown = kinds.filter((k) => !EVENT_KINDS.includes(k));
      if (unknown.length > 0)
        throw errors.validation(`Unknown event kinds: ${unknown.join(', ')}; known: ${EVENT_KINDS.join(', ')}`, {
          details: { field: 'event_kinds' },
        });
      if (typeof input.secret !== 'string' || input.secret.length < 16 || input.secret.length > 1000)
        throw errors.validation('secret must be 16 to 1000 characters (e.g. whsec_<base64>)', { details: { field: 'secret' } });
      const id = ids.uuid();
      await commands.transaction(metadataOf(ctx), (s) =>
        s.execute(subscriptionDecider, subscriptionStream(id), {
          type: 'create',
          subscription_id: id,
          org_id: ctx.org_id,
          url: input.url!,
          event_kinds: kinds,
          secret_ciphertext: secrets.seal(input.secret!),
          at: now(),
        }),
      );
      return view(await load(ctx.org_id, id));
    },
    async remove(ctx: CallContext, id: string) {
      await load(ctx.org_id, id);
      await commands.transaction(metadataOf(ctx), async (s) => {
        await s.execute(subscriptionDecider, subscriptionStream(id), { type: 'delete', org_id: ctx.org_id, at: now() });
        // Its queued deliveries go with it: they would otherwise retry to a URL nobody subscribes any more.
        const pending = await s.tx.find<DeliveryDoc>(DELIVERIES, { where: { org_id: ctx.org_id, target_id: id, status: 'pending' } });
        for (const d of pending) await s.tx.put<DeliveryDoc>(DELIVERIES, { ...d, status: 'cancelled' });
      });
    },
    /** Sends a sample event of the kind asked (default: the subscription's first) through the normal delivery path. */
    async test(ctx: CallContext, id: string, input: { event_kind?: string }) {
      const sub = await load(ctx.org_id, id);
      const kind = input.event_kind ?? sub.event_kinds[0]!;
      if (!EVENT_KINDS.includes(kind)) throw errors.validation(`Unknown event kind ${kind}`, { details: { field: 'event_kind' } });
      const at = now();
      const delivery_id = ids.uuid();
      await store.transaction((tx) =>
        enqueueDelivery(tx, {
          id: delivery_id,
          org_id: ctx.org_id,
          source: 'subscription',
          target_id: sub.id,
          url: sub.url,
          secret_ciphertext: sub.secret_ciphertext,
          event_type: kind,
          payload: webhookBody(kind, at, { ...samples[kind], test: true }),
          created_at: at,
          next_attempt_at: clock.now().getTime(),
        }),
      );
      deps.onDeliveriesQueued();
      return deliveryView((await store.get<DeliveryDoc>(DELIVERIES, delivery_id))!);
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
    /** Queues a delivery again, now, with the same webhook-id (a deduping receiver sees it once). */
    async redeliver(ctx: CallContext, deliveryId: string) {
      await store.transaction(async (tx) => {
        const d = await tx.get<DeliveryDoc>(DELIVERIES, deliveryId);
        if (!d || d.org_id !== ctx.org_id) throw errors.notFound('Delivery');
        if (d.source === 'subscription') {
          const sub = await tx.get<SubscriptionDoc>(SUBSCRIPTIONS, d.target_id);
          if (!sub || sub.deleted) throw errors.notFound('Delivery');
        } else {
          const destination = await tx.get<DestinationDoc>(DESTINATIONS, d.target_id);
          if (!destination || destination.removed) throw errors.notFound('Delivery');
        }
        if (d.status === 'pending') throw errors.conflict('The delivery is still pending', { code: 'delivery_pending' });
        await tx.put<DeliveryDoc>(DELIVERIES, { ...d, status: 'pending', attempts: 0, next_attempt_at: clock.now().getTime() });
      });
      deps.onDeliveriesQueued();
      return deliveryView((await store.get<DeliveryDoc>(DELIVERIES, deliveryId))!);
    },
    /** Consumer side: one delivery per subscription that wants this fact's kind (idempotent per event). */
    async fanOut(tx: StoreTransaction, event: EventEnvelope): Promise<number> {
      const kind = lifecycleKinds[event.type];
      const orgId = event.metadata?.org_id ?? event.data.org_id;
      if (!kind || !orgId) return 0;
      const subs = await tx.find<SubscriptionDoc>(SUBSCRIPTIONS, { where: { org_id: orgId, deleted: false } });
      let n = 0;
      const at = now();
      for (const sub of subs) {
        if (!sub.event_kinds.includes(kind)) continue;
        const queued = await enqueueDelivery(tx, {
          id: derivedUuid(`subscription:${sub.id}:${event.id}`),
          org_id: orgId,
          source: 'subscription',
          target_id: sub.id,
          url: sub.url,
          secret_ciphertext: sub.secret_ciphertext,
          event_type: kind,
          payload: webhookBody(kind, event.recorded_at ?? at, payloadOf(event)),
          created_at: at,
          next_attempt_at: clock.now().getTime(),
        });
        if (queued) n++;
      }
      return n;
    },
  };
}

export type SubscriptionsService = ReturnType<typeof createSubscriptionsService>;
