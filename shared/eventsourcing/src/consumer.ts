import type { Logger } from 'pino';
import { contextFromTraceparent, inSpan, isAppError, silentLogger, SpanKind } from '@kb/platform';
import { deadLetterTopic, type EventEnvelope } from '@kb/events';
import type { EventBus, ReceivedMessage, Subscription } from '@kb/bus';
import type { Store, StoreTransaction } from '@kb/store';

export type EnvelopeHandler = (tx: StoreTransaction, event: EventEnvelope) => Promise<void>;

export interface EventConsumerOptions {
  bus: EventBus;
  store: Store;
  /** Consumer group, and the inbox name under which processed event ids are kept. */
  groupId: string;
  topics: string[];
  /** Handlers by event type; other types are acknowledged and ignored. */
  handlers: Record<string, EnvelopeHandler>;
  logger?: Logger;
}

/**
 * An idempotent consumer: each event is handled in one transaction together with
 * its inbox mark, so a redelivery is skipped. A retriable failure (or any
 * unexpected error) is thrown back to the bus, which redelivers after a backoff;
 * a non-retriable AppError, or a message that is not an event, goes to the
 * topic's dead-letter topic so it cannot block the partition forever.
 */
export async function startEventConsumer(options: EventConsumerOptions): Promise<Subscription> {
  const logger = options.logger ?? silentLogger();
  await options.bus.ensureTopics([...options.topics, ...options.topics.map(deadLetterTopic)]);

  const deadLetter = async (message: ReceivedMessage, reason: string) => {
    logger.error({ topic: message.topic, offset: message.offset, reason }, 'event dead-lettered');
    await options.bus.publish(deadLetterTopic(message.topic), [
      { key: message.key, value: message.value, headers: { ...message.headers, 'x-dead-letter-reason': reason.slice(0, 500) } },
    ]);
  };

  return options.bus.subscribe({
    groupId: options.groupId,
    topics: options.topics,
    fromBeginning: true,
    handler: async (message) => {
      let event: EventEnvelope;
      try {
        event = JSON.parse(message.value) as EventEnvelope;
        if (typeof event.id !== 'string' || typeof event.type !== 'string') throw new Error('not an event envelope');
      } catch (err) {
        await deadLetter(message, `unparseable: ${(err as Error).message}`);
        return;
      }
      const handler = options.handlers[event.type];
      if (!handler) return;
      try {
        // A consumer span continues the trace of the request that caused the event,
        // and is active while the handler runs, so the events it appends carry it.
        await inSpan(
          `${options.groupId} ${event.type}`,
          { kind: SpanKind.CONSUMER, attributes: { 'messaging.destination.name': message.topic, 'kb.event_id': event.id } },
          contextFromTraceparent(event.metadata?.trace),
          () =>
            options.store.transaction(async (tx) => {
              if (!(await tx.markProcessed(options.groupId, event.id))) return;
              await handler(tx, event);
            }),
        );
      } catch (err) {
        if (isAppError(err) && !err.retriable) {
          await deadLetter(message, `${err.code}: ${err.message}`);
          return;
        }
        logger.warn({ err, type: event.type, id: event.id }, 'event handler failed; the bus will redeliver');
        throw err;
      }
    },
  });
}
