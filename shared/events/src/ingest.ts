import { Type } from '@sinclair/typebox';
import { defineEvent, type EventData, type EventOf } from './define.js';
import { topics } from './topics.js';

/**
 * The content lifecycle, produced by the ingest service. The knowledge-base
 * service consumes these to keep its tree, content listing and search index.
 * Chunk text travels in `content.chunks_added` batches (each well under 1 MB,
 * Kafka's default message limit); `content.extracted` closes a version.
 */
const Uuid = Type.String({ format: 'uuid' });
const Timestamp = Type.String({ format: 'date-time' });
const ingest = topics.ingest;

const ContentKind = Type.Union([Type.Literal('raw'), Type.Literal('document'), Type.Literal('web')]);
const Source = Type.Object({
  kind: Type.Union([Type.Literal('raw'), Type.Literal('file'), Type.Literal('url')]),
  filename: Type.Optional(Type.String()),
  /** Detected from the bytes, not the name (e.g. application/pdf). */
  media_type: Type.Optional(Type.String()),
  /** pdf, docx, doc, xlsx, xls, pptx, ppt, html, csv, json, xml, txt, md */
  format: Type.Optional(Type.String()),
  size_bytes: Type.Integer({ minimum: 0 }),
  sha256: Type.String({ minLength: 64, maxLength: 64 }),
});

/** A new version was accepted (version 1 creates the content item). Processing is queued. */
const versionFields = {
  content_id: Uuid,
  version_id: Uuid,
  version_num: Type.Integer({ minimum: 1 }),
  org_id: Uuid,
  type: ContentKind,
  title: Type.String({ minLength: 1 }),
  summary: Type.Optional(Type.String()),
  source: Source,
  /** KB folder the content node goes under; null: the organization's root folder. */
  parent_id: Type.Union([Uuid, Type.Null()]),
  category_id: Type.Optional(Uuid),
  topic_id: Type.Optional(Uuid),
  /** Tags by id or by name as the caller gave them; unknown names are created by the knowledge base. */
  tags: Type.Array(Type.String({ minLength: 1 })),
  at: Timestamp,
};
export const contentCreated = defineEvent(ingest, 'content.created', 1, Type.Object(versionFields));
export const contentVersionAdded = defineEvent(ingest, 'content.version_added', 1, Type.Object(versionFields));

export const contentProcessingStarted = defineEvent(
  ingest,
  'content.processing_started',
  1,
  Type.Object({ content_id: Uuid, version_id: Uuid, org_id: Uuid, attempt: Type.Integer({ minimum: 1 }), at: Timestamp }),
);

export const Chunk = Type.Object({
  chunk_index: Type.Integer({ minimum: 0 }),
  text: Type.String({ minLength: 1 }),
  /** Where the chunk came from, so a person can check a citation. */
  page: Type.Optional(Type.Integer({ minimum: 1 })),
  sheet: Type.Optional(Type.String()),
  slide: Type.Optional(Type.Integer({ minimum: 1 })),
  heading_path: Type.Optional(Type.Array(Type.String())),
  row_range: Type.Optional(Type.Tuple([Type.Integer(), Type.Integer()])),
});

export const contentChunksAdded = defineEvent(
  ingest,
  'content.chunks_added',
  1,
  Type.Object({ content_id: Uuid, version_id: Uuid, org_id: Uuid, chunks: Type.Array(Chunk, { minItems: 1 }), at: Timestamp }),
);

export const contentExtracted = defineEvent(
  ingest,
  'content.extracted',
  1,
  Type.Object({
    content_id: Uuid,
    version_id: Uuid,
    version_num: Type.Integer({ minimum: 1 }),
    org_id: Uuid,
    chunk_count: Type.Integer({ minimum: 0 }),
    characters: Type.Integer({ minimum: 0 }),
    /** The format detected from the bytes (pdf, docx, ..., md for raw text). */
    format: Type.Optional(Type.String()),
    at: Timestamp,
  }),
);

export const contentFailed = defineEvent(
  ingest,
  'content.failed',
  1,
  Type.Object({
    content_id: Uuid,
    version_id: Uuid,
    org_id: Uuid,
    /** Readable, for the person who uploaded the file. */
    reason: Type.String({ minLength: 1 }),
    attempts: Type.Integer({ minimum: 1 }),
    at: Timestamp,
  }),
);

/** Title, summary or filing changed without a new version. */
export const contentUpdated = defineEvent(
  ingest,
  'content.updated',
  1,
  Type.Object({
    content_id: Uuid,
    org_id: Uuid,
    title: Type.Optional(Type.String({ minLength: 1 })),
    summary: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    category_id: Type.Optional(Type.Union([Uuid, Type.Null()])),
    topic_id: Type.Optional(Type.Union([Uuid, Type.Null()])),
    at: Timestamp,
  }),
);

export const contentDeleted = defineEvent(ingest, 'content.deleted', 1, Type.Object({ content_id: Uuid, org_id: Uuid, at: Timestamp }));

/**
 * The content's node was moved to another folder of the knowledge-base tree
 * (which owns placement); ingest follows so folder scope applies to where the
 * content is now. parent_id null: the root folder.
 */
export const contentMoved = defineEvent(
  ingest,
  'content.moved',
  1,
  Type.Object({ content_id: Uuid, org_id: Uuid, parent_id: Type.Union([Uuid, Type.Null()]), at: Timestamp }),
);

export const ingestEvents = [
  contentCreated,
  contentVersionAdded,
  contentProcessingStarted,
  contentChunksAdded,
  contentExtracted,
  contentFailed,
  contentUpdated,
  contentDeleted,
  contentMoved,
];

/** The content stream's events (one stream per content item). */
export type ContentEvent = EventOf<(typeof ingestEvents)[number]>;

export type ContentVersionAccepted = EventData<typeof contentCreated>;
export type ContentChunksAdded = EventData<typeof contentChunksAdded>;
export type ContentExtracted = EventData<typeof contentExtracted>;
export type ContentFailed = EventData<typeof contentFailed>;
export type ContentUpdated = EventData<typeof contentUpdated>;
export type ContentDeleted = EventData<typeof contentDeleted>;
export type ContentMoved = EventData<typeof contentMoved>;
