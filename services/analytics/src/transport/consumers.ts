import type { Logger } from 'pino';
import type { EventBus, Subscription } from '@kb/bus';
import type { Store, StoreTransaction } from '@kb/store';
import { startEventConsumer } from '@kb/eventsourcing';
import { topics, type EnvelopeOf } from '@kb/events';
import { ORGANIZATIONS, PROMPTS, type OrganizationDoc, type PromptDoc } from '../projections/collections.js';
import { retagRows } from '../projections/answers.js';

/** A prompt's new version; its tag rows follow its tags in the same transaction. */
async function savePrompt(tx: StoreTransaction, before: PromptDoc | undefined, doc: PromptDoc) {
  await tx.put(PROMPTS, doc);
  await retagRows(tx, doc.org_id, doc.id, before?.org_id === doc.org_id ? before : undefined, doc);
}

export async function putPrompt(tx: StoreTransaction, event: EnvelopeOf<'prompt.created' | 'prompt.updated'>) {
  const d = event.data;
  const doc: PromptDoc = { id: d.prompt_id, org_id: d.org_id, name: d.name, text: d.text, tags: d.tags, deleted: false };
  await savePrompt(tx, await tx.get<PromptDoc>(PROMPTS, d.prompt_id), doc);
}

export async function deletePrompt(tx: StoreTransaction, event: EnvelopeOf<'prompt.deleted'>) {
  const id = event.data.prompt_id;
  const current = await tx.get<PromptDoc>(PROMPTS, id);
  if (current) await savePrompt(tx, current, { ...current, deleted: true });
}

/**
 * What analytics learns from other services: prompts (their text for scheduled
 * runs, their tags for the tag filter) from knowledge-base, and organizations
 * (their name, the default brand name; their runs switch) from the gateway.
 */
export async function startAnalyticsConsumers(deps: { bus: EventBus; store: Store; logger: Logger }): Promise<Subscription[]> {
  const prompts = await startEventConsumer({
    bus: deps.bus,
    store: deps.store,
    groupId: 'analytics.prompts',
    topics: [topics.knowledgeBase],
    logger: deps.logger,
    handlers: {
      'prompt.created': putPrompt,
      'prompt.updated': putPrompt,
      'prompt.deleted': deletePrompt,
    },
  });
  const organizations = await startEventConsumer({
    bus: deps.bus,
    store: deps.store,
    groupId: 'analytics.organizations',
    topics: [topics.gateway],
    logger: deps.logger,
    handlers: {
      'organization.created': async (tx, event) => {
        const d = event.data;
        const current = await tx.get<OrganizationDoc>(ORGANIZATIONS, d.org_id);
        await tx.put(ORGANIZATIONS, { ...current, id: d.org_id, name: d.name });
      },
      // Only the fields that changed are present; an empty websites array clears them.
      'organization.updated': async (tx, event) => {
        const d = event.data;
        const current = (await tx.get<OrganizationDoc>(ORGANIZATIONS, d.org_id)) ?? { id: d.org_id, name: d.name ?? '' };
        await tx.put(ORGANIZATIONS, {
          ...current,
          ...(d.name !== undefined && { name: d.name }),
          ...(d.websites !== undefined && { websites: d.websites, websites_at: d.at }),
        });
      },
      'organization.runs_enabled_changed': async (tx, event) => {
        const d = event.data;
        const current = (await tx.get<OrganizationDoc>(ORGANIZATIONS, d.org_id)) ?? { id: d.org_id, name: '' };
        await tx.put(ORGANIZATIONS, { ...current, runs_enabled: d.runs_enabled });
      },
    },
  });
  return [prompts, organizations];
}
