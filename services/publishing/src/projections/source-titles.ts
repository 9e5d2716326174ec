import type { Logger } from 'pino';
import type { EventBus, Subscription } from '@kb/bus';
import type { Store, StoreTransaction } from '@kb/store';
import { startEventConsumer } from '@kb/eventsourcing';
import { topics, type EnvelopeOf } from '@kb/events';
import { bumpSite } from './index.js';

/**
 * The titles of the knowledge base's documents, from ingest's events, so a hosted
 * page names each source it cites without asking another service while it renders.
 * A title kept after its document is deleted still names what the page quoted.
 */
export const SOURCE_TITLES = 'publishing_source_titles';
export interface SourceTitleDoc {
  /** The content id. */
  id: string;
  org_id: string;
  title: string;
}

/** Records a title; a new or changed one bumps the site's version, so cached pages are rendered again with it. */
async function putTitle(tx: StoreTransaction, d: { content_id: string; org_id: string; title?: string }) {
  if (!d.title) return;
  const cur = await tx.get<SourceTitleDoc>(SOURCE_TITLES, d.content_id);
  if (cur?.title === d.title) return;
  await tx.put<SourceTitleDoc>(SOURCE_TITLES, { id: d.content_id, org_id: d.org_id, title: d.title });
  await bumpSite(tx, d.org_id);
}

export function startSourceTitles(deps: { bus: EventBus; store: Store; logger: Logger }): Promise<Subscription> {
  const fromVersion = (tx: StoreTransaction, event: EnvelopeOf<'content.created' | 'content.version_added'>) => putTitle(tx, event.data);
  return startEventConsumer({
    bus: deps.bus,
    store: deps.store,
    groupId: 'publishing.source-titles',
    topics: [topics.ingest],
    logger: deps.logger,
    handlers: {
      'content.created': fromVersion,
      'content.version_added': fromVersion,
      'content.updated': (tx, event) => putTitle(tx, event.data),
    },
  });
}

/** The titles of the given documents of one organization (those known). */
export async function sourceTitles(store: Pick<Store, 'get'>, orgId: string, contentIds: Iterable<string>): Promise<Map<string, string>> {
  const titles = new Map<string, string>();
  for (const id of new Set(contentIds)) {
    const doc = await store.get<SourceTitleDoc>(SOURCE_TITLES, id);
    if (doc && doc.org_id === orgId) titles.set(id, doc.title);
  }
  return titles;
}
