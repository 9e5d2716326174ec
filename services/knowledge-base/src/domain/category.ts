import { errors } from '@kb/platform';
import type { Decider, DecidedEvent, Stored } from '@kb/eventsourcing';
import type { EventsNamed } from '@kb/events';

import { checkDescription, cleanName, nameKey } from './names.js';

/**
 * The category aggregate owns its topics: topic names are unique inside one
 * category, which this stream can decide alone. Category names are unique per
 * organization, which spans streams, so the use case checks that against the
 * name index read model.
 */
export interface TopicState {
  topic_id: string;
  name: string;
  deleted: boolean;
}

export interface CategoryState {
  status: 'new' | 'active' | 'deleted';
  category_id: string;
  org_id: string;
  name: string;
  topics: Record<string, TopicState>;
}

export type CategoryCommand =
  | { type: 'create'; category_id: string; org_id: string; name: string; description?: string; at: string }
  | { type: 'update'; org_id: string; name?: string; description?: string | null; at: string }
  | { type: 'delete'; org_id: string; at: string }
  | { type: 'add_topic'; org_id: string; topic_id: string; name: string; description?: string; at: string }
  | { type: 'update_topic'; org_id: string; topic_id: string; name?: string; description?: string | null; at: string }
  | { type: 'delete_topic'; org_id: string; topic_id: string; at: string };

export const categoryStream = (categoryId: string): string => `category-${categoryId}`;

const initialState = (): CategoryState => ({ status: 'new', category_id: '', org_id: '', name: '', topics: {} });

function evolve(state: CategoryState, event: Stored<EventsNamed<'category' | 'topic'>>): CategoryState {
  switch (event.type) {
    case 'category.created': {
      const d = event.data;
      return { status: 'active', category_id: d.category_id, org_id: d.org_id, name: d.name, topics: {} };
    }
    case 'category.updated': {
      const d = event.data;
      return d.name === undefined ? state : { ...state, name: d.name };
    }
    case 'category.deleted':
      return { ...state, status: 'deleted' };
    case 'topic.created': {
      const d = event.data;
      return { ...state, topics: { ...state.topics, [d.topic_id]: { topic_id: d.topic_id, name: d.name, deleted: false } } };
    }
    case 'topic.updated': {
      const d = event.data;
      const topic = state.topics[d.topic_id];
      if (!topic || d.name === undefined) return state;
      return { ...state, topics: { ...state.topics, [d.topic_id]: { ...topic, name: d.name } } };
    }
    case 'topic.deleted': {
      const id = event.data.topic_id;
      const topic = state.topics[id];
      return topic ? { ...state, topics: { ...state.topics, [id]: { ...topic, deleted: true } } } : state;
    }
    default:
      return state;
  }
}

/** Another organization's category is indistinguishable from a missing one. */
function requireActive(state: CategoryState, orgId: string): void {
  if (state.status !== 'active' || state.org_id !== orgId) throw errors.notFound('Category');
}

function requireTopic(state: CategoryState, topicId: string): TopicState {
  const topic = state.topics[topicId];
  if (!topic || topic.deleted) throw errors.notFound('Topic');
  return topic;
}

function requireFreeTopicName(state: CategoryState, name: string, except?: string): void {
  const key = nameKey(name);
  const taken = Object.values(state.topics).some((t) => !t.deleted && t.topic_id !== except && nameKey(t.name) === key);
  if (taken) throw errors.conflict(`A topic named "${name}" already exists in this category`, { code: 'topic_name_taken' });
}

/** Optional fields are left out of event data rather than set to undefined. */
const withOptional = <T extends Record<string, unknown>>(data: T, extra: Record<string, unknown>): T => {
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) (data as Record<string, unknown>)[k] = v;
  return data;
};

function decide(command: CategoryCommand, state: CategoryState): DecidedEvent[] {
  switch (command.type) {
    case 'create': {
      if (state.status !== 'new') throw errors.conflict('Category already exists', { code: 'category_exists' });
      checkDescription(command.description);
      const data = withOptional(
        { category_id: command.category_id, org_id: command.org_id, name: cleanName(command.name), at: command.at },
        { description: command.description },
      );
      return [{ type: 'category.created', data }];
    }
    case 'update': {
      requireActive(state, command.org_id);
      checkDescription(command.description);
      const data = withOptional(
        { category_id: state.category_id, org_id: state.org_id, at: command.at },
        { name: command.name === undefined ? undefined : cleanName(command.name), description: command.description },
      );
      return [{ type: 'category.updated', data }];
    }
    case 'delete':
      requireActive(state, command.org_id);
      return [{ type: 'category.deleted', data: { category_id: state.category_id, org_id: state.org_id, at: command.at } }];
    case 'add_topic': {
      requireActive(state, command.org_id);
      const name = cleanName(command.name);
      checkDescription(command.description);
      requireFreeTopicName(state, name);
      const data = withOptional(
        { topic_id: command.topic_id, category_id: state.category_id, org_id: state.org_id, name, at: command.at },
        { description: command.description },
      );
      return [{ type: 'topic.created', data }];
    }
    case 'update_topic': {
      requireActive(state, command.org_id);
      requireTopic(state, command.topic_id);
      checkDescription(command.description);
      const name = command.name === undefined ? undefined : cleanName(command.name);
      if (name !== undefined) requireFreeTopicName(state, name, command.topic_id);
      const data = withOptional(
        { topic_id: command.topic_id, category_id: state.category_id, org_id: state.org_id, at: command.at },
        { name, description: command.description },
      );
      return [{ type: 'topic.updated', data }];
    }
    case 'delete_topic':
      requireActive(state, command.org_id);
      requireTopic(state, command.topic_id);
      return [
        {
          type: 'topic.deleted',
          data: { topic_id: command.topic_id, category_id: state.category_id, org_id: state.org_id, at: command.at },
        },
      ];
    default: {
      const never: never = command;
      throw new Error(`Unknown command ${JSON.stringify(never)}`);
    }
  }
}

export const categoryDecider: Decider<CategoryCommand, CategoryState, EventsNamed<'category' | 'topic'>> = { initialState, evolve, decide };
