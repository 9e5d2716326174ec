import { errors } from '@kb/platform';
import type { Decider, DecidedEvent, Stored } from '@kb/eventsourcing';
import type { EventsNamed } from '@kb/events';

/**
 * A tag (spec 2.8): an organization-scoped label. Names are unique per
 * organization ignoring case, which spans streams: the use case checks the
 * name index read model, and the projection's unique insert backs it up.
 */
export interface TagState {
  status: 'new' | 'live' | 'deleted';
  tag_id: string;
  org_id: string;
  name: string;
}

export type TagCommand =
  | { type: 'create'; tag_id: string; org_id: string; name: string; color?: string; at: string }
  | { type: 'update'; org_id: string; name?: string; color?: string | null; at: string }
  | { type: 'delete'; org_id: string; at: string };

export const TAG_NAME_MAX = 100;
const COLOR_RE = /^#[0-9a-fA-F]{6}$/;

export const tagStream = (tagId: string): string => `tag-${tagId}`;

export function cleanTagName(raw: string): string {
  const name = raw.trim();
  if (name.length < 1 || name.length > TAG_NAME_MAX) {
    throw errors.validation(`tag names must be 1 to ${TAG_NAME_MAX} characters`, { code: 'invalid_name', details: { field: 'name' } });
  }
  return name;
}

function checkColor(color: string | null | undefined): void {
  if (typeof color === 'string' && !COLOR_RE.test(color)) {
    throw errors.validation('color must be #rrggbb', { code: 'invalid_color', details: { field: 'color' } });
  }
}

const initialState = (): TagState => ({ status: 'new', tag_id: '', org_id: '', name: '' });

function evolve(state: TagState, event: Stored<EventsNamed<'tag'>>): TagState {
  switch (event.type) {
    case 'tag.created': {
      const d = event.data;
      return { status: 'live', tag_id: d.tag_id, org_id: d.org_id, name: d.name };
    }
    case 'tag.updated': {
      const d = event.data;
      return d.name === undefined ? state : { ...state, name: d.name };
    }
    case 'tag.deleted':
      return { ...state, status: 'deleted' };
    default:
      return state;
  }
}

function requireLive(state: TagState, orgId: string): void {
  if (state.status !== 'live' || state.org_id !== orgId) throw errors.notFound('Tag');
}

function decide(command: TagCommand, state: TagState): DecidedEvent[] {
  switch (command.type) {
    case 'create': {
      if (state.status !== 'new') throw errors.conflict('Tag already exists', { code: 'tag_exists' });
      checkColor(command.color);
      const data: Record<string, unknown> = {
        tag_id: command.tag_id,
        org_id: command.org_id,
        name: cleanTagName(command.name),
        at: command.at,
      };
      if (command.color !== undefined) data.color = command.color;
      return [{ type: 'tag.created', data }];
    }
    case 'update': {
      requireLive(state, command.org_id);
      checkColor(command.color);
      const data: Record<string, unknown> = { tag_id: state.tag_id, org_id: state.org_id, at: command.at };
      if (command.name !== undefined) data.name = cleanTagName(command.name);
      if (command.color !== undefined) data.color = command.color;
      return [{ type: 'tag.updated', data }];
    }
    case 'delete':
      requireLive(state, command.org_id);
      return [{ type: 'tag.deleted', data: { tag_id: state.tag_id, org_id: state.org_id, at: command.at } }];
    default: {
      const never: never = command;
      throw new Error(`Unknown command ${JSON.stringify(never)}`);
    }
  }
}

export const tagDecider: Decider<TagCommand, TagState, EventsNamed<'tag'>> = { initialState, evolve, decide };
