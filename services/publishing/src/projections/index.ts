import type { Projection, Stored } from '@kb/eventsourcing';
import type { StoreTransaction } from '@kb/store';
import type { PieceEvent } from '@kb/events';
import {
  DESTINATIONS,
  DESTINATION_TOGGLES,
  DOMAINS,
  DOMAIN_HOSTS,
  PAGES,
  PIECE_STATES,
  PUBLICATIONS,
  SITE_VERSIONS,
  SUBSCRIPTIONS,
  pageId,
  publicationId,
  type DestinationDoc,
  type DomainDoc,
  type HistoryEntry,
  type PageDoc,
  type PieceStateDoc,
  type PublicationDoc,
  type SubscriptionDoc,
} from './collections.js';
import { pieceDecider, type ReviewState } from '../domain/aggregates.js';

/** Hosted sites render from these; any change to what a site shows bumps its version (the render cache's validator). */
export async function bumpSite(tx: StoreTransaction, orgId: string) {
  const cur = await tx.get<{ id: string; version: number }>(SITE_VERSIONS, orgId);
  await tx.put(SITE_VERSIONS, { id: orgId, version: (cur?.version ?? 0) + 1 });
}

/**
 * The piece's state document after `event`: the decider's own fold (so the
 * status people read is the one commands decide on), plus its history line.
 */
async function updatePiece(
  tx: StoreTransaction,
  event: Stored<PieceEvent>,
  entry: Omit<HistoryEntry, 'actor' | 'at' | 'revision'>,
  change: (doc: PieceStateDoc) => Partial<PieceStateDoc> = () => ({}),
) {
  const d = event.data;
  const cur: PieceStateDoc = (await tx.get<PieceStateDoc>(PIECE_STATES, d.piece_id)) ?? {
    id: d.piece_id,
    org_id: d.org_id,
    status: 'draft',
    updated_at: d.at,
    history: [],
  };
  const folded = pieceDecider.evolve(
    {
      status: cur.status,
      // A document written before the review was kept apart from the status: its status was the review's, or came after an approval.
      review:
        cur.review ?? (['draft', 'in_review', 'approved', 'rejected'].includes(cur.status) ? (cur.status as ReviewState) : 'approved'),
      ...(cur.approved_revision !== undefined && { approved_revision: cur.approved_revision }),
      live: cur.live ?? {},
      pending: cur.pending ?? {},
      failed: cur.failed ?? {},
    },
    event,
  );
  const history = [...cur.history, { ...entry, actor: d.actor, at: d.at, revision: d.revision }];
  await tx.put(PIECE_STATES, { ...cur, ...folded, ...change(cur), history, updated_at: d.at });
}

/** Piece states, publications, hosted pages, destinations, domains and subscriptions. */
export const publishingProjection: Projection = {
  name: 'publishing',
  collections: [PIECE_STATES, PUBLICATIONS, PAGES, SITE_VERSIONS, DESTINATIONS, DESTINATION_TOGGLES, DOMAINS, DOMAIN_HOSTS, SUBSCRIPTIONS],
  indexes: [
    { collection: PIECE_STATES, fields: ['org_id', 'status'] },
    { collection: PUBLICATIONS, fields: ['org_id', 'piece_id'] },
    { collection: PUBLICATIONS, fields: ['destination_id', 'status'] },
    { collection: PAGES, fields: ['org_id', 'status'] },
    { collection: DESTINATIONS, fields: ['org_id'] },
    { collection: DOMAINS, fields: ['org_id'] },
    { collection: SUBSCRIPTIONS, fields: ['org_id', 'deleted'] },
  ],
  async apply(tx, event: Stored) {
    switch (event.type) {
      case 'piece.submitted': {
        const d = event.data;
        await updatePiece(tx, event, { event: 'submitted', ...(d.comment !== undefined && { comment: d.comment }) }, () => ({
          ...(d.reviewer !== undefined && { reviewer: d.reviewer }),
        }));
        return;
      }
      case 'piece.approved': {
        const d = event.data;
        await updatePiece(tx, event, { event: 'approved', ...(d.comment !== undefined && { comment: d.comment }) });
        return;
      }
      case 'piece.rejected': {
        const d = event.data;
        await updatePiece(tx, event, { event: 'rejected', comment: d.comment }, () => ({ review_comment: d.comment }));
        return;
      }
      case 'piece.publish_queued': {
        const d = event.data;
        await updatePiece(tx, event, { event: 'publish_queued', destination_id: d.destination_id });
        const id = publicationId(d.piece_id, d.destination_id);
        const prev = await tx.get<PublicationDoc>(PUBLICATIONS, id);
        const { error: _e, pending_revision: _p, ...kept } = prev ?? ({} as Partial<PublicationDoc>);
        // Live at an older revision: it stays live there until the new one is acknowledged.
        const pub: PublicationDoc =
          prev?.status === 'live'
            ? { ...prev, ...kept, status: 'live', pending_revision: d.revision, updated_at: d.at }
            : {
                id,
                org_id: d.org_id,
                piece_id: d.piece_id,
                destination_id: d.destination_id,
                destination_type: d.destination_type,
                revision: d.revision,
                status: 'pending',
                slug: d.slug,
                ...(d.url !== undefined && { url: d.url }),
                ...(prev?.remote_id !== undefined && { remote_id: prev.remote_id }),
                published_at: prev?.published_at ?? d.at,
                updated_at: d.at,
              };
        await tx.put(PUBLICATIONS, pub);
        return;
      }
      case 'piece.publish_failed': {
        const d = event.data;
        await updatePiece(tx, event, {
          event: 'publish_failed',
          error: d.error,
          ...(d.destination_id !== undefined && { destination_id: d.destination_id }),
        });
        if (d.delivery_id === undefined || d.destination_id === undefined) return;
        const id = publicationId(d.piece_id, d.destination_id);
        const prev = await tx.get<PublicationDoc>(PUBLICATIONS, id);
        if (!prev) return;
        const { pending_revision: _p, ...kept } = prev;
        if (prev.status === 'live' && prev.pending_revision === d.revision)
          await tx.put(PUBLICATIONS, { ...kept, error: d.error, updated_at: d.at });
        else if (prev.status === 'pending' && prev.revision === d.revision)
          await tx.put(PUBLICATIONS, { ...kept, status: 'failed', error: d.error, updated_at: d.at });
        return;
      }
      case 'piece.published': {
        const d = event.data;
        await updatePiece(tx, event, { event: 'published', destination_id: d.destination_id }, (cur) => ({
          published_at: cur.published_at ?? d.at,
        }));
        const id = publicationId(d.piece_id, d.destination_id);
        const prev = await tx.get<PublicationDoc>(PUBLICATIONS, id);
        const pub: PublicationDoc = {
          id,
          org_id: d.org_id,
          piece_id: d.piece_id,
          destination_id: d.destination_id,
          destination_type: d.destination_type,
          revision: d.revision,
          status: 'live',
          slug: d.slug,
          ...(d.url !== undefined && { url: d.url }),
          ...((d.remote_id ?? prev?.remote_id) !== undefined && { remote_id: d.remote_id ?? prev!.remote_id! }),
          // A newer revision still on its way stays named.
          ...(prev?.pending_revision !== undefined && prev.pending_revision > d.revision && { pending_revision: prev.pending_revision }),
          published_at: prev?.status === 'live' || prev?.status === 'unpublished' ? prev.published_at : d.at,
          updated_at: d.at,
        };
        await tx.put(PUBLICATIONS, pub);
        if (d.destination_type === 'hosted') {
          const pid = pageId(d.org_id, d.slug);
          const page = await tx.get<PageDoc>(PAGES, pid);
          await tx.put(PAGES, {
            id: pid,
            org_id: d.org_id,
            piece_id: d.piece_id,
            slug: d.slug,
            revision: d.revision,
            status: 'live',
            published_at: page?.published_at ?? d.at,
            updated_at: d.at,
          } satisfies PageDoc);
          await bumpSite(tx, d.org_id);
        }
        return;
      }
      case 'piece.unpublished': {
        const d = event.data;
        const id = publicationId(d.piece_id, d.destination_id);
        const pub = await tx.get<PublicationDoc>(PUBLICATIONS, id);
        await updatePiece(tx, event, { event: d.mode === 'delete' ? 'deleted' : 'unpublished', destination_id: d.destination_id });
        if (!pub) return;
        const { pending_revision: _p, ...kept } = pub;
        await tx.put(PUBLICATIONS, { ...kept, status: d.mode === 'delete' ? 'deleted' : 'unpublished', updated_at: d.at });
        if (pub.destination_type === 'hosted') {
          const pid = pageId(d.org_id, pub.slug);
          const page = await tx.get<PageDoc>(PAGES, pid);
          if (page && d.mode === 'delete') await tx.delete(PAGES, pid);
          else if (page) await tx.put(PAGES, { ...page, status: 'gone', updated_at: d.at });
          await bumpSite(tx, d.org_id);
        }
        return;
      }
      case 'destination.created': {
        const d = event.data;
        const doc: DestinationDoc = {
          id: d.destination_id,
          org_id: d.org_id,
          type: d.type,
          name: d.name,
          config: d.config,
          ...(d.secret_ciphertext !== undefined && { secret_ciphertext: d.secret_ciphertext }),
          is_default: d.is_default,
          removed: false,
          created_at: d.at,
          seq: event.position,
        };
        await tx.put(DESTINATIONS, doc);
        return;
      }
      case 'destination.removed': {
        const d = event.data;
        const cur = await tx.get<DestinationDoc>(DESTINATIONS, d.destination_id);
        if (cur) await tx.put(DESTINATIONS, { ...cur, removed: true });
        return;
      }
      case 'destination.toggled': {
        const d = event.data;
        await tx.put(DESTINATION_TOGGLES, {
          id: `${d.org_id}:${d.destination_id}`,
          org_id: d.org_id,
          destination_id: d.destination_id,
          enabled: d.enabled,
        });
        // Switching the hosted destination off or on takes the organization's pages down or brings them back.
        await bumpSite(tx, d.org_id);
        return;
      }
      case 'domain.registered': {
        const d = event.data;
        await tx.put(DOMAINS, {
          id: d.domain_id,
          org_id: d.org_id,
          hostname: d.hostname,
          token: d.token,
          status: 'pending',
          created_at: d.at,
        } satisfies DomainDoc);
        // The host name is claimed on verification, not here.
        return;
      }
      case 'domain.verified': {
        const d = event.data;
        const cur = await tx.get<DomainDoc>(DOMAINS, d.domain_id);
        if (!cur) return;
        await tx.put(DOMAINS, { ...cur, status: 'verified', verified_at: d.at });
        await tx.put(DOMAIN_HOSTS, { id: cur.hostname, domain_id: cur.id, org_id: cur.org_id, verified: true });
        await bumpSite(tx, d.org_id);
        return;
      }
      case 'domain.removed': {
        const d = event.data;
        const cur = await tx.get<DomainDoc>(DOMAINS, d.domain_id);
        if (!cur) return;
        await tx.delete(DOMAINS, d.domain_id);
        // The claim is this registration's only when it verified it.
        const claim = await tx.get<{ id: string; domain_id: string }>(DOMAIN_HOSTS, cur.hostname);
        if (claim?.domain_id === d.domain_id) await tx.delete(DOMAIN_HOSTS, cur.hostname);
        await bumpSite(tx, d.org_id);
        return;
      }
      case 'webhook_subscription.created': {
        const d = event.data;
        await tx.put(SUBSCRIPTIONS, {
          id: d.subscription_id,
          org_id: d.org_id,
          url: d.url,
          event_kinds: d.event_kinds,
          secret_ciphertext: d.secret_ciphertext,
          created_at: d.at,
          deleted: false,
          seq: event.position,
        } satisfies SubscriptionDoc);
        return;
      }
      case 'webhook_subscription.deleted': {
        const d = event.data;
        const cur = await tx.get<SubscriptionDoc>(SUBSCRIPTIONS, d.subscription_id);
        if (cur) await tx.put(SUBSCRIPTIONS, { ...cur, deleted: true });
        return;
      }
      default:
        return;
    }
  },
};

export const publishingProjections: Projection[] = [publishingProjection];
