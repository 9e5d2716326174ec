import type { Logger } from 'pino';
import { silentLogger, systemClock, type Clock } from '@kb/platform';
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
 * last published position; a crash between publish and checkpoint re-publishes,
 * which idempotent consumers absorb.
 */
export function createOutboxRelay(options: OutboxRelayOptions) {
  const logger = options.logger ?? silentLogger();
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

  /**
   * Holds the relay's lease, writing it only when less than two thirds of it
   * remain: a pass after every commit (and every poll) would otherwise cost a
   * write transaction of its own. A pass must end within the remaining two
   * thirds, as it had to end within the whole lease before.
   */
  async function holdLease(): Promise<boolean> {
    const now = clock.now().getTime();
    if (heldUntil - now > (leaseMs * 2) / 3) return true;
    const leased = await acquireLease(options.store, checkpointId, options.owner, leaseMs, clock);
    heldUntil = leased ? now + leaseMs : 0;
    return leased;
  }

  async function publishBatch(): Promise<number> {
    if (!(await holdLease())) return 0;
    const checkpoint = (await options.store.get<{ id: string; position: number }>(CHECKPOINTS, checkpointId))?.position ?? 0;
    const events = await options.store.readAll(checkpoint, batchSize);
    if (events.length === 0) return 0;
    const byTopic = new Map<string, OutgoingMessage[]>();
    for (const e of events) {
      if (!options.catalog.isPublished(e.type)) continue;
      const topic = options.catalog.topicOf(e.type);
      const list = byTopic.get(topic) ?? [];
      list.push({ key: e.metadata.org_id, value: JSON.stringify(toEnvelope(e)), headers: { type: e.type } });
      byTopic.set(topic, list);
    }
    for (const [topic, messages] of byTopic) await options.bus.publish(topic, messages);
    const last = events[events.length - 1]!.position;
    await options.store.transaction((tx) => tx.put(CHECKPOINTS, { id: checkpointId, position: last }));
    return events.length;
  }

  async function drain(): Promise<void> {
    do {
      again = false;
      try {
        while (!stopped && (await publishBatch()) === batchSize);
      } catch (err) {
        logger.error({ err }, 'outbox relay failed; will retry');
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
    async start(topics: string[]) {
      await options.bus.ensureTopics(topics);
      stopped = false;
      const tick = () => {
        kick();
        timer = setTimeout(tick, pollIntervalMs);
        timer.unref();
      };
      tick();
    },
    /** Publish now rather than at the next poll. */
    notify: kick,
    /** Publish everything committed so far (tests, shutdown). */
    async flush() {
      while (running) await running;
      if (!stopped) {
        kick();
        while (running) await running;
      }
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      while (running) await running;
    },
  };
}

export type OutboxRelay = ReturnType<typeof createOutboxRelay>;
