/**
 * The EventStore + DocumentStore port. One Store per service: an append-only
 * event log with optimistic concurrency on (stream_id, version), plus document
 * collections for read models, inbox records and checkpoints. Both live behind
 * one transaction so that an append, its read-model updates and an inbox mark
 * commit or roll back together (DESIGN section 3).
 */

export interface EventMetadata {
  org_id: string;
  actor?: string;
  correlation_id?: string;
  causation_id?: string;
  request_id?: string;
  /** W3C traceparent of the request that caused the event. */
  trace?: string;
}

export interface NewEvent {
  /** uuid, unique across the store; consumers dedupe on it. */
  id: string;
  /** Past-tense fact, e.g. `category.created`. */
  type: string;
  /** Version of the event's data schema. */
  schema: number;
  data: Record<string, unknown>;
  metadata: EventMetadata;
}

export interface StoredEvent extends NewEvent {
  stream_id: string;
  /** 1-based position of the event inside its stream. */
  version: number;
  /** Global, strictly increasing in commit order (the outbox relies on that). */
  position: number;
  recorded_at: string;
}

export type Scalar = string | number | boolean;
export type FieldFilter = Scalar | null | { $in: Scalar[] };
export type Where = Record<string, FieldFilter>;

export interface Query {
  /** Equality on top-level fields; `null` matches null or missing. */
  where?: Where;
  sort?: { field: string; order: 'asc' | 'desc' }[];
  limit?: number;
  offset?: number;
}

/** Every document has a string id, unique inside its collection. */
export interface DocLike {
  id: string;
}
export type Doc = DocLike & Record<string, unknown>;

export interface DocumentReader {
  get<T extends DocLike = Doc>(collection: string, id: string): Promise<T | undefined>;
  find<T extends DocLike = Doc>(collection: string, query?: Query): Promise<T[]>;
  count(collection: string, where?: Where): Promise<number>;
}

export interface DocumentWriter extends DocumentReader {
  /** Insert a new document; throws DuplicateKeyError when the id exists. */
  insert<T extends DocLike>(collection: string, doc: T): Promise<void>;
  /** Insert or replace the whole document. */
  put<T extends DocLike>(collection: string, doc: T): Promise<void>;
  /** Returns whether a document was removed. */
  delete(collection: string, id: string): Promise<boolean>;
}

export interface StoreTransaction extends DocumentWriter {
  /**
   * Insert or replace a document given as its JSON text (an object with a string
   * `id` equal to `id`), as put would store it: for documents serialised
   * elsewhere, such as in a worker thread, so this thread neither parses nor
   * stringifies them again.
   */
  putJson(collection: string, id: string, json: string): Promise<void>;
  /**
   * Embedded stores: the database file. Another connection to it (a worker
   * thread's) reads the state this transaction started from: it holds the write
   * lock, so nothing else commits before it does, and its own writes stay unseen.
   */
  readonly file?: string;
  readStream(streamId: string): Promise<StoredEvent[]>;
  /**
   * Append events to a stream whose current version must equal expectedVersion
   * (0 for a new stream). Throws ConcurrencyError otherwise.
   */
  append(streamId: string, expectedVersion: number, events: NewEvent[]): Promise<StoredEvent[]>;
  /**
   * Inbox: record that `consumer` handled `eventId`. Returns false when it was
   * already recorded, so the caller skips the duplicate delivery.
   */
  markProcessed(consumer: string, eventId: string): Promise<boolean>;
}

export interface Store extends DocumentReader {
  /**
   * Run fn in one transaction. Transactions are serialised where the backend
   * needs it (SQLite) and may be re-run on transient conflicts (MongoDB), so fn
   * must not have side effects outside the transaction.
   */
  transaction<T>(fn: (tx: StoreTransaction) => Promise<T>): Promise<T>;
  readStream(streamId: string): Promise<StoredEvent[]>;
  /** Events with position > afterPosition, in position order. */
  readAll(afterPosition: number, limit: number): Promise<StoredEvent[]>;
  /** Declare a (non-unique) index over fields of a collection's documents. */
  ensureIndex(collection: string, fields: string[]): Promise<void>;
  /** Remove every document of the collections (read-model rebuilds). */
  dropCollections(collections: string[]): Promise<void>;
  close(): Promise<void>;
}

export class DuplicateKeyError extends Error {
  constructor(
    readonly collection: string,
    readonly id: string,
  ) {
    super(`Document ${id} already exists in ${collection}`);
    this.name = 'DuplicateKeyError';
  }
}

export class NestedTransactionError extends Error {
  constructor() {
    super('store.transaction() called inside a transaction; pass the transaction down instead');
    this.name = 'NestedTransactionError';
  }
}
