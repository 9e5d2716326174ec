import { errors } from '@kb/platform';
import type { Decider, DecidedEvent, Stored } from '@kb/eventsourcing';
import type { PromptEvent } from '@kb/events';
import { cleanName } from './names.js';

/**
 * The prompt aggregate (spec 2.4): a named question, its text with {{variable}}
 * placeholders kept verbatim, and its tags. Names are unique per organization,
 * which spans streams: the use case checks the name index read model.
 */
export const PROMPT_TEXT_MAX = 10_000;

export interface PromptState {
  status: 'new' | 'active' | 'deleted';
  prompt_id: string;
  org_id: string;
  name: string;
  text: string;
  tags: string[];
}

export type PromptCommand =
  | { type: 'create'; prompt_id: string; org_id: string; name: string; text: string; tags: string[]; at: string }
  /** Only the fields given change; prompt.updated carries the whole prompt after the change. */
  | { type: 'update'; org_id: string; name?: string; text?: string; tags?: string[]; at: string }
  | { type: 'delete'; org_id: string; at: string };

export const promptStream = (promptId: string): string => `prompt-${promptId}`;

/** Distinct {{variable}} names in order of first use; the text itself is never rewritten. */
export function variablesOf(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/\{\{\s*([A-Za-z_][\w.-]*)\s*\}\}/g)) if (!out.includes(m[1]!)) out.push(m[1]!);
  return out;
}

export function checkText(text: string): string {
  if (typeof text !== 'string' || text.trim().length === 0) {
    throw errors.validation('text is required', { code: 'invalid_text', details: { field: 'text' } });
  }
  if (text.length > PROMPT_TEXT_MAX) {
    throw errors.validation(`text must be at most ${PROMPT_TEXT_MAX} characters`, { code: 'invalid_text', details: { field: 'text' } });
  }
  return text;
}

const initialState = (): PromptState => ({ status: 'new', prompt_id: '', org_id: '', name: '', text: '', tags: [] });

function evolve(state: PromptState, event: Stored<PromptEvent>): PromptState {
  switch (event.type) {
    case 'prompt.created':
    case 'prompt.updated': {
      const d = event.data;
      return { status: 'active', prompt_id: d.prompt_id, org_id: d.org_id, name: d.name, text: d.text, tags: d.tags };
    }
    case 'prompt.deleted':
      return { ...state, status: 'deleted' };
    default:
      return state;
  }
}

/** Another organization's prompt is indistinguishable from a missing one. */
function requireActive(state: PromptState, orgId: string): void {
  if (state.status !== 'active' || state.org_id !== orgId) throw errors.notFound('Prompt');
}

function decide(command: PromptCommand, state: PromptState): DecidedEvent[] {
  switch (command.type) {
    case 'create': {
      if (state.status !== 'new') throw errors.conflict('Prompt already exists', { code: 'prompt_exists' });
      const data = {
        prompt_id: command.prompt_id,
        org_id: command.org_id,
        name: cleanName(command.name),
        text: checkText(command.text),
        tags: [...new Set(command.tags)],
        at: command.at,
      };
      return [{ type: 'prompt.created', data }];
    }
    case 'update': {
      requireActive(state, command.org_id);
      const next = {
        prompt_id: state.prompt_id,
        org_id: state.org_id,
        name: command.name === undefined ? state.name : cleanName(command.name),
        text: command.text === undefined ? state.text : checkText(command.text),
        tags: command.tags === undefined ? state.tags : [...new Set(command.tags)],
      };
      const same = next.name === state.name && next.text === state.text && next.tags.join() === state.tags.join();
      return same ? [] : [{ type: 'prompt.updated', data: { ...next, at: command.at } }];
    }
    case 'delete':
      requireActive(state, command.org_id);
      return [{ type: 'prompt.deleted', data: { prompt_id: state.prompt_id, org_id: state.org_id, at: command.at } }];
    default: {
      const never: never = command;
      throw new Error(`Unknown command ${JSON.stringify(never)}`);
    }
  }
}

export const promptDecider: Decider<PromptCommand, PromptState, PromptEvent> = { initialState, evolve, decide };
