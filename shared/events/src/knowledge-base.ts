import { Type } from '@sinclair/typebox';
import { defineEvent, type EventData } from './define.js';
import { topics } from './topics.js';

const Uuid = Type.String({ format: 'uuid' });
const Timestamp = Type.String({ format: 'date-time' });
const Name = Type.String({ minLength: 2, maxLength: 255 });
const Description = Type.String({ maxLength: 1000 });
const kb = topics.knowledgeBase;

export const categoryCreated = defineEvent(
  kb,
  'category.created',
  1,
  Type.Object({ category_id: Uuid, org_id: Uuid, name: Name, description: Type.Optional(Description), at: Timestamp }),
);
export const categoryUpdated = defineEvent(
  kb,
  'category.updated',
  1,
  Type.Object({
    category_id: Uuid,
    org_id: Uuid,
    name: Type.Optional(Name),
    /** null clears the description (PUT without one). */
    description: Type.Optional(Type.Union([Description, Type.Null()])),
    at: Timestamp,
  }),
);
export const categoryDeleted = defineEvent(kb, 'category.deleted', 1, Type.Object({ category_id: Uuid, org_id: Uuid, at: Timestamp }));
export const topicCreated = defineEvent(
  kb,
  'topic.created',
  1,
  Type.Object({
    topic_id: Uuid,
    category_id: Uuid,
    org_id: Uuid,
    name: Name,
    description: Type.Optional(Description),
    at: Timestamp,
  }),
);
export const topicUpdated = defineEvent(
  kb,
  'topic.updated',
  1,
  Type.Object({
    topic_id: Uuid,
    category_id: Uuid,
    org_id: Uuid,
    name: Type.Optional(Name),
    description: Type.Optional(Type.Union([Description, Type.Null()])),
    at: Timestamp,
  }),
);
export const topicDeleted = defineEvent(
  kb,
  'topic.deleted',
  1,
  Type.Object({ topic_id: Uuid, category_id: Uuid, org_id: Uuid, at: Timestamp }),
);

export const knowledgeBaseEvents = [categoryCreated, categoryUpdated, categoryDeleted, topicCreated, topicUpdated, topicDeleted];

export type CategoryCreated = EventData<typeof categoryCreated>;
export type CategoryUpdated = EventData<typeof categoryUpdated>;
export type CategoryDeleted = EventData<typeof categoryDeleted>;
export type TopicCreated = EventData<typeof topicCreated>;
export type TopicUpdated = EventData<typeof topicUpdated>;
export type TopicDeleted = EventData<typeof topicDeleted>;
