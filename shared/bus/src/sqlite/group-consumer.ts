import type { Clock, Logger } from '@kb/platform';
import type { BatchOutcome, ReceivedMessage, SubscribeOptions, Subscription } from '../port.js';
import { assignPartitions, type TopicPartition } from './assignment.js';
import type { ChangeSignal } from './change-signal.js';
import type { Log } from './log.js';
import type { Membership } from './membership.js';

export interface GroupConsumerSettings {
  log: Log;
  membership: Membership;
  changes: ChangeSignal;
  clock: Clock;
  logger: Logger;
  memberId: string;
  pollIntervalMs: number;
  sessionTimeoutMs: number;
  retryBackoffMs: { initial: number; max: number };
  /** Messages read from the file per query; delivery is still one at a time. */
  batchSize: number;
  /** Bytes of message values one batch read may hold (at least one message). */
  batchBytes: number;
}

interface PartitionWorker extends TopicPartition {
  key: string;
  /** Next offset to deliver (the committed offset once the buffer is empty). */
  position: number;
  buffer: ReceivedMessage[];
  running: Promise<void> | null;
  attempts: number;
  retryAt: number;
  /** The partition is no longer ours: finish the in-flight message, then release it. */
  revoked: boolean;
}

const keyOf = (tp: TopicPartition) => `${tp.partition}:${tp.topic}`;

function retryDelay(attempts: number, backoff: { initial: number; max: number }): number {
  return Math.min(backoff.max, backoff.initial * 2 ** Math.max(0, attempts - 1));
}

/**
 * One member of a consumer group. A poll loop (setTimeout, never a busy loop)
 * heartbeats, recomputes the assignment from the live members, claims and
 * releases partitions, and starts a drain for each owned partition that has new
 * messages. A drain delivers one message at a time and commits the offset once
 * per batch read (and when it stops); a failure leaves the message at the head
 * of its partition until a backoff has passed, while other partitions keep flowing.
 */
export function startGroupConsumer(settings: GroupConsumerSettings, options: SubscribeOptions): Subscription {
  const { log, membership, changes, clock, logger, memberId, sessionTimeoutMs } = settings;
  const { groupId, topics, handler, batchHandler } = options;
  const workers = new Map<string, PartitionWorker>();
  const heartbeatEveryMs = Math.max(1, Math.floor(sessionTimeoutMs / 3));
  let lastHeartbeat = Number.NEGATIVE_INFINITY;
  let seenVersion = '';
  let stopped = false;
  let stopping: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;

  const now = () => clock.now().getTime();

  const heartbeatIfDue = (t: number) => {
    if (t - lastHeartbeat < heartbeatEveryMs) return;
    membership.heartbeat(groupId, memberId, topics, t, t - sessionTimeoutMs);
    lastHeartbeat = t;
    // Had we been declared dead (e.g. a blocked event loop), others may hold our partitions now.
    const held = new Set(membership.ownClaims(groupId, memberId).map(keyOf));
    for (const worker of workers.values()) if (!held.has(worker.key)) worker.revoked = true;
  };

  const rebalance = (t: number) => {
    const live = membership.liveMembers(groupId, t - sessionTimeoutMs);
    if (!live.some((m) => m.memberId === memberId)) live.push({ memberId, topics });
    const mine = assignPartitions(live, log.allPartitionCounts()).get(memberId) ?? [];
    const wanted = new Set(mine.map(keyOf));
    for (const [key, worker] of workers) {
      if (!wanted.has(key)) worker.revoked = true;
      if (worker.revoked && !worker.running) {
        membership.release(groupId, memberId, worker.topic, worker.partition);
        changes.touch();
        workers.delete(key);
        logger.debug({ memberId, topic: worker.topic, partition: worker.partition }, 'partition released');
      }
    }
    for (const tp of mine) {
      const key = keyOf(tp);
      if (workers.has(key) || !membership.claim(groupId, memberId, tp.topic, tp.partition, t - sessionTimeoutMs)) continue;
      const position = log.committed(groupId, tp.topic, tp.partition) ?? 0;
      logger.debug({ memberId, ...tp, position }, 'partition claimed');
      workers.set(key, {
        ...tp,
        key,
        position,
        buffer: [],
        running: null,
        attempts: 0,
        retryAt: 0,
        revoked: false,
      });
    }
  };

  const drain = async (worker: PartitionWorker) => {
    // Offsets are committed once per batch read (and whenever the drain stops),
    // not after every message: a write transaction per message was most of the
    // bus's cost. A crash redelivers at most the batch's handled messages, which
    // idempotent consumers absorb; the claim is still checked before each message
    // (or each part of the batch a batch handler takes).
    let handled = 0;
    const commitHandled = (): boolean => {
      if (handled === 0) return true;
      handled = 0;
      if (membership.commit(groupId, memberId, worker.topic, worker.partition, worker.position)) return true;
      logger.warn({ groupId, topic: worker.topic, partition: worker.partition }, 'partition claim lost; another member continues');
      worker.revoked = true;
      return false;
    };
    try {
      while (!stopped && !worker.revoked) {
        if (worker.buffer.length === 0) {
          if (!commitHandled()) return;
          worker.buffer = log.read(worker.topic, worker.partition, worker.position, settings.batchSize, settings.batchBytes);
          if (worker.buffer.length === 0) return;
        } else if (handled > 0 && !membership.holds(groupId, memberId, worker.topic, worker.partition)) {
          logger.warn({ groupId, topic: worker.topic, partition: worker.partition }, 'partition claim lost; another member continues');
          worker.revoked = true;
          return;
        }
        if (batchHandler && worker.buffer.length > 1) {
          const { handled: count, error } = await offerBatch(worker);
          if (count > 0) {
            worker.position = Number(worker.buffer[count - 1]!.offset) + 1;
            worker.buffer.splice(0, count);
            worker.attempts = 0;
            handled += count;
          }
          if (error === undefined) continue;
          failed(worker, worker.buffer[0]!, error);
          return;
        }
        const message = worker.buffer[0]!;
        try {
          await handler(message);
        } catch (err) {
          failed(worker, message, err);
          return;
        }
        worker.position = Number(message.offset) + 1;
        worker.buffer.shift();
        worker.attempts = 0;
        handled += 1;
      }
    } finally {
      commitHandled();
    }
  };

  /** The message at the head failed: it stays there until a backoff has passed. */
  const failed = (worker: PartitionWorker, message: ReceivedMessage, err: unknown) => {
    worker.attempts += 1;
    const delay = retryDelay(worker.attempts, settings.retryBackoffMs);
    worker.retryAt = now() + delay;
    logger.warn(
      { err, groupId, topic: message.topic, partition: message.partition, offset: message.offset, attempts: worker.attempts, delay },
      'bus handler failed; redelivering after backoff',
    );
  };

  /** Offers the buffered messages to the batch handler; a rejection or no progress is a failure of the first. */
  const offerBatch = async (worker: PartitionWorker): Promise<BatchOutcome> => {
    try {
      const outcome = await batchHandler!(worker.buffer.slice());
      const handled = Math.max(0, Math.min(Math.floor(outcome.handled), worker.buffer.length));
      if (handled === 0 && outcome.error === undefined) return { handled, error: new Error('the batch handler handled nothing') };
      return { handled, error: handled === worker.buffer.length ? undefined : outcome.error };
    } catch (error) {
      return { handled: 0, error: error ?? new Error('the batch handler failed') };
    }
  };

  const start = (worker: PartitionWorker) => {
    worker.running = drain(worker)
      .catch((err: unknown) => {
        // A database failure (e.g. a lock held past busy_timeout): the message stays at the head.
        worker.retryAt = now() + retryDelay(Math.max(1, worker.attempts), settings.retryBackoffMs);
        seenVersion = ''; // look again even if nothing else changes
        logger.error({ err, groupId, topic: worker.topic, partition: worker.partition }, 'bus consumer failed; retrying');
      })
      .finally(() => {
        worker.running = null;
      });
  };

  /** Starts drains; partitions with nothing buffered are only looked at when the file changed. */
  const dispatch = (t: number, fileChanged: boolean) => {
    const ready = [...workers.values()].filter((w) => !w.revoked && !w.running && w.retryAt <= t && (fileChanged || w.buffer.length > 0));
    if (ready.length === 0) return;
    const needHeads = ready.some((w) => w.buffer.length === 0);
    const heads = new Map(needHeads ? log.heads(topics).map((h) => [keyOf(h), h.nextOffset]) : []);
    for (const worker of ready) {
      if (worker.buffer.length === 0 && (heads.get(worker.key) ?? 0) <= worker.position) continue;
      start(worker);
    }
  };

  const tick = () => {
    timer = undefined;
    if (stopped) return;
    try {
      const t = now();
      // Read before looking, so a change made while we look is seen next tick.
      const version = changes.version();
      const heartbeatDue = t - lastHeartbeat >= heartbeatEveryMs;
      const fileChanged = version !== seenVersion;
      seenVersion = version;
      // Idle and unchanged: no query at all. Deaths of members are time-based,
      // so the assignment is also recomputed at every heartbeat.
      if (fileChanged || heartbeatDue || [...workers.values()].some((w) => w.revoked)) {
        heartbeatIfDue(t);
        rebalance(t);
      }
      dispatch(t, fileChanged || heartbeatDue);
    } catch (err) {
      seenVersion = ''; // the change was not fully handled: look again next tick
      logger.error({ err, groupId }, 'bus poll failed; retrying');
    }
    if (!stopped) timer = setTimeout(tick, settings.pollIntervalMs);
  };

  // Join synchronously so a failure reaches subscribe() and the group sees us at once.
  heartbeatIfDue(now());
  changes.touch();
  tick();

  return {
    stop() {
      stopping ??= (async () => {
        stopped = true;
        if (timer) clearTimeout(timer);
        await Promise.all([...workers.values()].map((w) => w.running));
        workers.clear();
        try {
          membership.leave(groupId, memberId);
          changes.touch();
        } catch (err) {
          logger.warn({ err, groupId }, 'could not leave the consumer group; it expires after the session timeout');
        }
      })();
      return stopping;
    },
  };
}
