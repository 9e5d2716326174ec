/**
 * The EventBus port: topics split into partitions, messages keyed (key = org_id,
 * so one organization's messages stay in order), consumer groups with committed
 * offsets, at-least-once delivery.
 */

export interface OutgoingMessage {
  key: string;
  /** Serialized payload (JSON text for domain events). */
  value: string;
  headers?: Record<string, string>;
}

export interface ReceivedMessage {
  topic: string;
  partition: number;
  /** Offset inside the partition, as a decimal string (Kafka offsets are int64). */
  offset: string;
  key: string;
  value: string;
  headers: Record<string, string>;
  /** ISO 8601 time the bus accepted the message. */
  timestamp: string;
}

export interface SubscribeOptions {
  /** Consumers sharing a groupId split the partitions; each message goes to one of them. */
  groupId: string;
  topics: string[];
  /** Where a group with no committed offset starts (default true: the whole log). */
  fromBeginning?: boolean;
  /**
   * The message types (header `type`) the handlers want, when they ignore every
   * other type: an adapter may then pass over the others without reading their
   * values or calling a handler, as if a handler had resolved for each. Messages
   * without a `type` header are always delivered. Adapters may ignore it.
   */
  types?: readonly string[];
  /**
   * Called once per message, in order per partition. Resolving commits the
   * offset; throwing makes the bus deliver the same message again after a
   * backoff (the consumer wrapper decides retry vs dead-letter).
   */
  handler: (message: ReceivedMessage) => Promise<void>;
  /**
   * Optional, for consumers that can handle several messages at once (e.g. in one
   * store transaction): called with consecutive messages of one partition, in
   * order. The first `handled` of them count as handled, as if `handler` had
   * resolved for each; with `error` set, the message after them failed as if
   * `handler` had thrown: it is delivered again after a backoff. Rejecting is a
   * failure of the first message. Adapters may ignore it and call `handler`.
   */
  batchHandler?: (messages: ReceivedMessage[]) => Promise<BatchOutcome>;
  /**
   * Whether `subscribe` waits until the consumer takes part in its group and has
   * fetched (default true: "subscribe, then publish" delivers what follows). With
   * false it resolves at once and the consumer joins in the background: a service
   * then serves while its group rebalances (`checkConsumers` says when it joined).
   * A bus that cannot reach its broker resolves either way and keeps trying.
   */
  waitUntilConsuming?: boolean;
}

export interface BatchOutcome {
  /** How many messages, from the first, were handled. */
  handled: number;
  /** Set when the message after the handled ones failed (redelivered after a backoff). */
  error?: unknown;
}

export interface Subscription {
  /** Stop consuming; resolves once the in-flight handler finished. */
  stop(): Promise<void>;
}

export interface EventBus {
  /**
   * The most bytes one publish sends to one partition at a time (Kafka: one record
   * batch, under the broker's `message.max.bytes`). `publish` splits a longer list
   * itself; a single message over it cannot be carried. Producers of events with
   * user-sized content keep each event under it (see `messageBytes`).
   */
  readonly maxMessageBytes: number;
  /** Creates the topics if missing (idempotent). */
  ensureTopics(topics: string[]): Promise<void>;
  /**
   * Durable once resolved. Messages with the same key keep their order. A list over
   * `maxMessageBytes` is sent in several parts, in order; a message over it on its
   * own may be refused (Kafka refuses it).
   */
  publish(topic: string, messages: OutgoingMessage[]): Promise<void>;
  subscribe(options: SubscribeOptions): Promise<Subscription>;
  /** Resolves when the bus answers (a readiness check); rejects when it cannot be reached. */
  ping?(): Promise<void>;
  /**
   * Resolves when every subscription of this bus takes part in its consumer group's
   * current generation (it has its partitions); rejects naming the groups still
   * joining or rebalancing (a readiness check). Buses without groups to join omit it.
   */
  checkConsumers?(): Promise<void>;
  close(): Promise<void>;
}

/** Stable key -> partition mapping shared by adapters that pick partitions themselves. */
export function partitionFor(key: string, partitions: number): number {
  // FNV-1a: cheap, stable across processes and versions.
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % partitions;
}

/** Kafka's own default for `message.max.bytes` is 1,048,588; this leaves room for the record batch's framing. */
export const DEFAULT_MAX_MESSAGE_BYTES = 1_000_000;

/**
 * What one message weighs on the wire before compression: its key, value and
 * headers in UTF-8, plus a record's framing (lengths, offsets, timestamp delta).
 */
export function messageBytes(message: OutgoingMessage): number {
  let bytes = 64 + Buffer.byteLength(message.key) + Buffer.byteLength(message.value);
  for (const [name, value] of Object.entries(message.headers ?? {})) bytes += 8 + Buffer.byteLength(name) + Buffer.byteLength(value);
  return bytes;
}

/**
 * Splits messages, in order, into runs of at most `maxBytes` each (a message over
 * it on its own: the caller decides what to do with it).
 */
export function splitByBytes(messages: OutgoingMessage[], maxBytes: number): OutgoingMessage[][] {
  const runs: OutgoingMessage[][] = [];
  let run: OutgoingMessage[] = [];
  let size = 0;
  for (const message of messages) {
    const bytes = messageBytes(message);
    if (run.length > 0 && size + bytes > maxBytes) {
      runs.push(run);
      run = [];
      size = 0;
    }
    run.push(message);
    size += bytes;
  }
  if (run.length > 0) runs.push(run);
  return runs;
}
