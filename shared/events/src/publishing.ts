import { Type } from '@sinclair/typebox';
import { defineEvent, type EventData, type EventOf } from './define.js';
import { topics } from './topics.js';

/**
 * The publishing service's facts: the review lifecycle of a piece (a generated
 * draft), destinations (shared and per organization), custom domains and
 * lifecycle-webhook subscriptions. Secrets travel only encrypted and only in
 * internal events, which never leave the service's store.
 */
const Uuid = Type.String({ format: 'uuid' });
const Timestamp = Type.String({ format: 'date-time' });
const publishing = topics.publishing;

const pieceRef = { piece_id: Uuid, org_id: Uuid, revision: Type.Integer({ minimum: 1 }), actor: Type.String(), at: Timestamp };

export const pieceSubmitted = defineEvent(
  publishing,
  'piece.submitted',
  1,
  Type.Object({ ...pieceRef, reviewer: Type.Optional(Type.String()), comment: Type.Optional(Type.String()) }),
);
export const pieceApproved = defineEvent(
  publishing,
  'piece.approved',
  1,
  Type.Object({ ...pieceRef, comment: Type.Optional(Type.String()) }),
);
export const pieceRejected = defineEvent(
  publishing,
  'piece.rejected',
  1,
  Type.Object({ ...pieceRef, comment: Type.String({ minLength: 1 }) }),
);
const publicationRef = {
  destination_id: Uuid,
  destination_type: Type.String(),
  /** Where the piece can be read (hosted page, remote post), when the destination knows. */
  url: Type.Optional(Type.String()),
  /** The slug of the hosted page. */
  slug: Type.String(),
};
/**
 * The piece (at `revision`) went live on one destination: the destination
 * acknowledged it (a webhook receiver answered 2xx: `delivery_id` names the delivery).
 */
export const piecePublished = defineEvent(
  publishing,
  'piece.published',
  1,
  Type.Object({
    ...pieceRef,
    ...publicationRef,
    /** The remote post's id (WordPress, Ghost), for updates and deletes. */
    remote_id: Type.Optional(Type.String()),
    delivery_id: Type.Optional(Uuid),
  }),
);
/**
 * The piece (at `revision`) was handed to a destination that acknowledges later
 * (a webhook: the delivery `delivery_id`). It is live once the receiver
 * acknowledges (piece.published), or failed when the delivery runs out of
 * attempts (piece.publish_failed with the same delivery_id).
 */
export const piecePublishQueued = defineEvent(
  publishing,
  'piece.publish_queued',
  1,
  Type.Object({ ...pieceRef, ...publicationRef, delivery_id: Uuid }),
);
/**
 * A destination refused or failed. With `delivery_id`, a queued publication's
 * delivery ran out of attempts; without it, a destination failed during the
 * publish call (or auto-publish found no publisher) and nothing else changed.
 */
export const piecePublishFailed = defineEvent(
  publishing,
  'piece.publish_failed',
  1,
  Type.Object({ ...pieceRef, destination_id: Type.Optional(Uuid), error: Type.String(), delivery_id: Type.Optional(Uuid) }),
);
/** Taken off one destination: `unpublish` keeps a tombstone (hosted answers 410), `delete` removes it. */
export const pieceUnpublished = defineEvent(
  publishing,
  'piece.unpublished',
  1,
  Type.Object({ ...pieceRef, destination_id: Uuid, mode: Type.Union([Type.Literal('unpublish'), Type.Literal('delete')]) }),
);

const DestinationType = Type.Union([Type.Literal('hosted'), Type.Literal('webhook'), Type.Literal('wordpress'), Type.Literal('ghost')]);
export const destinationCreated = defineEvent(
  publishing,
  'destination.created',
  1,
  Type.Object({
    destination_id: Uuid,
    /** null: a shared destination, seeded globally. */
    org_id: Type.Union([Uuid, Type.Null()]),
    type: DestinationType,
    name: Type.String({ minLength: 1 }),
    /** The public configuration (closed keys per type; never a secret). */
    config: Type.Record(Type.String(), Type.Unknown()),
    /** AES-256-GCM ciphertext of the secret, base64 (webhook secret, WordPress application password). */
    secret_ciphertext: Type.Optional(Type.String()),
    /** Shared only: in the default set every organization is linked to. */
    is_default: Type.Boolean(),
    at: Timestamp,
  }),
  { internal: true },
);
export const destinationRemoved = defineEvent(
  publishing,
  'destination.removed',
  1,
  Type.Object({
    destination_id: Uuid,
    org_id: Uuid,
    on_live_content: Type.Union([Type.Literal('leave'), Type.Literal('unpublish'), Type.Literal('delete')]),
    actor: Type.String(),
    at: Timestamp,
  }),
);
/** A shared destination switched on or off for one organization. */
export const destinationToggled = defineEvent(
  publishing,
  'destination.toggled',
  1,
  Type.Object({ destination_id: Uuid, org_id: Uuid, enabled: Type.Boolean(), actor: Type.String(), at: Timestamp }),
);

export const domainRegistered = defineEvent(
  publishing,
  'domain.registered',
  1,
  Type.Object({
    domain_id: Uuid,
    org_id: Uuid,
    hostname: Type.String({ minLength: 1 }),
    token: Type.String({ minLength: 1 }),
    at: Timestamp,
  }),
);
export const domainVerified = defineEvent(publishing, 'domain.verified', 1, Type.Object({ domain_id: Uuid, org_id: Uuid, at: Timestamp }));
export const domainRemoved = defineEvent(publishing, 'domain.removed', 1, Type.Object({ domain_id: Uuid, org_id: Uuid, at: Timestamp }));

export const webhookSubscriptionCreated = defineEvent(
  publishing,
  'webhook_subscription.created',
  1,
  Type.Object({
    subscription_id: Uuid,
    org_id: Uuid,
    url: Type.String({ minLength: 1 }),
    event_kinds: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
    secret_ciphertext: Type.String({ minLength: 1 }),
    at: Timestamp,
  }),
  { internal: true },
);
export const webhookSubscriptionDeleted = defineEvent(
  publishing,
  'webhook_subscription.deleted',
  1,
  Type.Object({ subscription_id: Uuid, org_id: Uuid, at: Timestamp }),
);

export const publishingEvents = [
  pieceSubmitted,
  pieceApproved,
  pieceRejected,
  piecePublished,
  piecePublishFailed,
  piecePublishQueued,
  pieceUnpublished,
  destinationCreated,
  destinationRemoved,
  destinationToggled,
  domainRegistered,
  domainVerified,
  domainRemoved,
  webhookSubscriptionCreated,
  webhookSubscriptionDeleted,
];

/** Every publishing event (pieces, destinations, domains, webhook subscriptions). */
export type PublishingEvent = EventOf<(typeof publishingEvents)[number]>;

export type PieceSubmitted = EventData<typeof pieceSubmitted>;
export type PieceApproved = EventData<typeof pieceApproved>;
export type PieceRejected = EventData<typeof pieceRejected>;
export type PiecePublished = EventData<typeof piecePublished>;
export type PiecePublishFailed = EventData<typeof piecePublishFailed>;
export type PiecePublishQueued = EventData<typeof piecePublishQueued>;
export type PieceUnpublished = EventData<typeof pieceUnpublished>;
export type DestinationCreated = EventData<typeof destinationCreated>;
export type DestinationRemoved = EventData<typeof destinationRemoved>;
export type DestinationToggled = EventData<typeof destinationToggled>;
export type DomainRegistered = EventData<typeof domainRegistered>;
export type WebhookSubscriptionCreated = EventData<typeof webhookSubscriptionCreated>;

/** The piece stream's events (the review and publication lifecycle of one draft). */
export type PieceEvent = Extract<PublishingEvent, { type: `piece.${string}` }>;
