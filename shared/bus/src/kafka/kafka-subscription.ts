import type { Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import type { Logger, OutageLog } from '@kb/platform';
import type { SubscribeOptions, Subscription } from '../port.js';
import { toReceivedMessage } from './kafka-messages.js';
import { kafkaTrouble } from './kafka-logger.js';

export interface KafkaSubscriptionSettings {
  kafka: Kafka;
  logger: Logger;
  /** Where failures to reach the broker are reported (one warn per outage). */
  outage: OutageLog;
  /** Creates the subscribed topics if missing (called before each attempt to start). */
  ensureTopics(topics: string[]): Promise<void>;
  retryBackoffMs: { initial: number; max: number };
  /** Partitions whose batches are handled at the same time (each still one message at a time). */
  partitionsConsumedConcurrently: number;
  /** Upper bound on waiting for the consumer to join and take its starting positions. */
  readyTimeoutMs: number;
  /**
   * The group's session: how long the broker waits for a member's heartbeat before
   * it hands the member's partitions to others. A member killed without leaving
   * holds up its group (and its own restart's join) until then.
   */
  sessionTimeoutMs: number;
  heartbeatIntervalMs: number;
}

export interface KafkaSubscription extends Subscription {
  /** Resolves once the consumer first joined and fetched (true), or when the first start failed or took too long (false). */
  readonly started: Promise<boolean>;
  /** Whether the consumer is a member of its group's current generation (it has its assignment). */
  readonly joined: boolean;
  readonly groupId: string;
}

/** Delay between attempts to start a consumer while the broker cannot be reached. */
const START_BACKOFF_MS = { initial: 500, max: 10_000 };

/**
 * One kafkajs consumer per subscription. Messages are handled one at a time per
 * partition and their offsets resolved only after the handler resolved; kafkajs
 * commits resolved offsets after each batch and on stop. When a handler throws,
 * the message stays unresolved (so it is neither committed nor skipped: the
 * next fetch of that partition starts at it again) and the partition is paused
 * for the backoff, which leaves the other partitions flowing.
 *
 * Starting never fails: while the broker cannot be reached (or the consumer
 * crashed for good) a new consumer is started after a backoff, until stop.
 */
export function startKafkaSubscription(settings: KafkaSubscriptionSettings, options: SubscribeOptions): KafkaSubscription {
  const { groupId, topics, handler } = options;
  const logger = settings.logger.child({ groupId });
  const resumeTimers = new Set<NodeJS.Timeout>();
  const failures = new Map<string, { offset: string; attempts: number }>();
  let consumer: Consumer | undefined;
  let joined = false;
  let stopped = false;
  let stopping: Promise<void> | undefined;
  let wakeRetry: (() => void) | undefined;
  let reportStarted: (started: boolean) => void = () => undefined;
  const started = new Promise<boolean>((resolve) => {
    reportStarted = (value) => {
      resolve(value);
      reportStarted = () => undefined;
    };
  });

  const newConsumer = (): Consumer => {
    // A slow consumer holds at most one fetch (maxBytes) in memory: kafkajs fetches
    // again only after the batches in hand were handled.
    const created = settings.kafka.consumer({
      groupId,
      allowAutoTopicCreation: false,
      maxWaitTimeInMs: 1000,
      maxBytes: 4 * 1024 * 1024,
      maxBytesPerPartition: 1024 * 1024,
      sessionTimeout: settings.sessionTimeoutMs,
      heartbeatInterval: settings.heartbeatIntervalMs,
    });
    created.on(created.events.GROUP_JOIN, () => {
      joined = true;
      settings.outage.recovered();
    });
    created.on(created.events.REBALANCING, () => {
      joined = false;
    });
    created.on(created.events.STOP, () => {
      joined = false;
    });
    created.on(created.events.CRASH, ({ payload }) => {
      joined = false;
      if (payload.restart) {
        // kafkajs restarts it: the broker is away, or the group or its coordinator is moving.
        if (kafkaTrouble(String(payload.error)) === 'routine') logger.info({ err: payload.error }, 'kafka consumer restarting');
        else settings.outage.failed(payload.error, { groupId });
        return;
      }
      logger.error({ err: payload.error }, 'kafka consumer crashed; starting a new one');
      if (consumer === created) void restart(created);
    });
    return created;
  };

  const eachBatch = async ({ batch, resolveOffset, heartbeat, pause, isRunning, isStale }: EachBatchPayload) => {
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
  };

  /** One attempt: topics, connect, subscribe, run, and the first fetch (bounded by readyTimeoutMs). */
  const attempt = async (): Promise<void> => {
    await settings.ensureTopics(topics);
    const current = newConsumer();
    consumer = current;
    try {
      await current.connect();
      await current.subscribe({ topics, fromBeginning: options.fromBeginning ?? true });
      const positioned = firstFetch(current, settings.readyTimeoutMs);
      await current.run({
        autoCommit: true,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: settings.partitionsConsumedConcurrently,
        eachBatch,
      });
      // run() resolves also when the join failed (kafkajs then restarts the consumer): GROUP_JOIN says it joined.
      if (!(await positioned)) logger.warn({ topics }, 'kafka consumer has not fetched yet; continuing');
      reportStarted(true);
    } catch (err) {
      if (consumer === current) consumer = undefined;
      await current.disconnect().catch(() => undefined);
      throw err;
    }
  };

  /** Attempts until one succeeds or the subscription stops; the first failure resolves `started` with false. */
  const startLoop = async (): Promise<void> => {
    for (let tries = 0; !stopped; tries++) {
      try {
        await attempt();
        if (stopped) await consumer?.disconnect();
        return;
      } catch (err) {
        if (stopped) return;
        if (kafkaTrouble(String(err)) === 'routine') logger.info({ err }, 'kafka consumer not started yet; trying again');
        else settings.outage.failed(err, { groupId });
        reportStarted(false);
        const delay = Math.min(START_BACKOFF_MS.max, START_BACKOFF_MS.initial * 2 ** Math.min(tries, 10));
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, delay);
          wakeRetry = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wakeRetry = undefined;
      }
    }
  };

  let loop = startLoop();
  const restart = async (crashed: Consumer) => {
    await crashed.disconnect().catch(() => undefined);
    await loop;
    if (stopped || consumer !== crashed) return;
    consumer = undefined;
    loop = startLoop();
  };

  return {
    groupId,
    started,
    get joined() {
      return joined;
    },
    stop() {
      stopping ??= (async () => {
        stopped = true;
        wakeRetry?.();
        reportStarted(false);
        for (const timer of resumeTimers) clearTimeout(timer);
        resumeTimers.clear();
        await loop;
        // Waits for the batch in progress, commits resolved offsets and leaves the group.
        await consumer?.disconnect();
        joined = false;
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
