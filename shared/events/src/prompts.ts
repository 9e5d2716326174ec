import { Type } from '@sinclair/typebox';
import { defineEvent, type EventData, type EventOf } from './define.js';
import { topics } from './topics.js';

/**
 * Prompt lifecycle facts, produced by the knowledge-base service (which owns
 * prompts). Analytics consumes them to know an organization's prompts, their
 * text (scheduled runs ask it) and their tags (the tag filter of reports).
 */
const Uuid = Type.String({ format: 'uuid' });
const Timestamp = Type.String({ format: 'date-time' });
const kb = topics.knowledgeBase;

const promptFields = {
  prompt_id: Uuid,
  org_id: Uuid,
  name: Type.String({ minLength: 2, maxLength: 255 }),
  text: Type.String(),
  /** Tag ids; the whole set after the change. */
  tags: Type.Array(Uuid),
  at: Timestamp,
};

export const promptCreated = defineEvent(kb, 'prompt.created', 1, Type.Object(promptFields));
/** Carries the prompt's full state after the change. */
export const promptUpdated = defineEvent(kb, 'prompt.updated', 1, Type.Object(promptFields));
export const promptDeleted = defineEvent(kb, 'prompt.deleted', 1, Type.Object({ prompt_id: Uuid, org_id: Uuid, at: Timestamp }));

export const promptEvents = [promptCreated, promptUpdated, promptDeleted];

/** The prompt stream's events. */
export type PromptEvent = EventOf<(typeof promptEvents)[number]>;

export type PromptCreated = EventData<typeof promptCreated>;
export type PromptUpdated = EventData<typeof promptUpdated>;
export type PromptDeleted = EventData<typeof promptDeleted>;
