import type { Logger } from 'pino';
import { contextFromTraceparent, inSpan, isAppError, linkTo, silentLogger, SpanKind } from '@kb/platform';
import { deadLetterTopic, type CatalogEvent, type Envelope, type EventEnvelope } from '@kb/events';
import type { BatchOutcome, EventBus, ReceivedMessage, Subscription } from '@kb/bus';
import type { Store, StoreTransaction } from '@kb/store';
import type { TypedEvent } from './decider.js';

export type EnvelopeHandler = (tx: StoreTransaction, event: EventEnvelope) => Promise<void>;

/** A handler for one event type; it receives the envelope typed by that type's catalogue entry. */
export type EventHandler<T extends E['type'], E extends TypedEvent = CatalogEvent> = (
  tx: StoreTransaction,
  event: Envelope<Extract<E, { type: T }>>,
) => Promise<void>;

/** Handlers keyed by event type, each typed for its key. */
export type EventHandlers<E extends TypedEvent = CatalogEvent> = { [T in E['type']]?: EventHandler<T, E> };

/**
 * How long one batch transaction may keep handling events before it commits: it
 * holds the store's write lock, which the service's requests wait for.
 */
const BATCH_BUDGET_MS = 50;

/** A handler's failure inside a batch, with the index of its message. */
class FailedAt extends Error {
  constructor(
    readonly index: number,
    readonly error: unknown,
  ) {
    super('event handler failed in a batch');
  }
}

/** The event in a message, or undefined when the message is not an event envelope. */
function parseEnvelope(message: ReceivedMessage): EventEnvelope | undefined {
  try {
    const event = JSON.parse(message.value) as EventEnvelope;
    return typeof event?.id === 'string' && typeof event.type === 'string' ? event : undefined;
  } catch {
    return undefined;
  }
}

function unparseableReason(message: ReceivedMessage): string {
  try {
    JSON.parse(message.value);
    return 'not an event envelope';
  } catch (err) {
    return (err as Error).message;
  }
}

export interface EventConsumerOptions<E extends TypedEvent = CatalogEvent> {
  bus: EventBus;
  store: Store;
  /** Consumer group, and the inbox name under which processed event ids are kept. */
  groupId: string;
  topics: string[];
  /** Handlers by event type; other types are acknowledged and ignored. */
  handlers: EventHandlers<E>;
  logger?: Logger;
}

/**
 * An idempotent consumer: each event is handled in the same transaction as its
 * inbox mark, so a redelivery is skipped. When the bus has several messages of a
 * partition in hand, they are handled in one transaction (up to BATCH_BUDGET_MS
 * of work), each event still in its own span; a crash before that commit
 * redelivers the batch, and a failure rolls the whole batch back, after which the
 * bus delivers its messages one at a time, each in its own transaction. There a
 * retriable failure (or any unexpected error) is thrown back to the bus, which
 * redelivers after a backoff; a non-retriable AppError, or a message that is not
 * an event, goes to the topic's dead-letter topic so it cannot block the
 * partition forever.
 */
export async function startEventConsumer<E extends TypedEvent = CatalogEvent>(options: EventConsumerOptions<E>): Promise<Subscription> {
  const logger = options.logger ?? silentLogger();
  // The consumed topics are created by subscribe, a dead-letter topic by its first publish.
  // Looked up by the type a message names: every event on the bus was validated
  // against the catalogue by the producer's relay, so the handler for a type gets
  // the payload its signature names.
  const handlers = options.handlers as Record<string, EnvelopeHandler | undefined>;

  const deadLetter = async (message: ReceivedMessage, reason: string) => {
    logger.error({ topic: message.topic, offset: message.offset, reason }, 'event dead-lettered');
    await options.bus.publish(deadLetterTopic(message.topic), [
      { key: message.key, value: message.value, headers: { ...message.headers, 'x-dead-letter-reason': reason.slice(0, 500) } },
    ]);
  };

  /** Handles one event with its inbox mark, in the span that continues the trace of the request that caused it. */
  const handle = (tx: StoreTransaction, message: ReceivedMessage, event: EventEnvelope, handler: EnvelopeHandler) => {
    // Child of the span that appended the event (the producer), and linked to it, as messaging spans are.
    const producer = contextFromTraceparent(event.metadata?.trace);
    return inSpan(
      `${options.groupId} ${event.type}`,
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          'messaging.destination.name': message.topic,
          'messaging.consumer.group.name': options.groupId,
          'kb.event_id': event.id,
        },
        links: linkTo(producer),
      },
      producer,
      async () => {
        if (await tx.markProcessed(options.groupId, event.id)) await handler(tx, event);
      },
    );
  };

  /** What the one-at-a-time path does with a failed event: dead-letter it, or rethrow for the bus to redeliver. */
  const onFailure = async (message: ReceivedMessage, event: EventEnvelope, err: unknown): Promise<void> => {
    if (isAppError(err) && !err.retriable) {
      await deadLetter(message, `${err.code}: ${err.message}`);
      return;
    }
    logger.warn({ err, type: event.type, id: event.id }, 'event handler failed; the bus will redeliver');
    throw err;
  };

  /**
   * Events of a type nobody here handles are skipped by the type header the outbox
   * relay sets, without parsing a body that may carry a megabyte of chunk text.
   */
  const ignored = (message: ReceivedMessage): boolean => {
    const type = message.headers.type;
    return type !== undefined && !Object.hasOwn(handlers, type);
  };
  /** The event to handle; null when nobody here handles its type; undefined when it is not an event. */
  const toHandle = (message: ReceivedMessage): EventEnvelope | null | undefined => {
    if (ignored(message)) return null;
    const event = parseEnvelope(message);
    return event && !handlers[event.type] ? null : event;
  };

  const single = async (message: ReceivedMessage): Promise<void> => {
    if (ignored(message)) return;
    const event = parseEnvelope(message);
    if (!event) {
      await deadLetter(message, `unparseable: ${unparseableReason(message)}`);
      return;
    }
    const handler = handlers[event.type];
    if (!handler) return;
    try {
      await options.store.transaction((tx) => handle(tx, message, event, handler));
    } catch (err) {
      await onFailure(message, event, err);
    }
  };

  /**
   * Handles events [from, to) in one transaction, stopping before a message that is
   * not an event and (when `budget`) once BATCH_BUDGET_MS is spent; answers where it
   * stopped. A handler's failure rolls everything back and is thrown as FailedAt.
   */
  const runBatch = (messages: ReceivedMessage[], events: (EventEnvelope | null | undefined)[], from: number, to: number, budget: boolean) =>
    // The count comes from the attempt that committed (an adapter may run the function again).
    options.store.transaction(async (tx) => {
      const started = performance.now();
      let i = from;
      for (; i < to; i++) {
        const event = events[i];
        if (event === null) continue;
        if (!event || (budget && i > from && performance.now() - started >= BATCH_BUDGET_MS)) break;
        const handler = handlers[event.type]!;
        try {
          await handle(tx, messages[i]!, event, handler);
        } catch (err) {
          throw new FailedAt(i, err);
        }
      }
      return i;
    });

  /**
   * Several messages of a partition in one transaction. When the event at k fails,
   * the events before it are handled again in a transaction of their own and k gets
   * what the one-at-a-time path gives a failure (dead letter, or redelivery after a
   * backoff), so a batch changes no outcome, only the number of commits (the
   * handlers before it run twice, the first time rolled back, as on a redelivery).
   */
  const handleBatch = async (messages: ReceivedMessage[]): Promise<BatchOutcome> => {
    const events = messages.map(toHandle);
    // Leading events nobody handles need no transaction.
    let from = 0;
    while (from < messages.length && events[from] === null) from++;
    if (from === messages.length || (from > 0 && !events[from])) return { handled: from };
    if (!events[from]) {
      await single(messages[from]!);
      return { handled: from + 1 };
    }
    let failure: FailedAt | undefined;
    for (let to = messages.length; ;) {
      try {
        const handled = await runBatch(messages, events, from, to, failure === undefined);
        if (failure?.index !== handled) return { handled };
      } catch (err) {
        if (!(err instanceof FailedAt)) throw err;
        failure = err;
        if (err.index > from) {
          to = err.index;
          continue;
        }
      }
      try {
        await onFailure(messages[failure.index]!, events[failure.index]!, failure.error);
        return { handled: failure.index + 1 };
      } catch (error) {
        return { handled: failure.index, error };
      }
    }
  };

  return options.bus.subscribe({
    groupId: options.groupId,
    topics: options.topics,
    fromBeginning: true,
    // Every other type is acknowledged and ignored anyway (`ignored`); an adapter may pass over them unread.
    types: Object.keys(handlers),
    batchHandler: handleBatch,
    handler: single,
  });
}
