import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CallContext, RpcClient } from '@kb/rpc';
import { NullableTimestamp, Timestamp, Uuid, errorResponses, OrgPagination } from '../schemas.js';
import { callerOf } from '../auth-hook.js';
import type { RouteAuth } from '../route-auth.js';

/** An object with the named fields documented; fields added later pass through. */
const Open = (props: Record<string, TSchema>, id?: string) => Type.Object(props, { additionalProperties: true, ...(id && { $id: id }) });

const Sentence = Open({ section_id: Type.String(), index: Type.Integer(), text: Type.String(), verdict: Type.String() });
const Publication = Open({
  destination_id: Uuid,
  type: Type.String(),
  status: Type.Union(
    ['pending', 'live', 'failed', 'unpublished', 'deleted'].map((s) => Type.Literal(s)),
    {
      description:
        'pending: handed to a destination that has not acknowledged it yet (a webhook, retried); live: acknowledged; failed: its delivery ran out of attempts',
    },
  ),
  revision: Type.Integer({ description: 'the revision the destination shows (pending: the one on its way)' }),
  pending_revision: Type.Optional(Type.Integer({ description: 'live at `revision`, with this newer revision on its way' })),
  error: Type.Optional(Type.String({ description: 'the last delivery failure' })),
  url: Type.Union([Type.String(), Type.Null()]),
  published_at: Timestamp,
  updated_at: Timestamp,
});
const HistoryEntry = Open({
  event: Type.String(),
  actor: Type.String(),
  at: Timestamp,
  revision: Type.Integer(),
  comment: Type.Optional(Type.String()),
  destination_id: Type.Optional(Uuid),
  error: Type.Optional(Type.String()),
});
const PieceStatus = Type.Union(
  ['draft', 'in_review', 'approved', 'rejected', 'publishing', 'published', 'publish_failed', 'unpublished'].map((s) => Type.Literal(s)),
  {
    description:
      'the review (draft, in_review, approved, rejected) or where the piece stands on destinations: publishing (a destination has not acknowledged it yet), published (live on at least one), publish_failed (its deliveries failed and it is live nowhere), unpublished',
  },
);
const Piece = Open(
  {
    piece_id: Uuid,
    revision: Type.Integer(),
    status: PieceStatus,
    title: Type.String(),
    description: Type.String(),
    content_kind: Type.String(),
    format: Type.String(),
    body: Type.String(),
    sections: Type.Array(Type.Unknown()),
    verification: Type.String(),
    target_prompt_ids: Type.Array(Uuid),
    source_folder_ids: Type.Array(Uuid),
    stale_sources: Type.Array(Type.Unknown()),
    publishable: Type.Boolean({ description: 'every factual sentence supported and no stale source: the publish gate' }),
    unsupported_sentences: Type.Array(Sentence),
    reviewer: Type.Union([Type.String(), Type.Null()]),
    review_comment: Type.Union([Type.String(), Type.Null()]),
    published_at: NullableTimestamp,
    publications: Type.Array(Publication),
    history: Type.Array(HistoryEntry),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  'Piece',
);
const PublishResult = Open({
  destination_id: Uuid,
  type: Type.String(),
  result: Type.Union(
    ['published', 'pending', 'unchanged', 'failed', 'would_publish', 'would_fail'].map((r) => Type.Literal(r)),
    {
      description:
        'published: live (the destination acknowledged it); pending: a webhook destination has not acknowledged it yet (its delivery is retried; the piece goes live when it succeeds, or publish_failed when it runs out of attempts); failed: not published there. would_publish and would_fail: a dry run (would_fail: the destination configuration is not usable, see error)',
    },
  ),
  error: Type.Optional(Type.String({ description: 'why the destination failed, or the last attempt of a pending delivery failed' })),
  delivery_id: Type.Optional(Uuid),
  attempts: Type.Optional(Type.Integer({ description: 'delivery attempts made so far (webhook destinations)' })),
  next_attempt_at: Type.Optional(Type.String({ format: 'date-time', description: 'when a pending delivery is tried again' })),
  name: Type.Optional(Type.String({ description: 'dry run: the destination name' })),
  slug: Type.Optional(Type.String({ description: 'dry run: the page slug it would have' })),
  url: Type.Optional(
    Type.Union([Type.String(), Type.Null()], { description: 'dry run: the URL it would have, when known before publishing' }),
  ),
});
const QueueItem = Open({
  piece_id: Uuid,
  title: Type.String(),
  status: PieceStatus,
  waiting_for: Type.String(),
  waiting_since: Timestamp,
  revision: Type.Integer(),
  publishable: Type.Boolean(),
});
const Figures = Open({
  answer_count: Type.Integer(),
  mention_rate: Type.Union([Type.Number(), Type.Null()]),
  citation_rate: Type.Union([Type.Number(), Type.Null()]),
  share_of_voice: Type.Union([Type.Number(), Type.Null()]),
  win_rate: Type.Union([Type.Number(), Type.Null()]),
  loss_rate: Type.Union([Type.Number(), Type.Null()]),
});
const Window = Type.Object({ from: Type.String(), to: Type.String() });
const Outcome = Open(
  {
    piece_id: Uuid,
    title: Type.String(),
    published_at: Timestamp,
    window_days: Type.Integer(),
    before_window: Window,
    after_window: Window,
    prompts: Type.Array(
      Open({
        prompt_id: Uuid,
        before: Figures,
        after: Figures,
        movement: Type.Union([Type.Literal('won'), Type.Literal('lost'), Type.Literal('unchanged'), Type.Literal('no_data')]),
      }),
    ),
    moved: Type.Boolean(),
  },
  'PieceOutcome',
);
const Destination = Open(
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
const Delivery = Open(
  {
    delivery_id: Uuid,
    source: Type.String(),
    target_id: Uuid,
    event_type: Type.String(),
    url: Type.String(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
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
const Domain = Open(
  {
    domain_id: Uuid,
    hostname: Type.String(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('verified')]),
    verification: Type.Object({ type: Type.Literal('TXT'), name: Type.String(), value: Type.String() }),
    created_at: Timestamp,
    verified_at: NullableTimestamp,
  },
  'CustomDomain',
);
const Subscription = Open(
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

const read: { auth: RouteAuth } = { auth: { credential: 'any', permission: 'read:kb' } };
const submitAuth: { auth: RouteAuth } = { auth: { credential: 'any', permission: 'generate:content' } };
const publish: { auth: RouteAuth } = { auth: { credential: 'any', permission: 'publish:content' } };
const analytics: { auth: RouteAuth } = { auth: { credential: 'any', permission: 'read:analytics' } };
const manage: { auth: RouteAuth } = { auth: { credential: 'any', permission: 'manage:destinations' } };

const PieceParams = Type.Object({ piece_id: Uuid });
const DestinationParams = Type.Object({ destination_id: Uuid });
const DomainParams = Type.Object({ domain_id: Uuid });
const SubscriptionParams = Type.Object({ subscription_id: Uuid });
const Comment = Type.String({ minLength: 1, maxLength: 5000 });
const DestinationIds = Type.Array(Uuid, {
  maxItems: 50,
  description: 'destinations to publish to; omitted or empty: the default shared set',
});

interface Call {
  client: RpcClient;
  method: string;
  status?: number;
  /** Lists: the response is { items, total_count }; items are sent, the total goes in X-Total-Count. */
  list?: boolean;
}

/** A route that sends params, query and body merged as one JSON document and answers with the service's JSON. */
function proxy(c: Call, onWrite?: () => void) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const input = { ...(req.query as object), ...(req.body as object), ...(req.params as object) };
    let res: { json: string };
    try {
      res = await c.client.call<{ json: string }>(c.method, { json: JSON.stringify(input) }, callerOf(req));
    } finally {
      // A write that failed may still have changed something (a 502 after other destinations succeeded).
      // A dry run changes nothing.
      if (req.method !== 'GET' && (req.body as { dry_run?: unknown } | undefined)?.dry_run !== true) onWrite?.();
    }
    const out = JSON.parse(res.json) as unknown;
    if (c.status === 204) return reply.status(204).send(null);
    if (c.list) {
      const { items, total_count } = out as { items: unknown[]; total_count: number };
      void reply.header('x-total-count', String(total_count));
      return reply.status(c.status ?? 200).send(items);
    }
    return reply.status(c.status ?? 200).send(out);
  };
}

export interface PublishingClients {
  content: RpcClient;
  destinations: RpcClient;
  webhooks: RpcClient;
}

/** Content (review, publish, outcomes) and Destinations (destinations, custom domains, lifecycle webhooks). */
export function publishingRoutes(clients: PublishingClients, onSiteChange: () => void = () => undefined): FastifyPluginAsyncTypebox {
  const content = (method: string, extra: Partial<Call> = {}) => proxy({ client: clients.content, method, ...extra }, onSiteChange);
  const dest = (method: string, extra: Partial<Call> = {}) => proxy({ client: clients.destinations, method, ...extra }, onSiteChange);
  const hook = (method: string, extra: Partial<Call> = {}) => proxy({ client: clients.webhooks, method, ...extra });
  const tags = ['Content'];
  const dtags = ['Destinations'];

  return async (app) => {
    for (const s of [Piece, Outcome, Destination, Delivery, Domain, Subscription]) app.addSchema(s);

    // ---- Content ----
    app.get(
      '/org/content/pieces',
      {
        config: read,
        schema: {
          tags,
          summary: 'List generated pieces',
          description: 'Drafts from generation with their review state, newest first; filter by status. Total in X-Total-Count.',
          querystring: Type.Object({ ...OrgPagination.properties, status: Type.Optional(PieceStatus) }, { additionalProperties: false }),
          response: { 200: Type.Array(Type.Ref('Piece')), ...errorResponses(400, 401, 403) },
        },
      },
      content('ListPieces', { list: true }),
    );
    app.get(
      '/org/content/review-queue',
      {
        config: read,
        schema: {
          tags,
          summary: 'Review queue',
          description:
            'What waits for whom: pieces in review (for their reviewer or anyone) and approved pieces waiting for a publisher, oldest first.',
          querystring: OrgPagination,
          response: { 200: Type.Array(QueueItem), ...errorResponses(400, 401, 403) },
        },
      },
      content('ReviewQueue', { list: true }),
    );
    app.get(
      '/org/content/pieces/:piece_id',
      {
        config: read,
        schema: {
          tags,
          summary: 'Get a piece',
          params: PieceParams,
          response: { 200: Type.Ref('Piece'), ...errorResponses(400, 401, 403, 404) },
        },
      },
      content('GetPiece'),
    );
    app.post(
      '/org/content/pieces/:piece_id/submit',
      {
        config: submitAuth,
        schema: {
          tags,
          summary: 'Send a piece to review',
          description: 'Optionally names the reviewer it waits for. 409 when it is already in review or published.',
          params: PieceParams,
          body: Type.Optional(
            Type.Object(
              { reviewer: Type.Optional(Type.String({ minLength: 1, maxLength: 320 })), comment: Type.Optional(Comment) },
              { additionalProperties: false },
            ),
          ),
          response: { 200: Type.Ref('Piece'), ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      content('SubmitPiece'),
    );
    app.post(
      '/org/content/pieces/:piece_id/approve',
      {
        config: publish,
        schema: {
          tags,
          summary: 'Approve a piece',
          description: 'The publish gate: 422 naming the sentences when a factual sentence is not supported or a cited source is stale.',
          params: PieceParams,
          body: Type.Optional(Type.Object({ comment: Type.Optional(Comment) }, { additionalProperties: false })),
          response: { 200: Type.Ref('Piece'), ...errorResponses(400, 401, 403, 404, 409, 422) },
        },
      },
      content('ApprovePiece'),
    );
    app.post(
      '/org/content/pieces/:piece_id/reject',
      {
        config: publish,
        schema: {
          tags,
          summary: 'Reject a piece',
          description: 'Needs a comment saying why.',
          params: PieceParams,
          body: Type.Object({ comment: Comment }, { additionalProperties: false }),
          response: { 200: Type.Ref('Piece'), ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      content('RejectPiece'),
    );
    app.post(
      '/org/content/pieces/:piece_id/publish',
      {
        config: publish,
        schema: {
          tags,
          summary: 'Publish a piece',
          description:
            'Publishes the approved revision of a piece to the named destinations, or to the default shared set. 409 not_approved when no revision was approved, revision_not_approved when the latest revision is not the approved one (submit it for review). The same revision on the same destination is left unchanged (idempotent). ' +
            'A webhook destination is live only once its receiver acknowledges the delivery: the call waits a few seconds for the first attempt, and answers pending for a receiver that has not answered yet; the delivery is retried, and the piece becomes published, or publish_failed with a content.publish_failed webhook when it runs out of attempts. ' +
            "422: the publish gate failed, or no publisher (no destination named and no default set). 502: a destination failed, or a webhook destination's first attempt failed (it is retried); details.results has every destination's result, the others committed. " +
            '403: a folder-scoped key and content drawn from outside its folders. ' +
            'dry_run: true makes every check of a real publish (permission, folder scope, the publish gate with its 422 naming the unsupported sentences, the destinations and their configuration) and answers what it would do (per destination: would_publish, unchanged or would_fail, the slug and URL) without calling a destination, recording an event or changing anything.',
          params: PieceParams,
          body: Type.Optional(
            Type.Object(
              {
                destination_ids: Type.Optional(DestinationIds),
                dry_run: Type.Optional(
                  Type.Boolean({ description: 'check and answer what would be published, changing nothing (default false)' }),
                ),
              },
              { additionalProperties: false },
            ),
          ),
          response: {
            200: Type.Intersect([
              Type.Ref('Piece'),
              Type.Object({ results: Type.Array(PublishResult), dry_run: Type.Optional(Type.Boolean()) }),
            ]),
            ...errorResponses(400, 401, 403, 404, 409, 422, 502),
          },
        },
      },
      content('PublishPiece'),
    );
    app.post(
      '/org/content/pieces/:piece_id/unpublish',
      {
        config: publish,
        schema: {
          tags,
          summary: 'Unpublish a piece',
          description:
            'Takes it off the named destinations (default: every one it is live on). mode unpublish keeps a tombstone (hosted pages answer 410, WordPress posts become drafts); delete removes it. 409 when it is not live there; 502 when a destination fails.',
          params: PieceParams,
          body: Type.Optional(
            Type.Object(
              {
                destination_ids: Type.Optional(Type.Array(Uuid, { maxItems: 50 })),
                mode: Type.Optional(Type.Union([Type.Literal('unpublish'), Type.Literal('delete')])),
              },
              { additionalProperties: false },
            ),
          ),
          response: { 200: Type.Ref('Piece'), ...errorResponses(400, 401, 403, 404, 409, 502) },
        },
      },
      content('UnpublishPiece'),
    );
    app.get(
      '/org/content/pieces/:piece_id/outcome',
      {
        config: analytics,
        schema: {
          tags,
          summary: 'Before and after figures of the prompts a piece targets',
          description:
            'Mention rate, citation rate, share of voice, win and loss rate of each target prompt over equal windows of whole UTC days before and after the day the piece was first published (the after window runs to today, at most 30 days). 409 when it was never published.',
          params: PieceParams,
          response: { 200: Type.Ref('PieceOutcome'), ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      content('PieceOutcome'),
    );
    app.get(
      '/org/content/outcomes',
      {
        config: analytics,
        schema: {
          tags,
          summary: 'Published pieces whose target prompts moved',
          response: { 200: Type.Object({ items: Type.Array(Type.Ref('PieceOutcome')) }), ...errorResponses(401, 403) },
        },
      },
      content('MovedPieces'),
    );

    // ---- Destinations ----
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
      proxy({ client: clients.destinations, method: 'ListDestinations' }),
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
      proxy({ client: clients.destinations, method: 'GetDestination' }),
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
      proxy({ client: clients.destinations, method: 'ListDestinationDeliveries', list: true }),
    );

    // ---- Custom domains ----
    app.get(
      '/org/domains',
      {
        config: manage,
        schema: {
          tags: dtags,
          summary: 'List custom domains',
          response: { 200: Type.Array(Type.Ref('CustomDomain')), ...errorResponses(401, 403) },
        },
      },
      proxy({ client: clients.destinations, method: 'ListDomains' }),
    );
    app.post(
      '/org/domains',
      {
        config: manage,
        schema: {
          tags: dtags,
          summary: 'Register a custom domain',
          description:
            'Answers the DNS TXT record to create; the domain serves the hosted pages once verified. 409 when the host name is taken.',
          body: Type.Object({ hostname: Type.String({ minLength: 4, maxLength: 253 }) }, { additionalProperties: false }),
          response: { 201: Type.Ref('CustomDomain'), ...errorResponses(400, 401, 403, 409) },
        },
      },
      dest('RegisterDomain', { status: 201 }),
    );
    app.get(
      '/org/domains/:domain_id',
      {
        config: manage,
        schema: {
          tags: dtags,
          summary: 'Get a custom domain',
          params: DomainParams,
          response: { 200: Type.Ref('CustomDomain'), ...errorResponses(400, 401, 403, 404) },
        },
      },
      proxy({ client: clients.destinations, method: 'GetDomain' }),
    );
    app.post(
      '/org/domains/:domain_id/verify',
      {
        config: manage,
        schema: {
          tags: dtags,
          summary: 'Verify a custom domain',
          description: 'Looks up the TXT record now; 422 when it is not (yet) there.',
          params: DomainParams,
          response: { 200: Type.Ref('CustomDomain'), ...errorResponses(400, 401, 403, 404, 422) },
        },
      },
      dest('VerifyDomain'),
    );
    app.delete(
      '/org/domains/:domain_id',
      {
        config: manage,
        schema: {
          tags: dtags,
          summary: 'Remove a custom domain',
          description: 'It stops serving pages at once.',
          params: DomainParams,
          response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
        },
      },
      dest('RemoveDomain', { status: 204 }),
    );

    // ---- Lifecycle webhooks ----
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
  };
}

/** The caller of hosted-site reads: nobody in particular (the pages are public). */
export const hostedCaller = (requestId: string): CallContext => ({
  org_id: '00000000-0000-0000-0000-000000000000',
  principal: { type: 'system', id: 'hosted-site' },
  permissions: [],
  folder_scope: null,
  request_id: requestId,
});
