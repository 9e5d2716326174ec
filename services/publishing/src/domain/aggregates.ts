import { errors } from '@kb/platform';
import type { Decider, DecidedEvent } from '@kb/eventsourcing';
import type { EventsNamed, PieceEvent } from '@kb/events';
import type { GateResult } from './gate.js';

const exhaustive = (x: never): never => {
  throw new Error(`Unknown command ${JSON.stringify(x)}`);
};

// ---- piece: the review and publication lifecycle of one draft ----

/**
 * The review: draft -> in_review (submit) -> approved | rejected; a rejected
 * piece goes back to review by being submitted again, and an approved one when
 * a new revision of it is submitted.
 */
export type ReviewState = 'draft' | 'in_review' | 'approved' | 'rejected';
/**
 * What the piece shows: its review state, or where it stands on destinations
 * (publishing: handed to a destination that has not acknowledged yet;
 * published: live on at least one; publish_failed: its deliveries failed and
 * it is live nowhere; unpublished: taken down from every destination).
 */
export type PieceStatus = ReviewState | 'publishing' | 'published' | 'publish_failed' | 'unpublished';
export interface PieceState {
  status: PieceStatus;
  review: ReviewState;
  /** The revision the last approval was for: the only one a person may publish. */
  approved_revision?: number;
  /** Destinations the piece is live on, with the revision each shows. */
  live: Record<string, number>;
  /** Destinations that have a revision but have not acknowledged it yet (webhooks). */
  pending: Record<string, number>;
  /** Destinations whose delivery of a revision ran out of attempts. */
  failed: Record<string, number>;
}
interface Who {
  piece_id: string;
  org_id: string;
  revision: number;
  actor: string;
  at: string;
}
export interface PublicationTarget {
  destination_id: string;
  destination_type: string;
  url?: string;
  remote_id?: string;
  slug: string;
}
export type PieceCommand =
  | ({ type: 'submit'; reviewer?: string; comment?: string } & Who)
  | ({ type: 'approve'; gate: GateResult; comment?: string } & Who)
  | ({ type: 'reject'; comment: string } & Who)
  | ({
      type: 'publish';
      gate: GateResult;
      /** Auto-publish skips the human approval, never the gate. */
      auto: boolean;
      destination: PublicationTarget;
      /** The destination acknowledges later, through this delivery (a webhook). */
      delivery_id?: string;
    } & Who)
  /** A queued publication's delivery was acknowledged (2xx). */
  | ({ type: 'confirm'; destination: PublicationTarget; delivery_id: string } & Who)
  /** A destination failed; with delivery_id, a queued publication's delivery ran out of attempts. */
  | ({ type: 'record_failure'; destination_id?: string; error: string; delivery_id?: string } & Who)
  | ({ type: 'unpublish'; destination_id: string; mode: 'unpublish' | 'delete' } & Who);

export const pieceStream = (pieceId: string) => `piece-${pieceId}`;

const gateError = (gate: GateResult) =>
  errors.unprocessable(
    gate.stale_sources.length > 0 && gate.sentences.length === 0
      ? 'The piece cites sources that changed since it was written'
      : `${gate.sentences.length} factual sentence(s) are not supported by the sources`,
    { code: 'unverified_content', details: { sentences: gate.sentences, stale_sources: gate.stale_sources } },
  );

const without = (m: Record<string, number>, key: string) => {
  const { [key]: _gone, ...rest } = m;
  return rest;
};
const any = (m: Record<string, number>) => Object.keys(m).length > 0;
/** Where a piece stands once a destination stopped showing it or stopped trying to. */
const settled = (s: PieceState, otherwise: PieceStatus): PieceStatus =>
  any(s.live) ? 'published' : any(s.pending) ? 'publishing' : otherwise;

export const pieceDecider: Decider<PieceCommand, PieceState, PieceEvent> = {
  initialState: () => ({ status: 'draft', review: 'draft', live: {}, pending: {}, failed: {} }),
  evolve(s, e) {
    const { type, data: d } = e;
    const dest = ('destination_id' in d ? d.destination_id : undefined)!;
    switch (type) {
      case 'piece.submitted':
        return { ...s, review: 'in_review', status: 'in_review' };
      case 'piece.approved':
        return { ...s, review: 'approved', status: 'approved', approved_revision: d.revision };
      case 'piece.rejected':
        return { ...s, review: 'rejected', status: 'rejected' };
      case 'piece.publish_queued': {
        const next = { ...s, pending: { ...s.pending, [dest]: d.revision }, failed: without(s.failed, dest) };
        return { ...next, status: settled(next, 'publishing') };
      }
      case 'piece.published': {
        const pending = s.pending[dest] !== undefined && s.pending[dest] <= d.revision ? without(s.pending, dest) : s.pending;
        return { ...s, status: 'published', live: { ...s.live, [dest]: d.revision }, pending, failed: without(s.failed, dest) };
      }
      case 'piece.publish_failed': {
        // Only a queued publication's final failure changes anything: a failure
        // during the publish call left the piece as it was.
        if (d.delivery_id === undefined || d.destination_id === undefined || s.pending[dest] !== d.revision) return s;
        const next = { ...s, pending: without(s.pending, dest), failed: { ...s.failed, [dest]: d.revision } };
        return { ...next, status: settled(next, 'publish_failed') };
      }
      case 'piece.unpublished': {
        // A newer revision on its way there is dropped too: the piece was taken down.
        const next = { ...s, live: without(s.live, dest), pending: without(s.pending, dest) };
        return { ...next, status: s.status === 'published' ? settled(next, 'unpublished') : s.status };
      }
      default:
        return s;
    }
  },
  decide(c, s): DecidedEvent[] {
    const who = { piece_id: c.piece_id, org_id: c.org_id, revision: c.revision, actor: c.actor, at: c.at };
    switch (c.type) {
      case 'submit':
        if (s.review === 'in_review') throw errors.conflict('The piece is already in review', { code: 'already_in_review' });
        if (s.review === 'approved' && s.approved_revision === c.revision)
          throw any(s.live)
            ? errors.conflict('The piece is published at this revision; edit it to submit a new revision', { code: 'piece_published' })
            : errors.conflict('This revision is already approved; publish it', { code: 'already_approved' });
        return [
          {
            type: 'piece.submitted',
            data: {
              ...who,
              ...(c.reviewer !== undefined && { reviewer: c.reviewer }),
              ...(c.comment !== undefined && { comment: c.comment }),
            },
          },
        ];
      case 'approve':
        if (s.review !== 'in_review')
          throw errors.conflict(`Only a piece in review can be approved; this one is ${s.review}: submit it first`, {
            code: 'not_in_review',
          });
        if (!c.gate.ok) throw gateError(c.gate);
        return [{ type: 'piece.approved', data: { ...who, ...(c.comment !== undefined && { comment: c.comment }) } }];
      case 'reject':
        if (s.review !== 'in_review')
          throw errors.conflict(`Only a piece in review can be rejected; this one is ${s.review}`, { code: 'not_in_review' });
        return [{ type: 'piece.rejected', data: { ...who, comment: c.comment } }];
      case 'publish': {
        if (!c.gate.ok) throw gateError(c.gate);
        if (!c.auto && s.approved_revision === undefined)
          throw errors.conflict(`A ${s.status.replace('_', ' ')} piece cannot be published; submit it and have it approved first`, {
            code: 'not_approved',
          });
        // Only the revision a reviewer approved goes live.
        if (!c.auto && s.approved_revision !== c.revision)
          throw errors.conflict(
            `Revision ${c.revision} is not approved (the approved revision is ${s.approved_revision}); submit it for review`,
            { code: 'revision_not_approved', details: { revision: c.revision, approved_revision: s.approved_revision } },
          );
        if (c.auto && s.review === 'rejected') throw errors.conflict('A rejected piece is not auto-published', { code: 'not_approved' });
        const id = c.destination.destination_id;
        // The same revision on the same destination, live or on its way: nothing to do (idempotent).
        if (s.live[id] === c.revision || s.pending[id] === c.revision) return [];
        const { url, remote_id, ...dest } = c.destination;
        const where = { ...dest, ...(url !== undefined && { url }) };
        if (c.delivery_id !== undefined) return [{ type: 'piece.publish_queued', data: { ...who, ...where, delivery_id: c.delivery_id } }];
        return [{ type: 'piece.published', data: { ...who, ...where, ...(remote_id !== undefined && { remote_id }) } }];
      }
      case 'confirm': {
        const id = c.destination.destination_id;
        // A newer revision superseded this delivery, or it is already live: nothing to record.
        if (s.pending[id] !== c.revision && s.failed[id] !== c.revision) return [];
        const { url, remote_id: _r, ...dest } = c.destination;
        return [{ type: 'piece.published', data: { ...who, ...dest, ...(url !== undefined && { url }), delivery_id: c.delivery_id } }];
      }
      case 'record_failure':
        if (c.delivery_id !== undefined && (c.destination_id === undefined || s.pending[c.destination_id] !== c.revision)) return [];
        return [
          {
            type: 'piece.publish_failed',
            data: {
              ...who,
              ...(c.destination_id !== undefined && { destination_id: c.destination_id }),
              error: c.error.slice(0, 1000),
              ...(c.delivery_id !== undefined && { delivery_id: c.delivery_id }),
            },
          },
        ];
      case 'unpublish':
        if (s.live[c.destination_id] === undefined)
          throw errors.conflict('The piece is not live on that destination', { code: 'not_published' });
        return [{ type: 'piece.unpublished', data: { ...who, destination_id: c.destination_id, mode: c.mode } }];
      default:
        return exhaustive(c);
    }
  },
};

// ---- destination ----

export type DestinationCommand =
  | {
      type: 'create';
      data: {
        destination_id: string;
        org_id: string | null;
        type: 'hosted' | 'webhook' | 'wordpress' | 'ghost';
        name: string;
        config: Record<string, unknown>;
        secret_ciphertext?: string;
        is_default: boolean;
        at: string;
      };
    }
  | { type: 'remove'; org_id: string; on_live_content: 'leave' | 'unpublish' | 'delete'; actor: string; at: string };
interface DestinationState {
  status: 'new' | 'active' | 'removed';
  destination_id: string;
  org_id: string | null;
}
export const destinationStream = (id: string) => `destination-${id}`;
export const destinationDecider: Decider<DestinationCommand, DestinationState, EventsNamed<'destination'>> = {
  initialState: () => ({ status: 'new', destination_id: '', org_id: null }),
  evolve(s, e) {
    if (e.type === 'destination.created') return { status: 'active', destination_id: e.data.destination_id, org_id: e.data.org_id };
    if (e.type === 'destination.removed') return { ...s, status: 'removed' };
    return s;
  },
  decide(c, s) {
    switch (c.type) {
      case 'create':
        if (s.status !== 'new') throw errors.conflict('Destination already exists', { code: 'destination_exists' });
        return [{ type: 'destination.created', data: { ...c.data } }];
      case 'remove':
        if (s.status !== 'active' || s.org_id !== c.org_id) throw errors.notFound('Destination');
        return [
          {
            type: 'destination.removed',
            data: { destination_id: s.destination_id, org_id: c.org_id, on_live_content: c.on_live_content, actor: c.actor, at: c.at },
          },
        ];
      default:
        return exhaustive(c);
    }
  },
};

/** A shared destination's switch for one organization: every toggle is a fact. */
export type ToggleCommand = { destination_id: string; org_id: string; enabled: boolean; actor: string; at: string };
export const toggleStream = (orgId: string, destinationId: string) => `destination-toggle-${orgId}-${destinationId}`;
export const toggleDecider: Decider<ToggleCommand, { enabled: boolean | null }, EventsNamed<'destination'>> = {
  initialState: () => ({ enabled: null }),
  evolve: (s, e) => (e.type === 'destination.toggled' ? { enabled: e.data.enabled } : s),
  decide: (c) => [{ type: 'destination.toggled', data: { ...c } }],
};

// ---- custom domain ----

export type DomainCommand =
  | { type: 'register'; domain_id: string; org_id: string; hostname: string; token: string; at: string }
  | { type: 'verify'; org_id: string; at: string }
  | { type: 'remove'; org_id: string; at: string };
interface DomainState {
  status: 'new' | 'pending' | 'verified' | 'removed';
  domain_id: string;
  org_id: string;
}
export const domainStream = (id: string) => `domain-${id}`;
export const domainDecider: Decider<DomainCommand, DomainState, EventsNamed<'domain'>> = {
  initialState: () => ({ status: 'new', domain_id: '', org_id: '' }),
  evolve(s, e) {
    if (e.type === 'domain.registered') return { status: 'pending', domain_id: e.data.domain_id, org_id: e.data.org_id };
    if (e.type === 'domain.verified') return { ...s, status: 'verified' };
    if (e.type === 'domain.removed') return { ...s, status: 'removed' };
    return s;
  },
  decide(c, s) {
    switch (c.type) {
      case 'register':
        if (s.status !== 'new') throw errors.conflict('Domain already exists', { code: 'domain_exists' });
        return [
          { type: 'domain.registered', data: { domain_id: c.domain_id, org_id: c.org_id, hostname: c.hostname, token: c.token, at: c.at } },
        ];
      case 'verify':
        if (s.status === 'new' || s.status === 'removed' || s.org_id !== c.org_id) throw errors.notFound('Domain');
        if (s.status === 'verified') return [];
        return [{ type: 'domain.verified', data: { domain_id: s.domain_id, org_id: s.org_id, at: c.at } }];
      case 'remove':
        if (s.status === 'new' || s.status === 'removed' || s.org_id !== c.org_id) throw errors.notFound('Domain');
        return [{ type: 'domain.removed', data: { domain_id: s.domain_id, org_id: s.org_id, at: c.at } }];
      default:
        return exhaustive(c);
    }
  },
};

// ---- lifecycle-webhook subscription ----

export type SubscriptionCommand =
  | { type: 'create'; subscription_id: string; org_id: string; url: string; event_kinds: string[]; secret_ciphertext: string; at: string }
  | { type: 'delete'; org_id: string; at: string };
interface SubscriptionState {
  status: 'new' | 'active' | 'deleted';
  subscription_id: string;
  org_id: string;
}
export const subscriptionStream = (id: string) => `webhook-subscription-${id}`;
export const subscriptionDecider: Decider<SubscriptionCommand, SubscriptionState, EventsNamed<'webhook_subscription'>> = {
  initialState: () => ({ status: 'new', subscription_id: '', org_id: '' }),
  evolve(s, e) {
    if (e.type === 'webhook_subscription.created')
      return { status: 'active', subscription_id: e.data.subscription_id, org_id: e.data.org_id };
    if (e.type === 'webhook_subscription.deleted') return { ...s, status: 'deleted' };
    return s;
  },
  decide(c, s) {
    switch (c.type) {
      case 'create': {
        if (s.status !== 'new') throw errors.conflict('Subscription already exists', { code: 'subscription_exists' });
        const { type: _t, ...data } = c;
        return [{ type: 'webhook_subscription.created', data }];
      }
      case 'delete':
        if (s.status !== 'active' || s.org_id !== c.org_id) throw errors.notFound('Webhook subscription');
        return [{ type: 'webhook_subscription.deleted', data: { subscription_id: s.subscription_id, org_id: s.org_id, at: c.at } }];
      default:
        return exhaustive(c);
    }
  },
};
