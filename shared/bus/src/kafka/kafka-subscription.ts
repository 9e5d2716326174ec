import type { Consumer, Kafka } from 'kafkajs';
import type { Logger } from '@kb/platform';
import type { SubscribeOptions, Subscription } from '../port.js';
import { toReceivedMessage } from './kafka-messages.js';

export interface KafkaSubscriptionSettings {
  kafka: Kafka;
  logger: Logger;
  retryBackoffMs: { initial: number; max: number };
  /** Partitions whose batches are handled at the same time (each still one message at a time). */
  partitionsConsumedConcurrently: number;
  /** Upper bound on waiting for the consumer to join and take its starting positions. */
  readyTimeoutMs: number;
}

/**
 * One kafkajs consumer per subscription. Messages are handled one at a time per
 * partition and their offsets resolved only after the handler resolved; kafkajs
 * commits resolved offsets after each batch and on stop. When a handler throws,
 * the message stays unresolved (so it is neither committed nor skipped: the
 * next fetch of that partition starts at it again) and the partition is paused
 * for the backoff, which leaves the other partitions flowing.
 */
export async function startKafkaSubscription(settings: KafkaSubscriptionSettings, options: SubscribeOptions): Promise<Subscription> {
  const { groupId, topics, handler } = options;
  const logger = settings.logger.child({ groupId });
  // A slow consumer holds at most one fetch (maxBytes) in memory: kafkajs fetches
  // again only after the batches in hand were handled.
  const consumer = settings.kafka.consumer({
    groupId,
    allowAutoTopicCreation: false,
    maxWaitTimeInMs: 1000,
    maxBytes: 4 * 1024 * 1024,
    maxBytesPerPartition: 1024 * 1024,
  });
  const resumeTimers = new Set<NodeJS.Timeout>();
  const failures = new Map<string, { offset: string; attempts: number }>();
  let stopping: Promise<void> | undefined;

  consumer.on(consumer.events.CRASH, ({ payload }) => {
    logger.error({ err: payload.error, restart: payload.restart }, 'kafka consumer crashed');
  });

  await consumer.connect();
  try {
    await consumer.subscribe({ topics, fromBeginning: options.fromBeginning ?? true });
    const positioned = firstFetch(consumer, settings.readyTimeoutMs);
    await consumer.run({
      autoCommit: true,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: settings.partitionsConsumedConcurrently,
      eachBatch: async ({ batch, resolveOffset, heartbeat, pause, isRunning, isStale }) => {
        const partitionKey = `${batch.partition}:${batch.topic}`;
        for (const message of batch.messages) {
          if (!isRunning() || isStale()) return;
          try {
            await handler(toReceivedMessage(batch.topic, batch.partition, message));
          } catch (err) {
            const previous = failures.get(partitionKey);
            const attempts = previous?.offset === message.offset ? previous.attempts + 1 : 1;
            failures.set(partitionKey, { offset: message.offset, attempts });
            const delay = Math.min(settings.retryBackoffMs.max, settings.retryBackoffMs.initial * 2 ** (attempts - 1));
            logger.warn(
              { err, topic: batch.topic, partition: batch.partition, offset: message.offset, attempts, delay },
              'bus handler failed; redelivering after backoff',
            );
            const resume = pause();
            const timer = setTimeout(() => {
              resumeTimers.delete(timer);
              resume();
            }, delay);
            resumeTimers.add(timer);
            return;
          }
          failures.delete(partitionKey);
          resolveOffset(message.offset);
          await heartbeat();
        }
      },
    });
    if (!(await positioned)) logger.warn({ topics }, 'kafka consumer has not fetched yet; continuing');
  } catch (err) {
    await consumer.disconnect().catch(() => undefined);
    throw err;
  }

  return {
    stop() {
      stopping ??= (async () => {
        for (const timer of resumeTimers) clearTimeout(timer);
        resumeTimers.clear();
        // Waits for the batch in progress, commits resolved offsets and leaves the group.
        await consumer.disconnect();
      })();
      return stopping;
    },
  };
}

/**
 * consumer.run() resolves once the group is joined, but a new group takes its
 * starting offsets (fromBeginning false: the current end) during the first
 * fetch. Waiting for it makes "subscribe, then publish" deliver what follows.
 */
function firstFetch(consumer: Consumer, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const finish = (fetched: boolean) => {
      clearTimeout(timer);
      removeListener();
      resolve(fetched);
    };
    const removeListener = consumer.on(consumer.events.FETCH, () => finish(true));
    const timer = setTimeout(() => finish(false), timeoutMs);
  });
}
