import type { Logger } from 'pino';
import type { EventBus, Subscription } from '@kb/bus';
import type { Store, StoreTransaction } from '@kb/store';
import { startEventConsumer } from '@kb/eventsourcing';
import { topics, type EnvelopeOf, type EventEnvelope } from '@kb/events';
import { foldAnswer, type PromptOutcomeState } from '../domain/prompt-outcome.js';
import { checkGate } from '../domain/gate.js';
import {
  DRAFTS,
  DRAFT_REVISIONS,
  KB_FOLDERS,
  ORGS,
  PROMPT_OUTCOMES,
  SITE_VERSIONS,
  derivedUuid,
  type DraftDoc,
  type KbFolderDoc,
  type OrgDoc,
} from '../projections/collections.js';

interface PromptOutcomeDoc extends PromptOutcomeState {
  id: string;
  org_id: string;
  prompt_id: string;
}
import type { SubscriptionsService } from '../app/subscriptions.js';

/** Verified drafts that asked for auto-publish, waiting for the auto-publisher (outside the consumer's transaction). */
export const AUTO_PUBLISH = 'publishing_auto_publish';
export interface AutoPublishDoc {
  id: string;
  draft_id: string;
  org_id: string;
  revision: number;
  status: 'pending' | 'done';
}

async function bumpSite(tx: StoreTransaction, orgId: string) {
  const cur = await tx.get<{ id: string; version: number }>(SITE_VERSIONS, orgId);
  await tx.put(SITE_VERSIONS, { id: orgId, version: (cur?.version ?? 0) + 1 });
}

/**
 * What publishing learns from others: drafts (each revision whole) from
 * generation, organization slugs from the gateway, the folder tree from the
 * knowledge base, and every fact a lifecycle
 * webhook announces (ingest, generation and its own).
 */
export async function startPublishingConsumers(deps: {
  bus: EventBus;
  store: Store;
  logger: Logger;
  subscriptions: SubscriptionsService;
  onAutoPublish: () => void;
  onDeliveriesQueued: () => void;
}): Promise<Subscription[]> {
  const putDraft = async (tx: StoreTransaction, event: EnvelopeOf<'draft.created' | 'draft.revised'>) => {
    const d = event.data;
    await tx.put(DRAFT_REVISIONS, { id: `${d.draft_id}:${d.revision}`, draft: d });
    const cur = await tx.get<DraftDoc>(DRAFTS, d.draft_id);
    if (cur && (cur.revision > d.revision || cur.deleted)) return;
    await tx.put<DraftDoc>(DRAFTS, {
      id: d.draft_id,
      org_id: d.org_id,
      revision: d.revision,
      draft: d,
      deleted: false,
      created_at: cur?.created_at ?? d.at,
      seq: cur?.seq ?? event.position,
    });
    if (d.auto_publish && d.verification === 'verified' && checkGate(d).ok) {
      await tx.put<AutoPublishDoc>(AUTO_PUBLISH, {
        id: `${d.draft_id}:${d.revision}`,
        draft_id: d.draft_id,
        org_id: d.org_id,
        revision: d.revision,
        status: 'pending',
      });
      deps.onAutoPublish();
    }
  };
  const drafts = await startEventConsumer({
    bus: deps.bus,
    store: deps.store,
    groupId: 'publishing.drafts',
    topics: [topics.generation],
    logger: deps.logger,
    handlers: {
      'draft.created': putDraft,
      'draft.revised': putDraft,
      'draft.sources_stale': async (tx, event) => {
        const d = event.data;
        const cur = await tx.get<DraftDoc>(DRAFTS, d.draft_id);
        if (!cur || cur.revision !== d.revision) return;
        await tx.put<DraftDoc>(DRAFTS, { ...cur, draft: { ...cur.draft, stale_sources: d.stale_sources } });
      },
      'draft.deleted': async (tx, event) => {
        const d = event.data;
        const cur = await tx.get<DraftDoc>(DRAFTS, d.draft_id);
        if (cur) await tx.put<DraftDoc>(DRAFTS, { ...cur, deleted: true });
      },
    },
  });
  const orgs = await startEventConsumer({
    bus: deps.bus,
    store: deps.store,
    groupId: 'publishing.organizations',
    topics: [topics.gateway],
    logger: deps.logger,
    handlers: {
      'organization.created': async (tx, event) => {
        const d = event.data;
        await tx.put<OrgDoc>(ORGS, { id: d.org_id, name: d.name, slug: d.slug });
        await bumpSite(tx, d.org_id);
      },
      'organization.updated': async (tx, event) => {
        const d = event.data;
        const cur = await tx.get<OrgDoc>(ORGS, d.org_id);
        if (!cur) return;
        await tx.put<OrgDoc>(ORGS, {
          ...cur,
          ...(d.name !== undefined && { name: d.name }),
          ...(d.slug !== undefined && { slug: d.slug }),
        });
        await bumpSite(tx, d.org_id);
      },
    },
  });
  // The folder tree (folders only), so a folder scope covers its sub-folders.
  const folders = await startEventConsumer({
    bus: deps.bus,
    store: deps.store,
    groupId: 'publishing.kb-folders',
    topics: [topics.knowledgeBase],
    logger: deps.logger,
    handlers: {
      'kb_node.created': async (tx, event) => {
        const d = event.data;
        if (d.type === 'folder') await tx.put<KbFolderDoc>(KB_FOLDERS, { id: d.kb_node_id, org_id: d.org_id, parent_id: d.parent_id });
      },
      'kb_node.moved': async (tx, event) => {
        const d = event.data;
        const cur = await tx.get<KbFolderDoc>(KB_FOLDERS, d.kb_node_id);
        if (cur) await tx.put<KbFolderDoc>(KB_FOLDERS, { ...cur, parent_id: d.parent_id });
      },
      'kb_node.deleted': async (tx, event) => {
        const d = event.data;
        if (d.type === 'folder') await tx.delete(KB_FOLDERS, d.kb_node_id);
      },
    },
  });
  const fanOut = async (tx: StoreTransaction, event: EventEnvelope) => {
    if ((await deps.subscriptions.fanOut(tx, event)) > 0) deps.onDeliveriesQueued();
  };
  // prompt.won / prompt.lost: a prompt's outcome over its latest answers turned
  // won or lost. Derived here, in the answer's own transaction (once per answer:
  // the inbox), with an id derived from the answer event's.
  const outcomes = await startEventConsumer({
    bus: deps.bus,
    store: deps.store,
    groupId: 'publishing.prompt-outcomes',
    topics: [topics.answers],
    logger: deps.logger,
    handlers: {
      'answer.collected': async (tx, event) => {
        const a = event.data;
        const id = `${a.org_id}:${a.prompt_id}`;
        const cur = await tx.get<PromptOutcomeDoc>(PROMPT_OUTCOMES, id);
        const { state, previous, changed } = foldAnswer(cur, a);
        if (state === cur) return;
        await tx.put<PromptOutcomeDoc>(PROMPT_OUTCOMES, { id, org_id: a.org_id, prompt_id: a.prompt_id, ...state });
        if (!changed || (state.outcome !== 'won' && state.outcome !== 'lost')) return;
        await fanOut(tx, {
          ...event,
          id: derivedUuid(`prompt-outcome:${event.id}`),
          type: `prompt.${state.outcome}`,
          data: {
            org_id: a.org_id,
            prompt_id: a.prompt_id,
            outcome: state.outcome,
            previous,
            model: a.model,
            location: a.location,
            answer_id: a.answer_id,
            at: a.run_at,
          },
        } satisfies EventEnvelope);
      },
    },
  });
  const lifecycle = await startEventConsumer({
    bus: deps.bus,
    store: deps.store,
    groupId: 'publishing.lifecycle-webhooks',
    topics: [topics.ingest, topics.generation, topics.publishing],
    logger: deps.logger,
    handlers: Object.fromEntries(
      [
        'content.extracted',
        'content.failed',
        'generation_run.completed',
        'generation_run.failed',
        'draft.sources_stale',
        'piece.approved',
        'piece.published',
        'piece.publish_failed',
        'piece.unpublished',
      ].map((t) => [t, fanOut]),
    ),
  });
  return [drafts, orgs, folders, lifecycle, outcomes];
}
