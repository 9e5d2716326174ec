import { createHash } from 'node:crypto';
import type { DraftRevision } from '@kb/events';
import type { PieceState } from '../domain/aggregates.js';

/** Drafts as generation last described them (kept by the drafts consumer, not a projection). */
export const DRAFTS = 'publishing_drafts';
/** Every revision of every draft, so a publication renders exactly the revision it published. */
export const DRAFT_REVISIONS = 'publishing_draft_revisions';
/** Organizations' slugs (from the gateway's events). */
export const ORGS = 'publishing_orgs';
/** The outbox-like table of webhook deliveries (operational state, not a read model). */
export const DELIVERIES = 'publishing_deliveries';

// Read models of the service's own events (dropped and replayed by a rebuild).
export const PIECE_STATES = 'publishing_piece_states';
export const PUBLICATIONS = 'publishing_publications';
export const PAGES = 'publishing_pages';
export const SITE_VERSIONS = 'publishing_site_versions';
export const DESTINATIONS = 'publishing_destinations';
export const DESTINATION_TOGGLES = 'publishing_destination_toggles';
export const DOMAINS = 'publishing_domains';
export const DOMAIN_HOSTS = 'publishing_domain_hosts';
export const SUBSCRIPTIONS = 'publishing_subscriptions';
/** Each monitored prompt's latest answer results and current outcome, from analytics' answer.collected (prompt.won / prompt.lost). */
export const PROMPT_OUTCOMES = 'publishing_prompt_outcomes';

/** The knowledge base's folders (id, parent), from its kb_node events: folder scope covers sub-folders. */
export const KB_FOLDERS = 'publishing_kb_folders';
export interface KbFolderDoc {
  id: string;
  org_id: string;
  parent_id: string | null;
}

export type { PieceStatus } from '../domain/aggregates.js';

export interface DraftDoc {
  id: string;
  org_id: string;
  revision: number;
  draft: DraftRevision;
  deleted: boolean;
  created_at: string;
  seq: number;
}

export interface DraftRevisionDoc {
  id: string;
  draft: DraftRevision;
}

export interface HistoryEntry {
  event: string;
  actor: string;
  at: string;
  revision: number;
  comment?: string;
  destination_id?: string;
  error?: string;
}

/** A piece's lifecycle as its decider folds it (status, review, live/pending/failed per destination), plus what people read. */
export interface PieceStateDoc extends Partial<Omit<PieceState, 'status'>> {
  id: string;
  org_id: string;
  status: PieceState['status'];
  reviewer?: string;
  review_comment?: string;
  published_at?: string;
  updated_at: string;
  history: HistoryEntry[];
}

export interface PublicationDoc {
  id: string;
  org_id: string;
  piece_id: string;
  destination_id: string;
  destination_type: string;
  revision: number;
  /**
   * pending: handed to a destination that has not acknowledged it (first
   * publish); failed: that delivery ran out of attempts. A live publication
   * with a newer revision on its way keeps `live` and names it in pending_revision.
   */
  status: 'pending' | 'live' | 'failed' | 'unpublished' | 'deleted';
  pending_revision?: number;
  /** The last delivery failure (a live publication whose newer revision failed keeps `live`). */
  error?: string;
  url?: string;
  remote_id?: string;
  slug: string;
  published_at: string;
  updated_at: string;
}

export interface PageDoc {
  id: string;
  org_id: string;
  piece_id: string;
  slug: string;
  revision: number;
  status: 'live' | 'gone';
  published_at: string;
  updated_at: string;
}

export interface DestinationDoc {
  id: string;
  org_id: string | null;
  type: 'hosted' | 'webhook' | 'wordpress' | 'ghost';
  name: string;
  config: Record<string, unknown>;
  secret_ciphertext?: string;
  is_default: boolean;
  removed: boolean;
  created_at: string;
  seq: number;
}

export interface DomainDoc {
  id: string;
  org_id: string;
  hostname: string;
  token: string;
  status: 'pending' | 'verified';
  created_at: string;
  verified_at?: string;
}

export interface SubscriptionDoc {
  id: string;
  org_id: string;
  url: string;
  event_kinds: string[];
  secret_ciphertext: string;
  created_at: string;
  deleted: boolean;
  seq: number;
}

export interface DeliveryAttempt {
  attempt: number;
  at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

export interface DeliveryPublication {
  piece_id: string;
  revision: number;
  destination_id: string;
  destination_type: string;
  slug: string;
  url?: string;
}

export interface DeliveryDoc {
  /** The webhook-id header: the same on every attempt, so receivers dedupe on it. */
  id: string;
  org_id: string;
  source: 'destination' | 'subscription';
  target_id: string;
  url: string;
  secret_ciphertext: string;
  event_type: string;
  payload: string;
  /** cancelled: its webhook subscription or destination was removed while it was pending. */
  status: 'pending' | 'delivered' | 'failed' | 'cancelled';
  /**
   * A destination's publish: the publication this delivery makes live when the
   * receiver acknowledges it, or failed when it runs out of attempts.
   */
  publication?: DeliveryPublication;
  attempts: number;
  next_attempt_at: number;
  created_at: string;
  delivered_at?: string;
  log: DeliveryAttempt[];
}

export interface OrgDoc {
  id: string;
  slug: string;
  name: string;
}

/** A stable uuid derived from text (ids of deliveries and seeded destinations). */
export function derivedUuid(text: string): string {
  const h = createHash('sha1').update(text).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Metadata org of facts that belong to no organization (seeded shared destinations). */
export const GLOBAL_ORG = '00000000-0000-0000-0000-000000000000';
export const publicationId = (pieceId: string, destinationId: string) => `${pieceId}:${destinationId}`;
export const pageId = (orgId: string, slug: string) => `${orgId}:${slug}`;
