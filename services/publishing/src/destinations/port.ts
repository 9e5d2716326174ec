import type { DraftRevision } from '@kb/events';

/** What a destination is asked to publish: one revision of a piece, rendered. */
export interface PublishRequest {
  draft: DraftRevision;
  slug: string;
  /** The article body as HTML (inline citations and references). */
  html: string;
  /** The hosted page's URL, when the organization's site has it. */
  canonical_url?: string;
  /** Set on republish: the remote post to update. */
  remote_id?: string;
}

export interface PublishEffect {
  url?: string;
  remote_id?: string;
  /** A signed webhook to deliver durably (written in the publish transaction). */
  delivery?: { event_type: string; payload: Record<string, unknown> };
}

export interface ResolvedDestination {
  id: string;
  type: string;
  config: Record<string, unknown>;
  /** Decrypted, only in memory for the call. */
  secret?: string;
}

/** One publishing port; one adapter per destination type. */
export interface DestinationAdapter {
  type: 'hosted' | 'webhook' | 'wordpress' | 'ghost';
  /** Closed keys: an unknown key or a bad value throws a validation error. */
  validateConfig(config: Record<string, unknown>): Record<string, unknown>;
  /** Whether creating one needs a secret (stored encrypted, never returned). */
  secret: 'required' | 'none';
  /** A remote failure throws a downstream error, and the caller changes nothing but the failed attempt. */
  publish(destination: ResolvedDestination, request: PublishRequest): Promise<PublishEffect>;
  unpublish(
    destination: ResolvedDestination,
    publication: { piece_id: string; revision: number; remote_id?: string; url?: string },
    mode: 'unpublish' | 'delete',
  ): Promise<PublishEffect>;
}
