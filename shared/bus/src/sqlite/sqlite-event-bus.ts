import { errors, randomIds, silentLogger, systemClock, type Clock, type IdGenerator, type Logger } from '@kb/platform';
import { DEFAULT_MAX_MESSAGE_BYTES, type EventBus, type OutgoingMessage, type SubscribeOptions, type Subscription } from '../port.js';
import { acquireBusConnection } from './connection.js';
import { startGroupConsumer } from './group-consumer.js';

export interface SqliteEventBusOptions {
  /** The bus file; every process that opens the same path shares topics, offsets and groups. */
  path: string;
  /** What `maxMessageBytes` says (default 1,000,000); the embedded log carries any size. */
  maxMessageBytes?: number;
  /** Partitions of topics this bus creates (default 4). */
  partitions?: number;
  /** How often an idle consumer looks for new messages and membership changes (default 25). */
  pollIntervalMs?: number;
  /** A member silent this long is dead and its partitions move (default 10 000). */
  sessionTimeoutMs?: number;
  /** Redelivery delay after a failed handler, doubling per attempt (default 100 ms up to 30 s). */
  retryBackoffMs?: { initial: number; max: number };
  /** See OpenBusDatabaseOptions.synchronous (default NORMAL). */
  synchronous?: 'NORMAL' | 'FULL';
  logger?: Logger;
  /** Drives timestamps, heartbeats and backoff; must advance with real time across processes. */
  clock?: Clock;
  ids?: IdGenerator;
}

/** The embedded EventBus: a durable partitioned log in one SQLite file (DESIGN section 4). */
export function createSqliteEventBus(options: SqliteEventBusOptions): EventBus {
  const partitions = options.partitions ?? 4;
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger();
  const ids = options.ids ?? randomIds;
  const sessionTimeoutMs = options.sessionTimeoutMs ?? 10_000;
  const connection = acquireBusConnection({
    path: options.path,
    synchronous: options.synchronous ?? 'NORMAL',
    pollIntervalMs: options.pollIntervalMs ?? 25,
    sessionTimeoutMs,
    clock,
    logger,
  });
  const { db, log, membership, changes, poller } = connection;
  const subscriptions = new Set<Subscription>();
  let closed = false;

  const assertOpen = () => {
    if (closed) throw errors.unavailable('The event bus is closed');
  };

  return {
    maxMessageBytes: options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,

    async ensureTopics(topics) {
      assertOpen();
      validateTopics(topics);
      log.ensureTopics(topics, partitions);
    },

    async ping() {
      assertOpen();
      db.prepare('SELECT 1').get();
    },

    async publish(topic, messages) {
      assertOpen();
      validateTopics([topic]);
      validateMessages(messages);
      if (messages.length === 0) return;
      log.ensureTopics([topic], partitions);
      log.append(topic, messages, clock.now().toISOString());
      changes.touch('messages');
    },

    async subscribe(subscribeOptions: SubscribeOptions) {
      assertOpen();
      validateTopics(subscribeOptions.topics);
      if (subscribeOptions.topics.length === 0) throw errors.validation('subscribe needs at least one topic');
      if (!subscribeOptions.groupId) throw errors.validation('subscribe needs a groupId');
      log.ensureTopics(subscribeOptions.topics, partitions);
      if (subscribeOptions.fromBeginning === false) log.startAtEndWhereUncommitted(subscribeOptions.groupId, subscribeOptions.topics);
      const consumer = startGroupConsumer(
        {
          log,
          membership,
          changes,
          poller,
          clock,
          logger: logger.child({ component: 'sqlite-bus', groupId: subscribeOptions.groupId }),
          memberId: ids.uuid(),
          sessionTimeoutMs,
          retryBackoffMs: options.retryBackoffMs ?? { initial: 100, max: 30_000 },
          batchSize: 100,
          batchBytes: 1_048_576,
        },
        subscribeOptions,
      );
      const subscription: Subscription = {
        async stop() {
          await consumer.stop();
          subscriptions.delete(subscription);
        },
      };
      subscriptions.add(subscription);
      return subscription;
    },

    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...subscriptions].map((s) => s.stop()));
      await connection.release();
    },
  };
}

function validateTopics(topics: string[]): void {
  for (const topic of topics) {
    if (typeof topic !== 'string' || topic.length === 0) throw errors.validation('Topic names must be non-empty strings');
  }
}

function validateMessages(messages: OutgoingMessage[]): void {
  for (const m of messages) {
    if (typeof m.key !== 'string' || typeof m.value !== 'string') {
      throw errors.validation('Bus messages need a string key and a string value');
    }
    for (const value of Object.values(m.headers ?? {})) {
      if (typeof value !== 'string') throw errors.validation('Bus message headers must be strings');
    }
  }
}
