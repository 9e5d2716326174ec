import type { Clock, Logger } from '@kb/platform';
import type { BatchOutcome, ReceivedMessage, SubscribeOptions, Subscription } from '../port.js';
import { assignPartitions, type TopicPartition } from './assignment.js';
import type { ChangeSignal } from './change-signal.js';
import type { Log } from './log.js';
import type { Membership } from './membership.js';
import type { BusPoller, PollView } from './poller.js';

export interface GroupConsumerSettings {
  log: Log;
  membership: Membership;
  changes: ChangeSignal;
  poller: BusPoller;
  clock: Clock;
  logger: Logger;
  memberId: string;
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
  /** The offset after the last message the buffer's read looked at, including those of types nobody here wants. */
  bufferEnd: number;
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
 * One member of a consumer group, polled by the connection's poller: it
 * heartbeats, recomputes the assignment when the live members changed, claims
 * and releases partitions, and starts a drain for each owned partition that has
 * new messages. A drain delivers one message at a time and hands the offset to
 * the poller once per batch read (and when it stops), which writes it right
 * after the current turn of the event loop; a failure leaves the message at the
 * head of its partition until a backoff has passed, while other partitions keep
 * flowing.
 */
export function startGroupConsumer(settings: GroupConsumerSettings, options: SubscribeOptions): Subscription {
  const { log, membership, changes, poller, clock, logger, memberId, sessionTimeoutMs } = settings;
  const { groupId, topics, handler, batchHandler } = options;
  const workers = new Map<string, PartitionWorker>();
  const heartbeatEveryMs = Math.max(1, Math.floor(sessionTimeoutMs / 3));
  let lastHeartbeat = Number.NEGATIVE_INFINITY;
  /** Look at everything at the next poll (a poll failed, or a drain did). */
  let lookAgain = true;
  /** The live members (and their topics) the current assignment was computed from. */
  let assignedFrom = '';
  /** Partitions assigned to this member whose claim another member still holds. */
  let unclaimed = 0;
  let stopped = false;
  let stopping: Promise<void> | undefined;

  const now = () => clock.now().getTime();

  const heartbeatIfDue = (t: number) => {
    if (t - lastHeartbeat < heartbeatEveryMs) return;
    membership.heartbeat(groupId, memberId, topics, t, t - sessionTimeoutMs);
    lastHeartbeat = t;
    // Had we been declared dead (e.g. a blocked event loop), others may hold our partitions now.
    const held = new Set(membership.ownClaims(groupId, memberId).map(keyOf));
    for (const worker of workers.values()) if (!held.has(worker.key)) worker.revoked = true;
  };

  /**
   * Recomputes the assignment, releases what is no longer ours and claims what
   * is; skipped while the live members are the ones it was computed from, every
   * claim is held and nothing is revoked (a publish changes the file, not the group).
   */
  const rebalance = (t: number, view: PollView) => {
    const live = [...view.liveMembers(groupId)];
    if (!live.some((m) => m.memberId === memberId)) live.push({ memberId, topics });
    const members = live.map((m) => `${m.memberId}:${m.topics.join(',')}`).join('|');
    const revoked = [...workers.values()].some((w) => w.revoked);
    if (members === assignedFrom && unclaimed === 0 && !revoked) return;
    assignedFrom = members;
    const mine = assignPartitions(live, view.partitionCounts()).get(memberId) ?? [];
    const wanted = new Set(mine.map(keyOf));
    for (const [key, worker] of workers) {
      if (!wanted.has(key)) worker.revoked = true;
      if (worker.revoked && !worker.running) {
        membership.release(groupId, memberId, worker.topic, worker.partition);
        changes.touch('membership');
        workers.delete(key);
        logger.debug({ memberId, topic: worker.topic, partition: worker.partition }, 'partition released');
      }
    }
    unclaimed = 0;
    for (const tp of mine) {
      const key = keyOf(tp);
      if (workers.has(key)) continue;
      if (!membership.claim(groupId, memberId, tp.topic, tp.partition, t - sessionTimeoutMs)) {
        unclaimed++;
        continue;
      }
      const position = log.committed(groupId, tp.topic, tp.partition) ?? 0;
      logger.debug({ memberId, ...tp, position }, 'partition claimed');
      workers.set(key, {
        ...tp,
        key,
        position,
        buffer: [],
        bufferEnd: position,
        running: null,
        attempts: 0,
        retryAt: 0,
        revoked: false,
      });
    }
  };

  const drain = async (worker: PartitionWorker) => {
    // Offsets are handed to the poller once per batch read (and whenever the drain
    // stops), which writes those of every group that finished a batch in the same
    // turn of the event loop in one transaction: a write transaction per message,
    // and then per batch and group, was most of the bus's cost. A crash redelivers
    // at most a batch, which idempotent consumers absorb; the claim is still
    // checked before each message (or each part of the batch a batch handler takes).
    let handled = 0;
    const lost = () => {
      logger.warn({ groupId, topic: worker.topic, partition: worker.partition }, 'partition claim lost; another member continues');
      worker.revoked = true;
    };
    const commitHandled = (): boolean => {
      if (handled === 0) return true;
      handled = 0;
      poller.commit({ groupId, memberId, topic: worker.topic, partition: worker.partition, nextOffset: worker.position, onLost: lost });
      if (membership.holds(groupId, memberId, worker.topic, worker.partition)) return true;
      lost();
      return false;
    };
    try {
      while (!stopped && !worker.revoked) {
        if (worker.buffer.length === 0) {
          // Messages of types nobody here wants, after the last handled one, are passed over with it.
          if (worker.bufferEnd > worker.position) {
            worker.position = worker.bufferEnd;
            handled += 1;
          }
          if (!commitHandled()) return;
          const read = log.read(worker.topic, worker.partition, worker.position, settings.batchSize, settings.batchBytes, options.types);
          if (read.end === undefined) return;
          worker.buffer = read.messages;
          worker.bufferEnd = read.end;
          if (worker.buffer.length === 0) continue;
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
        lookAgain = true; // look again even if nothing else changes
        logger.error({ err, groupId, topic: worker.topic, partition: worker.partition }, 'bus consumer failed; retrying');
      })
      .finally(() => {
        worker.running = null;
      });
  };

  /** Starts drains; partitions with nothing buffered are only looked at when messages may have been appended. */
  const dispatch = (t: number, look: boolean, view: PollView) => {
    const ready = [...workers.values()].filter((w) => !w.revoked && !w.running && w.retryAt <= t && (look || w.buffer.length > 0));
    if (ready.length === 0) return;
    const heads = ready.some((w) => w.buffer.length === 0) ? view.heads() : new Map<string, number>();
    for (const worker of ready) {
      if (worker.buffer.length === 0 && (heads.get(worker.key) ?? 0) <= worker.position) continue;
      start(worker);
    }
  };

  const participant = {
    topics,
    poll(view: PollView) {
      if (stopped) return;
      try {
        const t = view.now;
        const heartbeatDue = t - lastHeartbeat >= heartbeatEveryMs;
        const again = lookAgain;
        lookAgain = false;
        // Deaths of members are time-based, so the members are also looked at every heartbeat.
        // A partition whose holder is finishing is claimed once the holder released it (a change of membership).
        if (view.membershipChanged || heartbeatDue || again || [...workers.values()].some((w) => w.revoked)) {
          heartbeatIfDue(t);
          rebalance(t, view);
        }
        dispatch(t, view.messagesChanged || heartbeatDue || again, view);
      } catch (err) {
        lookAgain = true; // the change was not fully handled: look again next poll
        assignedFrom = '';
        logger.error({ err, groupId }, 'bus poll failed; retrying');
      }
    },
  };

  // Join synchronously so a failure reaches subscribe() and the group sees us at once.
  heartbeatIfDue(now());
  changes.touch('membership');
  poller.add(participant);

  return {
    stop() {
      stopping ??= (async () => {
        stopped = true;
        poller.remove(participant);
        await Promise.all([...workers.values()].map((w) => w.running));
        try {
          poller.flush();
        } catch (err) {
          logger.warn({ err, groupId }, 'offsets not written on stop; their messages are delivered again');
        }
        workers.clear();
        try {
          membership.leave(groupId, memberId);
          changes.touch('membership');
        } catch (err) {
          logger.warn({ err, groupId }, 'could not leave the consumer group; it expires after the session timeout');
        }
      })();
      return stopping;
    },
  };
}
