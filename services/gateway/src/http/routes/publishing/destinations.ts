import { Type } from '@sinclair/typebox';
import { NullableTimestamp, Timestamp, Uuid, errorResponses, OrgPagination } from '../../schemas.js';
import { manage, Open, read, type App, type PublishingProxies } from './support.js';

/** Destinations (hosted, webhook, WordPress, Ghost): create, switch, remove with a choice for live content, delivery logs. */

export const Destination = Open(
  {
    destination_id: Uuid,
    type: Type.Union([Type.Literal('hosted'), Type.Literal('webhook'), Type.Literal('wordpress'), Type.Literal('ghost')]),
    name: Type.String(),
    scope: Type.Union([Type.Literal('shared'), Type.Literal('organization')]),
    config: Type.Record(Type.String(), Type.Unknown()),
    has_secret: Type.Boolean({ description: 'secrets are stored encrypted and never returned' }),
    enabled: Type.Boolean(),
    is_default: Type.Boolean(),
    created_at: Timestamp,
  },
  'Destination',
);
export const Delivery = Open(
  {
    delivery_id: Uuid,
    source: Type.String(),
    target_id: Uuid,
    event_type: Type.String(),
    url: Type.String(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed'), Type.Literal('cancelled')]),
    attempts: Type.Integer(),
    next_attempt_at: NullableTimestamp,
    created_at: Timestamp,
    delivered_at: NullableTimestamp,
    log: Type.Array(
      Open({
        attempt: Type.Integer(),
        at: Timestamp,
        status_code: Type.Union([Type.Integer(), Type.Null()]),
        error: Type.Union([Type.String(), Type.Null()]),
      }),
    ),
  },
  'WebhookDelivery',
);
export const DestinationParams = Type.Object({ destination_id: Uuid });

export function destinationRoutes(app: App, { dest }: PublishingProxies) {
  const dtags = ['Destinations'];
  app.get(
    '/org/destinations',
    {
      config: read,
      schema: {
        tags: dtags,
        summary: 'List destinations',
        description:
          'Shared destinations (with whether they are on for this organization) and the organization\u2019s own. Secrets are never returned.',
        response: { 200: Type.Array(Type.Ref('Destination')), ...errorResponses(401, 403) },
      },
    },
    dest('ListDestinations'),
  );
  app.post(
    '/org/destinations',
    {
      config: manage,
      schema: {
        tags: dtags,
        summary: 'Add a destination',
        description:
          'type webhook: config { url }, secret (signs Standard Webhooks signatures). type wordpress: config { base_url, username }, secret (an application password). type ghost: config { admin_url }, secret (an Admin API key <id>:<hex secret>). Unknown config keys are a 400. The hosted destination is built in and shared.',
        body: Type.Object(
          {
            type: Type.Union([Type.Literal('webhook'), Type.Literal('wordpress'), Type.Literal('ghost')]),
            name: Type.String({ minLength: 1, maxLength: 200 }),
            config: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
            secret: Type.Optional(Type.String({ minLength: 8, maxLength: 1000, writeOnly: true })),
          },
          { additionalProperties: false },
        ),
        response: { 201: Type.Ref('Destination'), ...errorResponses(400, 401, 403) },
      },
    },
    dest('CreateDestination', { status: 201 }),
  );
  app.get(
    '/org/destinations/:destination_id',
    {
      config: read,
      schema: {
        tags: dtags,
        summary: 'Get a destination',
        params: DestinationParams,
        response: { 200: Type.Ref('Destination'), ...errorResponses(400, 401, 403, 404) },
      },
    },
    dest('GetDestination'),
  );
  app.patch(
    '/org/destinations/:destination_id',
    {
      config: manage,
      schema: {
        tags: dtags,
        summary: 'Switch a shared destination on or off',
        description: 'For this organization only; 409 for the organization\u2019s own destinations (remove them instead).',
        params: DestinationParams,
        body: Type.Object({ enabled: Type.Boolean() }, { additionalProperties: false }),
        response: { 200: Type.Ref('Destination'), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    dest('SetDestinationEnabled'),
  );
  app.delete(
    '/org/destinations/:destination_id',
    {
      config: manage,
      schema: {
        tags: dtags,
        summary: 'Remove a destination',
        description:
          'on_live_content is required: leave (live pieces stay), unpublish or delete (done to every piece live there). A shared destination is switched off for the organization. 502 when the destination fails a take-down (nothing is removed).',
        params: DestinationParams,
        querystring: Type.Object(
          {
            on_live_content: Type.Optional(
              Type.Union([Type.Literal('leave'), Type.Literal('unpublish'), Type.Literal('delete')], {
                description: 'required; missing is a 400 (after a 404 for an unknown destination)',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404, 502) },
      },
    },
    dest('RemoveDestination', { status: 204 }),
  );
  app.get(
    '/org/destinations/:destination_id/deliveries',
    {
      config: manage,
      schema: {
        tags: dtags,
        summary: 'Delivery log of a webhook destination',
        params: DestinationParams,
        querystring: OrgPagination,
        response: { 200: Type.Array(Type.Ref('WebhookDelivery')), ...errorResponses(400, 401, 403, 404) },
      },
    },
    dest('ListDestinationDeliveries', { list: true }),
  );
}
