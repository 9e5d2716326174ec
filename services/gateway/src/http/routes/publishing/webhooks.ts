import { Type } from '@sinclair/typebox';
import { Timestamp, Uuid, errorResponses, OrgPagination } from '../../schemas.js';
import { manage, Open, type App, type PublishingProxies } from './support.js';

/** Lifecycle webhook subscriptions: create, test, delivery logs, redelivery. */

export const Subscription = Open(
  { subscription_id: Uuid, url: Type.String(), event_kinds: Type.Array(Type.String()), created_at: Timestamp },
  'WebhookSubscription',
);

const EventKind = Type.Union(
  [
    'ingestion.completed',
    'ingestion.failed',
    'generation.completed',
    'generation.failed',
    'content.approved',
    'content.published',
    'content.publish_failed',
    'content.unpublished',
    'prompt.won',
    'prompt.lost',
    'source.changed',
  ].map((k) => Type.Literal(k)),
);
const SubscriptionParams = Type.Object({ subscription_id: Uuid });

export function webhookRoutes(app: App, { hook }: PublishingProxies) {
  const dtags = ['Destinations'];
  app.get(
    '/org/webhooks',
    {
      config: manage,
      schema: {
        tags: dtags,
        summary: 'List lifecycle webhook subscriptions',
        response: { 200: Type.Array(Type.Ref('WebhookSubscription')), ...errorResponses(401, 403) },
      },
    },
    hook('ListSubscriptions'),
  );
  app.post(
    '/org/webhooks',
    {
      config: manage,
      schema: {
        tags: dtags,
        summary: 'Subscribe to lifecycle events',
        description:
          'Signed like the webhook destination (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature v1,<base64 HMAC-SHA256 of "id.timestamp.body">; a whsec_<base64> secret signs with its decoded bytes). Retries with exponential backoff; every attempt is logged.',
        body: Type.Object(
          {
            url: Type.String({ minLength: 1, maxLength: 2048 }),
            event_kinds: Type.Array(EventKind, { minItems: 1, maxItems: 20 }),
            secret: Type.String({ minLength: 16, maxLength: 1000, writeOnly: true }),
          },
          { additionalProperties: false },
        ),
        response: { 201: Type.Ref('WebhookSubscription'), ...errorResponses(400, 401, 403) },
      },
    },
    hook('CreateSubscription', { status: 201 }),
  );
  app.get(
    '/org/webhooks/:subscription_id',
    {
      config: manage,
      schema: {
        tags: dtags,
        summary: 'Get a lifecycle webhook subscription',
        params: SubscriptionParams,
        response: { 200: Type.Ref('WebhookSubscription'), ...errorResponses(400, 401, 403, 404) },
      },
    },
    hook('GetSubscription'),
  );
  app.delete(
    '/org/webhooks/:subscription_id',
    {
      config: manage,
      schema: {
        tags: dtags,
        summary: 'Delete a lifecycle webhook subscription',
        params: SubscriptionParams,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    hook('DeleteSubscription', { status: 204 }),
  );
  app.post(
    '/org/webhooks/:subscription_id/test',
    {
      config: manage,
      schema: {
        tags: dtags,
        summary: 'Send a sample event',
        description: 'Queues a sample event (data.test is true) through the normal signed, retried delivery; answers the delivery.',
        params: SubscriptionParams,
        body: Type.Optional(Type.Object({ event_kind: Type.Optional(EventKind) }, { additionalProperties: false })),
        response: { 202: Type.Ref('WebhookDelivery'), ...errorResponses(400, 401, 403, 404) },
      },
    },
    hook('TestSubscription', { status: 202 }),
  );
  app.get(
    '/org/webhooks/:subscription_id/deliveries',
    {
      config: manage,
      schema: {
        tags: dtags,
        summary: 'Delivery log of a subscription',
        params: SubscriptionParams,
        querystring: OrgPagination,
        response: { 200: Type.Array(Type.Ref('WebhookDelivery')), ...errorResponses(400, 401, 403, 404) },
      },
    },
    hook('ListSubscriptionDeliveries', { list: true }),
  );
  app.post(
    '/org/webhook-deliveries/:delivery_id/redeliver',
    {
      config: manage,
      schema: {
        tags: dtags,
        summary: 'Redeliver a webhook',
        description: 'Queues a delivered or failed delivery again now, with the same webhook-id. 409 while it is still pending.',
        params: Type.Object({ delivery_id: Uuid }),
        response: { 202: Type.Ref('WebhookDelivery'), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    hook('Redeliver', { status: 202 }),
  );
}
