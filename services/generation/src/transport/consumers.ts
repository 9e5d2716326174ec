import type { Logger } from 'pino';
import type { EventBus, Subscription } from '@kb/bus';
import type { Store, StoreTransaction } from '@kb/store';
import type { CommandBus } from '@kb/eventsourcing';
import { startEventConsumer } from '@kb/eventsourcing';
import { topics, type EnvelopeOf } from '@kb/events';
import { draftDecider, draftStream } from '../domain/aggregates.js';
import { DRAFT_SOURCES, type DraftSourceDoc } from '../projections/index.js';
import { ORGANIZATIONS, type OrganizationDoc } from '../projections/organizations.js';
import { PROMPTS, type PromptDoc } from '../projections/prompts.js';

/**
 * Drift (issue item 5): a new version or the deletion of a content item marks
 * every draft citing it as having stale sources, in the consumer's transaction
 * (inbox mark, the drafts' events and read models commit together).
 */
async function markDrafts(
  commands: CommandBus,
  tx: StoreTransaction,
  event: EnvelopeOf<'content.version_added' | 'content.deleted'>,
  reason: 'new_version' | 'deleted',
) {
  const d = event.data;
  const versionId = event.type === 'content.version_added' ? event.data.version_id : undefined;
  const rows = await tx.find<DraftSourceDoc>(DRAFT_SOURCES, { where: { content_id: d.content_id } });
  for (const row of rows) {
    if (row.org_id !== d.org_id) continue;
    await commands.within(tx, { metadata: { org_id: d.org_id, actor: 'system:generation', causation_id: event.id } }, (s) =>
      s.execute(draftDecider, draftStream(row.draft_id), {
        type: 'mark_stale',
        content_id: d.content_id,
        reason,
        ...(versionId && { new_version_id: versionId }),
        at: d.at,
      }),
    );
  }
}

/** Prompts (their tags pick the content engine's targets), from knowledge-base. */
async function putPrompt(tx: StoreTransaction, event: EnvelopeOf<'prompt.created' | 'prompt.updated'>) {
  const d = event.data;
  const doc: PromptDoc = { id: d.prompt_id, org_id: d.org_id, name: d.name, text: d.text, tags: d.tags, deleted: false };
  await tx.put(PROMPTS, doc);
}

export async function startGenerationConsumers(deps: {
  bus: EventBus;
  store: Store;
  commands: CommandBus;
  logger: Logger;
}): Promise<Subscription[]> {
  const organizations = await startEventConsumer({
    bus: deps.bus,
    store: deps.store,
    groupId: 'generation.organizations',
    topics: [topics.gateway],
    logger: deps.logger,
    handlers: {
      'organization.runs_enabled_changed': async (tx, event) => {
        const d = event.data;
        const current = (await tx.get<OrganizationDoc>(ORGANIZATIONS, d.org_id)) ?? { id: d.org_id };
        await tx.put(ORGANIZATIONS, { ...current, runs_enabled: d.runs_enabled });
      },
    },
  });
  const drift = await startEventConsumer({
    bus: deps.bus,
    store: deps.store,
    groupId: 'generation.drift',
    topics: [topics.ingest],
    logger: deps.logger,
    handlers: {
      'content.version_added': (tx, event) => markDrafts(deps.commands, tx, event, 'new_version'),
      'content.deleted': (tx, event) => markDrafts(deps.commands, tx, event, 'deleted'),
    },
  });
  const prompts = await startEventConsumer({
    bus: deps.bus,
    store: deps.store,
    groupId: 'generation.prompts',
    topics: [topics.knowledgeBase],
    logger: deps.logger,
    handlers: {
      'prompt.created': putPrompt,
      'prompt.updated': putPrompt,
      'prompt.deleted': async (tx, event) => {
        const current = await tx.get<PromptDoc>(PROMPTS, event.data.prompt_id);
        if (current) await tx.put(PROMPTS, { ...current, deleted: true });
      },
    },
  });
  return [organizations, drift, prompts];
}
