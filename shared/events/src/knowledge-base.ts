import { Type } from '@sinclair/typebox';
import { defineEvent, type EventData, type EventOf } from './define.js';
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

// The knowledge-base tree (spec 2.6): one stream per node. The root folder of an
// organization is created lazily by the first tree call (parent_id null).
const NodeType = Type.Union([Type.Literal('folder'), Type.Literal('content')]);
const NodeName = Type.String({ minLength: 1, maxLength: 255 });

export const kbNodeCreated = defineEvent(
  kb,
  'kb_node.created',
  1,
  Type.Object({
    kb_node_id: Uuid,
    org_id: Uuid,
    type: NodeType,
    /** null only for the organization's root folder. */
    parent_id: Type.Union([Uuid, Type.Null()]),
    name: NodeName,
    /** Content nodes: the ingest service's content item. */
    content_id: Type.Optional(Uuid),
    at: Timestamp,
  }),
);
export const kbNodeRenamed = defineEvent(
  kb,
  'kb_node.renamed',
  1,
  Type.Object({ kb_node_id: Uuid, org_id: Uuid, name: NodeName, at: Timestamp }),
);
export const kbNodeMoved = defineEvent(
  kb,
  'kb_node.moved',
  1,
  Type.Object({ kb_node_id: Uuid, org_id: Uuid, parent_id: Uuid, from_parent_id: Uuid, at: Timestamp }),
);
/**
 * A node left the tree. For a content node (content_id set) the content item
 * itself is the ingest service's: ingest deletes it when it receives this.
 */
export const kbNodeDeleted = defineEvent(
  kb,
  'kb_node.deleted',
  1,
  Type.Object({ kb_node_id: Uuid, org_id: Uuid, type: NodeType, content_id: Type.Optional(Uuid), at: Timestamp }),
);

// Tags (spec 2.8): organization-scoped labels; names unique per organization, ignoring case.
const TagName = Type.String({ minLength: 1, maxLength: 100 });
const Color = Type.String({ pattern: '^#[0-9a-fA-F]{6}$' });
export const tagCreated = defineEvent(
  kb,
  'tag.created',
  1,
  Type.Object({ tag_id: Uuid, org_id: Uuid, name: TagName, color: Type.Optional(Color), at: Timestamp }),
);
export const tagUpdated = defineEvent(
  kb,
  'tag.updated',
  1,
  Type.Object({
    tag_id: Uuid,
    org_id: Uuid,
    name: Type.Optional(TagName),
    /** null clears the color. */
    color: Type.Optional(Type.Union([Color, Type.Null()])),
    at: Timestamp,
  }),
);
export const tagDeleted = defineEvent(kb, 'tag.deleted', 1, Type.Object({ tag_id: Uuid, org_id: Uuid, at: Timestamp }));

/** The whole tag set of one taggable thing after a change (KB node, content item; later prompts, queries). */
const TaggableType = Type.Union([Type.Literal('kb_node'), Type.Literal('content'), Type.Literal('prompt'), Type.Literal('search_query')]);
export const tagsSet = defineEvent(
  kb,
  'tags.set',
  1,
  Type.Object({
    org_id: Uuid,
    target_type: TaggableType,
    target_id: Uuid,
    tag_ids: Type.Array(Uuid),
    /** Why: the caller's request, the intake's tags, or an automatic rule. */
    origin: Type.Union([Type.Literal('request'), Type.Literal('intake'), Type.Literal('rule')]),
    at: Timestamp,
  }),
);

/** Automatic tagging: every condition present must match (folder subtree, file format, source kind). */
export const tagRuleCreated = defineEvent(
  kb,
  'tag_rule.created',
  1,
  Type.Object({
    rule_id: Uuid,
    org_id: Uuid,
    tag_id: Uuid,
    folder_id: Type.Optional(Uuid),
    format: Type.Optional(Type.String({ minLength: 1, maxLength: 20 })),
    source_kind: Type.Optional(Type.Union([Type.Literal('raw'), Type.Literal('file'), Type.Literal('url')])),
    at: Timestamp,
  }),
);
export const tagRuleDeleted = defineEvent(kb, 'tag_rule.deleted', 1, Type.Object({ rule_id: Uuid, org_id: Uuid, at: Timestamp }));

export const knowledgeBaseEvents = [
  categoryCreated,
  categoryUpdated,
  categoryDeleted,
  topicCreated,
  topicUpdated,
  topicDeleted,
  kbNodeCreated,
  kbNodeRenamed,
  kbNodeMoved,
  kbNodeDeleted,
  tagCreated,
  tagUpdated,
  tagDeleted,
  tagsSet,
  tagRuleCreated,
  tagRuleDeleted,
];

/** Every knowledge-base event (categories, topics, tree nodes, tags, tag rules). */
export type KnowledgeBaseEvent = EventOf<(typeof knowledgeBaseEvents)[number]>;

export type CategoryCreated = EventData<typeof categoryCreated>;
export type CategoryUpdated = EventData<typeof categoryUpdated>;
export type CategoryDeleted = EventData<typeof categoryDeleted>;
export type TopicCreated = EventData<typeof topicCreated>;
export type TopicUpdated = EventData<typeof topicUpdated>;
export type TopicDeleted = EventData<typeof topicDeleted>;
export type KbNodeCreated = EventData<typeof kbNodeCreated>;
export type KbNodeRenamed = EventData<typeof kbNodeRenamed>;
export type KbNodeMoved = EventData<typeof kbNodeMoved>;
export type KbNodeDeleted = EventData<typeof kbNodeDeleted>;
export type TagCreated = EventData<typeof tagCreated>;
export type TagUpdated = EventData<typeof tagUpdated>;
export type TagDeleted = EventData<typeof tagDeleted>;
export type TagsSet = EventData<typeof tagsSet>;
export type TagRuleCreated = EventData<typeof tagRuleCreated>;
export type TagRuleDeleted = EventData<typeof tagRuleDeleted>;
