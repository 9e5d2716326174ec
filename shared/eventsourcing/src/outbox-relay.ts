import type { Logger } from 'pino';
import { metrics, type Meter } from '@opentelemetry/api';
import { createOutageLog, silentLogger, systemClock, type Clock } from '@kb/platform';
import type { EventCatalog, EventEnvelope } from '@kb/events';
import { messageBytes, type EventBus, type OutgoingMessage } from '@kb/bus';
import type { Store, StoredEvent } from '@kb/store';
import { acquireLease } from './lease.js';
import { createRelayHealth, type RelayStatus } from './relay-health.js';

export interface OutboxRelayOptions {
  store: Store;
  bus: EventBus;
  catalog: EventCatalog;
  /** Names the checkpoint and lease, one per service. */
  name: string;
  /** Identifies this process for the lease (several replicas: one relays at a time). */
  owner: string;
  /** Most events per publish (default 200). */
  batchSize?: number;
  /** Most bytes per publish (default the bus's `maxMessageBytes`): a crash re-sends no more than that at once. */
  maxBatchBytes?: number;
  /** The oldest unpublished event older than this makes the relay `failing` (default 60 s). */
  lagAlertMs?: number;
  /** This many failed publishes in a row make the relay `failing` (default 5). */
  failuresBeforeAlert?: number;
  /** Longest wait between attempts while publishing fails (default 5 s; the first retry is the next poll). */
  maxRetryDelayMs?: number;
  /** Where the outbox lag gauge is registered (default: the global OpenTelemetry meter provider). */
  meter?: Meter;
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
 *
 * A publish carries at most `batchSize` events and `maxBatchBytes` bytes. While
 * publishing fails the relay retries on a backoff; once the oldest unpublished
 * event is older than `lagAlertMs`, or `failuresBeforeAlert` publishes failed in a
 * row, `check` rejects with the reason (readiness: `events`), one error line says
 * how far behind it is, and one info line says when it advances again.
 */
export function createOutboxRelay(options: OutboxRelayOptions) {
  const logger = options.logger ?? silentLogger();
  // A pass runs after every commit and every poll: while the bus is away, one line says so, not one per pass.
  const outage = createOutageLog(logger.child({ component: 'outbox-relay' }), 'event bus (outbox relay)');
  const clock = options.clock ?? systemClock;
  const batchSize = options.batchSize ?? 200;
  const maxBatchBytes = options.maxBatchBytes ?? options.bus.maxMessageBytes;
  const maxRetryDelayMs = options.maxRetryDelayMs ?? 5_000;
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
  /** Failed passes in a row, and no pass before this time (ms) while they fail. */
  let failures = 0;
  let retryAt = 0;
  const health = createRelayHealth({
    name: options.name,
    clock,
    logger: logger.child({ component: 'outbox-relay' }),
    lagAlertMs: options.lagAlertMs ?? 60_000,
    failuresBeforeAlert: options.failuresBeforeAlert ?? 5,
    meter: options.meter ?? metrics.getMeter('@kb/eventsourcing'),
    countBehind: () => countBehind(),
  });

  /** Events after the last published position, counted up to 10,000 (an incident's log line and readiness). */
  async function countBehind(): Promise<{ events: number; bytes: number; more: boolean }> {
    let at = position ?? (await options.store.get<{ id: string; position: number }>(CHECKPOINTS, checkpointId))?.position ?? 0;
    let events = 0;
    let bytes = 0;
    while (events < 10_000) {
      const page = await options.store.readAll(at, 500);
      events += page.length;
      for (const e of page) bytes += Buffer.byteLength(JSON.stringify(e.data));
      if (page.length < 500) return { events, bytes, more: false };
      at = page[page.length - 1]!.position;
    }
    return { events, bytes, more: true };
  }

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

  /** The bus message of each event (none for internal events), serialized once. */
  const prepare = (events: StoredEvent[]) =>
    events.map((e) => {
      if (!options.catalog.isPublished(e.type)) return { event: e, bytes: 0 };
      const message: OutgoingMessage = { key: e.metadata.org_id, value: JSON.stringify(toEnvelope(e)), headers: { type: e.type } };
      return { event: e, topic: options.catalog.topicOf(e.type), message, bytes: messageBytes(message) };
    });
  type Prepared = ReturnType<typeof prepare>[number];

  /** Consecutive runs of at most `maxBatchBytes` each (an event over it alone in its run). */
  function runsOf(prepared: Prepared[]): Prepared[][] {
    const runs: Prepared[][] = [];
    let run: Prepared[] = [];
    let bytes = 0;
    for (const p of prepared) {
      if (run.length > 0 && bytes + p.bytes > maxBatchBytes) {
        runs.push(run);
        run = [];
        bytes = 0;
      }
      run.push(p);
      bytes += p.bytes;
    }
    if (run.length > 0) runs.push(run);
    return runs;
  }

  /**
   * One pass: reads up to `batchSize` events after the position and publishes them
   * in runs of at most `maxBatchBytes`, advancing the position after each run.
   * Whether more events may be waiting.
   */
  async function publishBatch(): Promise<boolean> {
    if (!(await holdLease())) {
      health.notHolding();
      return false;
    }
    position ??= (await options.store.get<{ id: string; position: number }>(CHECKPOINTS, checkpointId))?.position ?? 0;
    const read = await options.store.readAll(position, batchSize);
    if (read.length === 0) {
      health.caughtUp();
      await saveCheckpoint();
      return false;
    }
    for (const run of runsOf(prepare(read))) {
      health.waiting(new Date(run[0]!.event.recorded_at).getTime());
      const byTopic = new Map<string, OutgoingMessage[]>();
      for (const { topic, message } of run) if (topic && message) byTopic.set(topic, [...(byTopic.get(topic) ?? []), message]);
      for (const [topic, messages] of byTopic) await options.bus.publish(topic, messages);
      position = run[run.length - 1]!.event.position;
      unsaved += run.length;
      if (unsaved >= batchSize) await saveCheckpoint();
    }
    return read.length === batchSize;
  }

  async function drain(): Promise<void> {
    do {
      again = false;
      try {
        while (!stopped && (await publishBatch()));
        failures = 0;
        retryAt = 0;
        outage.recovered();
        await health.published();
      } catch (err) {
        failures++;
        // The next poll, then twice as long each time up to maxRetryDelayMs: a refusal that lasts is not retried 4 times a second.
        retryAt = clock.now().getTime() + Math.min(maxRetryDelayMs, pollIntervalMs * 2 ** (failures - 1));
        outage.failed(err);
        await health.failed(err);
        return;
      }
    } while (again && !stopped);
  }

  function kick(force = false): void {
    if (stopped) return;
    if (!force && clock.now().getTime() < retryAt) return;
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
    /** Publish now rather than at the next poll (unless publishing failed and the relay is backing off). */
    notify: () => kick(),
    /** Publish everything committed so far and write the checkpoint (tests, shutdown). */
    async flush() {
      while (running) await running;
      if (!stopped) {
        kick(true);
        while (running) await running;
      }
      await saveCheckpoint();
    },
    /** Resolves while events flow; rejects saying how far behind the relay is and why (readiness: `events`). */
    check: () => health.check(),
    /** Where the relay stands (the lag gauge, readiness, tests). */
    status: (): RelayStatus => health.status(),
    async stop() {
      stopped = true;
      health.close();
      if (timer) clearTimeout(timer);
      while (running) await running;
      // Not written: the next relay re-publishes those events, which consumers absorb.
      await saveCheckpoint().catch((err: unknown) => logger.warn({ err }, 'outbox checkpoint not written on stop'));
    },
  };
}

export type OutboxRelay = ReturnType<typeof createOutboxRelay>;
