import type { Clock, Logger } from '@kb/platform';
import type { GroupMember } from './assignment.js';
import type { ChangeSignal } from './change-signal.js';
import type { Log } from './log.js';
import type { Membership, OffsetCommit } from './membership.js';

/** What one poll of the file shows every consumer group of the connection; queries run at most once per poll, when asked. */
export interface PollView {
  now: number;
  /** Messages may have been appended since the previous poll. */
  messagesChanged: boolean;
  /** Members or claims may have changed since the previous poll. */
  membershipChanged: boolean;
  /** Next offset by `partition:topic`, for the topics of every participant. */
  heads(): ReadonlyMap<string, number>;
  liveMembers(groupId: string): readonly GroupMember[];
  partitionCounts(): ReadonlyMap<string, number>;
}

export interface PollParticipant {
  /** The topics whose heads it reads. */
  topics: readonly string[];
  poll(view: PollView): void;
}

export interface PendingCommit extends OffsetCommit {
  /** The claim was gone when the offset was to be written. */
  onLost(): void;
}

export interface BusPollerSettings {
  log: Log;
  membership: Membership;
  changes: ChangeSignal;
  clock: Clock;
  logger: Logger;
  pollIntervalMs: number;
  sessionTimeoutMs: number;
}

const commitKey = (c: OffsetCommit) => `${c.groupId}\n${c.partition}:${c.topic}`;

/**
 * One poll loop for every consumer group on a bus connection. Each group used to
 * poll on its own timer and, on every change of the file, query membership,
 * partition counts and heads itself: with 14 groups in a process that was 14
 * times the same queries per published batch. Here one timer looks at the change
 * signal and runs each query once when some group asks for it. The offsets groups
 * hand in are written together right after the current turn of the event loop,
 * one transaction for every group that finished a batch in it (most groups skip
 * most messages by type and finish in the same turn), instead of one each.
 */
export function createBusPoller(settings: BusPollerSettings) {
  const { log, membership, changes, clock, logger } = settings;
  const participants = new Set<PollParticipant>();
  /** The topics of every participant, for the heads query. */
  let topics: string[] = [];
  const collectTopics = () => {
    topics = [...new Set([...participants].flatMap((p) => p.topics))];
  };
  const pending = new Map<string, PendingCommit>();
  let timer: NodeJS.Timeout | undefined;
  let flushing: NodeJS.Immediate | undefined;
  let closed = false;

  /** Writes the pending offsets; throws (keeping them) when the file cannot be written now. */
  function flush(): void {
    if (flushing) clearImmediate(flushing);
    flushing = undefined;
    if (pending.size === 0) return;
    const commits = [...pending.values()];
    const lost = membership.commitMany(commits);
    for (const c of commits) if (pending.get(commitKey(c)) === c) pending.delete(commitKey(c));
    for (const c of lost) (c as PendingCommit).onLost();
  }

  function view(now: number): PollView {
    let seen: ReturnType<ChangeSignal['look']>;
    try {
      seen = changes.look();
    } catch (err) {
      logger.error({ err }, 'bus change signal failed; looking at everything');
      seen = { messages: true, membership: true };
    }
    let heads: Map<string, number> | undefined;
    let members: Map<string, GroupMember[]> | undefined;
    let counts: Map<string, number> | undefined;
    return {
      now,
      messagesChanged: seen.messages,
      membershipChanged: seen.membership,
      heads: () => (heads ??= new Map(log.heads(topics).map((h) => [`${h.partition}:${h.topic}`, h.nextOffset]))),
      liveMembers: (groupId) => (members ??= membership.liveMembersByGroup(now - settings.sessionTimeoutMs)).get(groupId) ?? [],
      partitionCounts: () => (counts ??= log.allPartitionCounts()),
    };
  }

  function tick(): void {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (closed || participants.size === 0) return;
    try {
      // Offsets first: a partition a group releases in this poll has its last offset written.
      flush();
      const v = view(clock.now().getTime());
      for (const p of participants) p.poll(v);
    } catch (err) {
      logger.error({ err }, 'bus offsets not written; retrying');
    }
    if (!closed && participants.size > 0) timer = setTimeout(tick, settings.pollIntervalMs);
  }

  return {
    /** Adds a group and polls at once, so it starts without waiting for the timer. */
    add(participant: PollParticipant): void {
      participants.add(participant);
      collectTopics();
      tick();
    },
    remove(participant: PollParticipant): void {
      participants.delete(participant);
      collectTopics();
    },
    /**
     * Queues an offset to write after this turn of the event loop (replacing an
     * earlier one of the same group and partition); when that fails, the next poll
     * writes it.
     */
    commit(c: PendingCommit): void {
      pending.set(commitKey(c), c);
      flushing ??= setImmediate(() => {
        try {
          flush();
        } catch (err) {
          logger.warn({ err }, 'bus offsets not written; the next poll retries');
        }
      });
    },
    /** Writes the pending offsets now (a group stopping). */
    flush,
    close(): void {
      closed = true;
      if (timer) clearTimeout(timer);
      if (flushing) clearImmediate(flushing);
      timer = undefined;
      try {
        flush();
      } catch (err) {
        logger.warn({ err }, 'bus offsets not written on close; their messages are delivered again');
      }
    },
  };
}

export type BusPoller = ReturnType<typeof createBusPoller>;
