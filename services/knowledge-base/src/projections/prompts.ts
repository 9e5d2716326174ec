import { errors } from '@kb/platform';
import { DuplicateKeyError, type StoreTransaction } from '@kb/store';
import type { Projection, Stored } from '@kb/eventsourcing';

import { nameKey } from '../domain/names.js';
import { variablesOf } from '../domain/prompt.js';

export const PROMPTS = 'prompts';
/** One document per live prompt name per organization: the uniqueness index. */
export const PROMPT_NAMES = 'prompt_names';

export interface PromptDoc {
  id: string;
  prompt_id: string;
  org_id: string;
  name: string;
  text: string;
  variables: string[];
  /** Tag ids as the prompt events carry them. */
  tags: string[];
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
  seq: number;
}

export const promptNameId = (orgId: string, name: string): string => `${orgId}:${nameKey(name)}`;

async function reserveName(tx: StoreTransaction, orgId: string, name: string, promptId: string): Promise<void> {
  try {
    await tx.insert(PROMPT_NAMES, { id: promptNameId(orgId, name), prompt_id: promptId });
  } catch (err) {
    if (err instanceof DuplicateKeyError) throw errors.conflict(`A prompt named "${name}" already exists`, { code: 'prompt_name_taken' });
    throw err;
  }
}

export const promptsProjection: Projection = {
  name: 'prompts',
  collections: [PROMPTS, PROMPT_NAMES],
  indexes: [{ collection: PROMPTS, fields: ['org_id', 'deleted_at', 'seq'] }],
  async apply(tx: StoreTransaction, event: Stored): Promise<void> {
    switch (event.type) {
      case 'prompt.created': {
        const d = event.data;
        await reserveName(tx, d.org_id, d.name, d.prompt_id);
        const doc: PromptDoc = {
          id: d.prompt_id,
          prompt_id: d.prompt_id,
          org_id: d.org_id,
          name: d.name,
          text: d.text,
          variables: variablesOf(d.text),
          tags: d.tags,
          created_at: d.at,
          updated_at: d.at,
          deleted_at: null,
          seq: event.position,
        };
        await tx.put(PROMPTS, doc);
        return;
      }
      case 'prompt.updated': {
        const d = event.data;
        const current = await tx.get<PromptDoc>(PROMPTS, d.prompt_id);
        if (!current) return;
        if (nameKey(current.name) !== nameKey(d.name)) {
          await tx.delete(PROMPT_NAMES, promptNameId(d.org_id, current.name));
          await reserveName(tx, d.org_id, d.name, d.prompt_id);
        }
        await tx.put(PROMPTS, { ...current, name: d.name, text: d.text, variables: variablesOf(d.text), tags: d.tags, updated_at: d.at });
        return;
      }
      case 'prompt.deleted': {
        const d = event.data;
        const current = await tx.get<PromptDoc>(PROMPTS, d.prompt_id);
        if (!current) return;
        await tx.delete(PROMPT_NAMES, promptNameId(d.org_id, current.name));
        await tx.put(PROMPTS, { ...current, deleted_at: d.at, updated_at: d.at });
        return;
      }
      default:
        return;
    }
  },
};
