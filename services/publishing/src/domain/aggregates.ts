import { errors } from '@kb/platform';
import type { Decider, DecidedEvent } from '@kb/eventsourcing';
import type { GateResult } from './gate.js';

const exhaustive = (x: never): never => {
  throw new Error(`Unknown command ${JSON.stringify(x)}`);
};

// ---- piece: the review and publication lifecycle of one draft ----

export type PieceStatus = 'draft' | 'in_review' | 'approved' | 'rejected' | 'published' | 'unpublished';
export interface PieceState {
  status: PieceStatus;
  /** Destinations the piece is live on, with the revision each shows. */
  live: Record<string, number>;
}
interface Who {
  piece_id: string;
  org_id: string;
  revision: number;
  actor: string;
  at: string;
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
      destination: { destination_id: string; destination_type: string; url?: string; remote_id?: string; slug: string };
    } & Who)
  | ({ type: 'record_failure'; destination_id?: string; error: string } & Who)
  | ({ type: 'unpublish'; destination_id: string; mode: 'unpublish' | 'delete' } & Who);

export const pieceStream = (pieceId: string) => `piece-${pieceId}`;

const gateError = (gate: GateResult) =>
  errors.unprocessable(
    gate.stale_sources.length > 0 && gate.sentences.length === 0
      ? 'The piece cites sources that changed since it was written'
      : `${gate.sentences.length} factual sentence(s) are not supported by the sources`,
    { code: 'unverified_content', details: { sentences: gate.sentences, stale_sources: gate.stale_sources } },
  );

export const pieceDecider: Decider<PieceCommand, PieceState> = {
  initialState: () => ({ status: 'draft', live: {} }),
  evolve(s, e) {
    const d = e.data as { destination_id?: string; revision: number };
    switch (e.type) {
      case 'piece.submitted':
        return { ...s, status: 'in_review' };
      case 'piece.approved':
        return { ...s, status: 'approved' };
      case 'piece.rejected':
        return { ...s, status: 'rejected' };
      case 'piece.published':
        return { status: 'published', live: { ...s.live, [d.destination_id!]: d.revision } };
      case 'piece.unpublished': {
        const live = { ...s.live };
        delete live[d.destination_id!];
        return { status: Object.keys(live).length > 0 ? 'published' : 'unpublished', live };
      }
      default:
        return s;
    }
  },
  decide(c, s): DecidedEvent[] {
    const who = { piece_id: c.piece_id, org_id: c.org_id, revision: c.revision, actor: c.actor, at: c.at };
    switch (c.type) {
      case 'submit':
        if (s.status === 'in_review') throw errors.conflict('The piece is already in review', { code: 'already_in_review' });
        if (s.status === 'published') throw errors.conflict('The piece is published; unpublish it first', { code: 'piece_published' });
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
        if (!c.gate.ok) throw gateError(c.gate);
        if (s.status !== 'draft' && s.status !== 'in_review' && s.status !== 'rejected' && s.status !== 'unpublished')
          throw errors.conflict(`A ${s.status} piece cannot be approved`, { code: 'invalid_transition' });
        return [{ type: 'piece.approved', data: { ...who, ...(c.comment !== undefined && { comment: c.comment }) } }];
      case 'reject':
        if (s.status === 'published') throw errors.conflict('The piece is published; unpublish it first', { code: 'piece_published' });
        if (s.status === 'rejected') throw errors.conflict('The piece is already rejected', { code: 'invalid_transition' });
        return [{ type: 'piece.rejected', data: { ...who, comment: c.comment } }];
      case 'publish': {
        if (!c.gate.ok) throw gateError(c.gate);
        if (!c.auto && s.status !== 'approved' && s.status !== 'published' && s.status !== 'unpublished')
          throw errors.conflict(`A ${s.status} piece cannot be published; approve it first`, { code: 'not_approved' });
        if (c.auto && s.status === 'rejected') throw errors.conflict('A rejected piece is not auto-published', { code: 'not_approved' });
        // The same revision on the same destination: nothing to do (idempotent).
        if (s.live[c.destination.destination_id] === c.revision) return [];
        const { url, remote_id, ...dest } = c.destination;
        return [
          {
            type: 'piece.published',
            data: { ...who, ...dest, ...(url !== undefined && { url }), ...(remote_id !== undefined && { remote_id }) },
          },
        ];
      }
      case 'record_failure':
        return [
          {
            type: 'piece.publish_failed',
            data: { ...who, ...(c.destination_id !== undefined && { destination_id: c.destination_id }), error: c.error.slice(0, 1000) },
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
export const destinationDecider: Decider<DestinationCommand, DestinationState> = {
  initialState: () => ({ status: 'new', destination_id: '', org_id: null }),
  evolve(s, e) {
    const d = e.data as { destination_id: string; org_id: string | null };
    if (e.type === 'destination.created') return { status: 'active', destination_id: d.destination_id, org_id: d.org_id };
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
export const toggleDecider: Decider<ToggleCommand, { enabled: boolean | null }> = {
  initialState: () => ({ enabled: null }),
  evolve: (s, e) => (e.type === 'destination.toggled' ? { enabled: (e.data as { enabled: boolean }).enabled } : s),
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
export const domainDecider: Decider<DomainCommand, DomainState> = {
  initialState: () => ({ status: 'new', domain_id: '', org_id: '' }),
  evolve(s, e) {
    const d = e.data as { domain_id: string; org_id: string };
    if (e.type === 'domain.registered') return { status: 'pending', domain_id: d.domain_id, org_id: d.org_id };
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
export const subscriptionDecider: Decider<SubscriptionCommand, SubscriptionState> = {
  initialState: () => ({ status: 'new', subscription_id: '', org_id: '' }),
  evolve(s, e) {
    const d = e.data as { subscription_id: string; org_id: string };
    if (e.type === 'webhook_subscription.created') return { status: 'active', subscription_id: d.subscription_id, org_id: d.org_id };
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
