import type { Logger } from 'pino';
import { createOutageLog, silentLogger, systemClock, type Clock } from '@kb/platform';
import type { EventCatalog, EventEnvelope } from '@kb/events';
import type { EventBus, OutgoingMessage } from '@kb/bus';
import type { Store, StoredEvent } from '@kb/store';
import { acquireLease } from './lease.js';

export interface OutboxRelayOptions {
  store: Store;
  bus: EventBus;
  catalog: EventCatalog;
  /** Names the checkpoint and lease, one per service. */
  name: string;
  /** Identifies this process for the lease (several replicas: one relays at a time). */
  owner: string;
  batchSize?: number;
  pollIntervalMs?: number;
  leaseMs?: number;
  clock?: Clock;
  logger?: Logger;
}

const CHECKPOINTS = '_checkpoints';

export const toEnvelope = (e: StoredEvent): EventEnvelope => ({
  id: e.id,
  type: e.type,
  schema: e.schema,
  stream_id: e.stream_id,
  version: e.version,
  position: e.position,
  data: e.data,
  metadata: e.metadata,
  recorded_at: e.recorded_at,
});

/**
 * Publishes committed events to the bus after commit, at least once and in
 * position order (so in order per org, the message key). The checkpoint is the
 * last published position. While the relay holds its lease it keeps the
 * checkpoint in memory and writes it once it caught up (the next pass that finds
 * nothing new, at the latest the next poll), once a batch's worth of events is
 * unwritten, and on stop and flush: a pass per commit would otherwise cost a
 * write transaction per commit. A crash re-publishes what was published since the
 * last write, fewer than `batchSize` events, which idempotent consumers absorb.
 */
export function createOutboxRelay(options: OutboxRelayOptions) {
  const logger = options.logger ?? silentLogger();
  // A pass runs after every commit and every poll: while the bus is away, one line says so, not one per pass.
  const outage = createOutageLog(logger.child({ component: 'outbox-relay' }), 'event bus (outbox relay)');
  const clock = options.clock ?? systemClock;
  const batchSize = options.batchSize ?? 200;
  const pollIntervalMs = options.pollIntervalMs ?? 250;
  const leaseMs = options.leaseMs ?? 10_000;
  const checkpointId = `outbox:${options.name}`;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = true;
  /** When the lease this relay last wrote for itself ends (0: not held). */
  let heldUntil = 0;
  /** The last published position while the lease is held (undefined: read it from the store). */
  let position: number | undefined;
  /** Events published since the checkpoint was last written. */
  let unsaved = 0;

  /**
   * Holds the relay's lease, writing it only when less than two thirds of it
   * remain: a pass after every commit (and every poll) would otherwise cost a
   * write transaction of its own. A pass must end within the remaining two
   * thirds, as it had to end within the whole lease before.
   */
  async function holdLease(): Promise<boolean> {
    const now = clock.now().getTime();
    if (heldUntil - now > (leaseMs * 2) / 3) return true;
    // A lease that ran out may have let another replica publish and checkpoint meanwhile.
    if (heldUntil <= now) position = undefined;
    const leased = await acquireLease(options.store, checkpointId, options.owner, leaseMs, clock);
    heldUntil = leased ? now + leaseMs : 0;
    if (!leased) position = undefined;
    return leased;
  }

  async function saveCheckpoint(): Promise<void> {
    if (unsaved === 0 || position === undefined) return;
    const at = position;
    const count = unsaved;
    await options.store.transaction((tx) => tx.put(CHECKPOINTS, { id: checkpointId, position: at }));
    unsaved -= count;
  }

  async function publishBatch(): Promise<number> {
    if (!(await holdLease())) return 0;
    position ??= (await options.store.get<{ id: string; position: number }>(CHECKPOINTS, checkpointId))?.position ?? 0;
    const events = await options.store.readAll(position, batchSize);
    if (events.length === 0) {
      await saveCheckpoint();
      return 0;
    }
    const byTopic = new Map<string, OutgoingMessage[]>();
    for (const e of events) {
      if (!options.catalog.isPublished(e.type)) continue;
      const topic = options.catalog.topicOf(e.type);
      const list = byTopic.get(topic) ?? [];
      list.push({ key: e.metadata.org_id, value: JSON.stringify(toEnvelope(e)), headers: { type: e.type } });
      byTopic.set(topic, list);
    }
    for (const [topic, messages] of byTopic) await options.bus.publish(topic, messages);
    position = events[events.length - 1]!.position;
    unsaved += events.length;
    if (unsaved >= batchSize) await saveCheckpoint();
    return events.length;
  }

  async function drain(): Promise<void> {
    do {
      again = false;
      try {
        while (!stopped && (await publishBatch()) === batchSize);
        outage.recovered();
      } catch (err) {
        outage.failed(err);
      }
    } while (again && !stopped);
  }

  function kick(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = drain().finally(() => {
      running = undefined;
    });
  }

  return {
    /** Starts relaying without waiting for the bus: events wait in the outbox while it is away. */
    async start(topics: string[]) {
      stopped = false;
      // Created now when the bus answers, else by the first publish.
      options.bus.ensureTopics(topics).then(
        () => outage.recovered(),
        (err: unknown) => outage.failed(err),
      );
      const tick = () => {
        kick();
        timer = setTimeout(tick, pollIntervalMs);
        timer.unref();
      };
      tick();
    },
    /** Publish now rather than at the next poll. */
    notify: kick,
    /** Publish everything committed so far and write the checkpoint (tests, shutdown). */
    async flush() {
      while (running) await running;
      if (!stopped) {
        kick();
        while (running) await running;
      }
      await saveCheckpoint();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      while (running) await running;
      // Not written: the next relay re-publishes those events, which consumers absorb.
      await saveCheckpoint().catch((err: unknown) => logger.warn({ err }, 'outbox checkpoint not written on stop'));
    },
  };
}

export type OutboxRelay = ReturnType<typeof createOutboxRelay>;
