import { CompressionTypes, Kafka, Partitioners, type Admin, type Producer } from 'kafkajs';
import { metrics, type Meter } from '@opentelemetry/api';
import { createOutageLog, errors, silentLogger, type Logger } from '@kb/platform';
import { DEFAULT_MAX_MESSAGE_BYTES, splitByBytes, type EventBus, type OutgoingMessage, type Subscription } from '../port.js';
import { consumerGroupLag, registerLagGauge, type GroupLag } from './kafka-lag.js';
import { kafkaLogCreator, kafkaLogLevel } from './kafka-logger.js';
import { startKafkaSubscription, type KafkaSubscription } from './kafka-subscription.js';

export interface KafkaEventBusOptions {
  brokers: string[];
  clientId: string;
  /** Partitions of topics this bus creates (default 4). */
  partitions?: number;
  /** Replication factor of topics this bus creates (default 1; use 3 on a real cluster). */
  replicationFactor?: number;
  /** Redelivery delay after a failed handler, doubling per attempt (default 100 ms up to 30 s). */
  retryBackoffMs?: { initial: number; max: number };
  /** Partitions a consumer handles at the same time (default 4). */
  partitionsConsumedConcurrently?: number;
  /**
   * The consumer groups' session (default 10 s): a member that died without leaving
   * holds its partitions, and holds up the join of its own restart, until it ends.
   * Heartbeats go every third of it.
   */
  sessionTimeoutMs?: number;
  /**
   * Whether subscribe waits until the consumer joined its group and fetched, when the
   * subscription does not say (default true). A service's bus says false: it serves
   * while its consumers join, and its readiness (`checkConsumers`) says when they have.
   */
  waitUntilConsuming?: boolean;
  /**
   * The most bytes one send puts in a partition's record batch (default 1,000,000):
   * at most the broker's `message.max.bytes` (or the topic's `max.message.bytes`).
   * A longer publish goes out in several sends; a send the broker still refuses as
   * too large is halved and sent again, down to single messages.
   */
  maxMessageBytes?: number;
  /** Record batch compression (default gzip, built into kafkajs; the broker checks its limit after compression). */
  compression?: 'gzip' | 'none';
  logger?: Logger;
  /** Where the consumer lag gauge is registered (default: the global OpenTelemetry meter provider). */
  meter?: Meter;
}

/** The Kafka bus also tells how far behind its consumer groups are. */
export interface KafkaEventBus extends EventBus {
  /** Lag of every group this bus consumes for, per partition (also the `messaging.kafka.consumer.lag` gauge). */
  consumerLag(): Promise<GroupLag[]>;
  checkConsumers(): Promise<void>;
}

const TOPIC_READY_TIMEOUT_MS = 30_000;
/** What a broker answers to a record batch over its limit: never retriable as it was sent. */
const TOO_LARGE = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE']);

/** Whether kafkajs reports that the broker refused a send as too large (as such, or as the cause of a retry that gave up). */
export const refusedAsTooLarge = (err: unknown, depth = 0): boolean => {
  if (!err || typeof err !== 'object' || depth > 5) return false;
  const e = err as { type?: string; cause?: unknown; errors?: unknown[] };
  if (TOO_LARGE.has(e.type ?? '')) return true;
  return refusedAsTooLarge(e.cause, depth + 1) || (e.errors ?? []).some((inner) => refusedAsTooLarge(inner, depth + 1));
};
/** What a broker answers about a topic created a moment ago (by this client or another). */
const NOT_YET = new Set(['UNKNOWN_TOPIC_OR_PARTITION', 'LEADER_NOT_AVAILABLE']);

/** Resolves once every partition of `topics` has a leader, so producing and joining a group work. */
export async function waitForLeaders(admin: Admin, topics: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const { topics: described } = await admin.fetchTopicMetadata({ topics });
      const ready = topics.every((name) => {
        const partitions = described.find((t) => t.name === name)?.partitions ?? [];
        return partitions.length > 0 && partitions.every((p) => p.leader >= 0);
      });
      if (ready) return;
    } catch (err) {
      if (!NOT_YET.has((err as { type?: string }).type ?? '')) throw err;
    }
    if (Date.now() > deadline) throw errors.unavailable(`Kafka topics ${topics.join(', ')} have no leader after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The distributed EventBus on Kafka via kafkajs (DESIGN section 4). */
export function createKafkaEventBus(options: KafkaEventBusOptions): KafkaEventBus {
  const logger = (options.logger ?? silentLogger()).child({ component: 'kafka-bus' });
  // Every client of this bus reports to one outage log: one warn when the broker goes away, one info when it is back
  // (for 5 s: the admin client reconnects before the consumers, which is still the same outage).
  const outage = createOutageLog(logger, 'kafka', Date.now, 5_000);
  const kafka = new Kafka({
    clientId: options.clientId,
    brokers: options.brokers,
    logLevel: kafkaLogLevel(logger),
    logCreator: kafkaLogCreator(logger, outage),
  });
  const knownTopics = new Set<string>();
  const subscriptions = new Set<Subscription>();
  const consumers = new Set<KafkaSubscription>();
  const sessionTimeoutMs = options.sessionTimeoutMs ?? 10_000;
  const maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const compression = options.compression === 'none' ? CompressionTypes.None : CompressionTypes.GZIP;
  /** Topics per consumer group of this bus, for the lag gauge. */
  const groups = new Map<string, { topics: Set<string>; count: number }>();
  let admin: Promise<Admin> | undefined;
  let producer: Promise<Producer> | undefined;
  let closed = false;

  const assertOpen = () => {
    if (closed) throw errors.unavailable('The event bus is closed');
  };

  // Connected on first use and shared; a failed connect is forgotten so the next call retries.
  const connected = <T extends { connect(): Promise<void> }>(client: T, forget: () => void): Promise<T> =>
    client.connect().then(
      () => client,
      (err: unknown) => {
        forget();
        throw err;
      },
    );
  const getAdmin = () => (admin ??= connected(kafka.admin(), () => (admin = undefined)));
  const getProducer = () =>
    (producer ??= connected(
      kafka.producer({
        // Idempotence needs acks=all and keeps per-partition order across retries.
        idempotent: true,
        maxInFlightRequests: 1,
        allowAutoTopicCreation: false,
        createPartitioner: Partitioners.DefaultPartitioner,
      }),
      () => (producer = undefined),
    ));

  const ensureTopics = async (topics: string[]) => {
    const missing = [...new Set(topics)].filter((t) => !knownTopics.has(t));
    if (missing.length === 0) return;
    const client = await getAdmin();
    const existing = new Set(await client.listTopics());
    const toCreate = missing.filter((t) => !existing.has(t));
    if (toCreate.length > 0) {
      // Returns false (no throw) when another client created them first. Not
      // waitForLeaders: kafkajs retries only LEADER_NOT_AVAILABLE there, while a
      // Kafka 4 broker answers UNKNOWN_TOPIC_OR_PARTITION until the new topic's
      // metadata has propagated, which kafkajs then throws.
      await client.createTopics({
        waitForLeaders: false,
        topics: toCreate.map((topic) => ({
          topic,
          numPartitions: options.partitions ?? 4,
          replicationFactor: options.replicationFactor ?? 1,
        })),
      });
    }
    await waitForLeaders(client, missing, TOPIC_READY_TIMEOUT_MS);
    for (const topic of missing) knownTopics.add(topic);
  };

  const consumerLag = async (): Promise<GroupLag[]> => {
    if (groups.size === 0) return [];
    const client = await getAdmin();
    return Promise.all([...groups].map(([groupId, { topics }]) => consumerGroupLag(client, groupId, [...topics])));
  };
  const unregisterGauge = registerLagGauge(options.meter ?? metrics.getMeter('@kb/bus'), () =>
    consumerLag().catch((err: unknown) => {
      logger.debug({ err }, 'consumer lag not measured');
      return [];
    }),
  );

  /**
   * One send; refused as too large (the broker's limit is below ours, or the
   * estimate missed), it is halved and each half sent in order, down to one message.
   */
  const send = async (client: Producer, topic: string, messages: OutgoingMessage[]): Promise<void> => {
    try {
      await client.send({
        topic,
        acks: -1,
        compression,
        messages: messages.map((m) => ({ key: m.key, value: m.value, headers: m.headers ?? {} })),
      });
    } catch (err) {
      if (!refusedAsTooLarge(err)) throw err;
      if (messages.length === 1)
        throw errors.validation(
          `A message of ${Buffer.byteLength(messages[0]!.value)} bytes is over the broker's message size limit (topic ${topic}); it cannot be published`,
          { cause: err },
        );
      const half = Math.ceil(messages.length / 2);
      logger.debug({ topic, messages: messages.length }, 'the broker refused a send as too large; sending it in halves');
      await send(client, topic, messages.slice(0, half));
      await send(client, topic, messages.slice(half));
    }
  };

  return {
    consumerLag,
    maxMessageBytes,

    async ensureTopics(topics) {
      assertOpen();
      await ensureTopics(topics);
    },

    async ping() {
      assertOpen();
      await (await getAdmin()).describeCluster();
      outage.recovered();
    },

    async checkConsumers() {
      const waiting = [...consumers].filter((c) => !c.joined).map((c) => c.groupId);
      if (waiting.length > 0) throw errors.unavailable(`consumer groups not joined yet: ${[...new Set(waiting)].join(', ')}`);
    },

    async publish(topic, messages) {
      assertOpen();
      if (messages.length === 0) return;
      await ensureTopics([topic]);
      const client = await getProducer();
      for (const run of splitByBytes(messages, maxMessageBytes)) await send(client, topic, run);
      outage.recovered();
    },

    async subscribe(subscribeOptions) {
      assertOpen();
      if (subscribeOptions.topics.length === 0) throw errors.validation('subscribe needs at least one topic');
      const inner = startKafkaSubscription(
        {
          kafka,
          logger,
          outage,
          ensureTopics,
          retryBackoffMs: options.retryBackoffMs ?? { initial: 100, max: 30_000 },
          partitionsConsumedConcurrently: options.partitionsConsumedConcurrently ?? 4,
          readyTimeoutMs: 30_000,
          sessionTimeoutMs,
          heartbeatIntervalMs: Math.max(500, Math.floor(sessionTimeoutMs / 3)),
        },
        subscribeOptions,
      );
      consumers.add(inner);
      const group = groups.get(subscribeOptions.groupId) ?? { topics: new Set<string>(), count: 0 };
      for (const topic of subscribeOptions.topics) group.topics.add(topic);
      group.count++;
      groups.set(subscribeOptions.groupId, group);
      let stopped = false;
      const subscription: Subscription = {
        async stop() {
          await inner.stop();
          consumers.delete(inner);
          subscriptions.delete(subscription);
          if (!stopped && --group.count === 0) groups.delete(subscribeOptions.groupId);
          stopped = true;
        },
      };
      subscriptions.add(subscription);
      // Joined and fetched, unless the broker cannot be reached (then it joins when the broker comes).
      if (subscribeOptions.waitUntilConsuming ?? options.waitUntilConsuming ?? true) await inner.started;
      return subscription;
    },

    async close() {
      if (closed) return;
      closed = true;
      unregisterGauge();
      await Promise.all([...subscriptions].map((s) => s.stop()));
      const clients = await Promise.allSettled([producer, admin].filter((c) => c !== undefined));
      await Promise.all(clients.map((c) => (c.status === 'fulfilled' ? c.value.disconnect() : undefined)));
    },
  };
}
