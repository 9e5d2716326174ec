import type { Logger } from 'pino';
import { acquireLease } from '@kb/eventsourcing';
import type { Clock } from '@kb/platform';
import type { Store } from '@kb/store';
import type { RunDoc } from '../projections/index.js';

/**
 * The seam for per-run leases: whoever holds a run's lease works on it, and
 * keeps it by renewing before it expires (a heartbeat). A worker that dies
 * stops renewing, so another takes the run once the lease has lapsed.
 */
export interface RunLeases {
  /** Takes or renews the lease; false when another owner holds it. */
  acquire(name: string): Promise<boolean>;
  readonly ttlMs: number;
}

/** Today's adapter: the store lease of @kb/eventsourcing (renewed by acquiring again). */
export function createStoreRunLeases(options: { store: Store; owner: string; ttlMs: number; clock: Clock }): RunLeases {
  return {
    ttlMs: options.ttlMs,
    acquire: (name) => acquireLease(options.store, name, options.owner, options.ttlMs, options.clock),
  };
}

export interface RunWorker {
  start(): void;
  /** One pass: take every pending run whose lease is free and work on it (tests call this). */
  tick(): Promise<void>;
  /** A run was requested: look now rather than at the next tick. */
  notify(): void;
  stop(): Promise<void>;
}

/** Works generation runs in the background; several replicas share them through the leases. */
export function createRunWorker(options: {
  pending: (limit: number) => Promise<RunDoc[]>;
  execute: (run: RunDoc, alive: () => boolean) => Promise<void>;
  leases: RunLeases;
  logger: Logger;
  tickMs: number;
  concurrency?: number;
}): RunWorker {
  const inFlight = new Map<string, Promise<void>>();
  const concurrency = options.concurrency ?? 2;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  async function work(run: RunDoc) {
    const name = `generation-run:${run.run_id}`;
    let alive = true;
    const heartbeat = setInterval(
      () => {
        options.leases.acquire(name).then(
          (held) => {
            if (!held) alive = false;
          },
          () => undefined,
        );
      },
      Math.max(50, Math.floor(options.leases.ttlMs / 3)),
    );
    try {
      await options.execute(run, () => alive && !stopped);
    } finally {
      clearInterval(heartbeat);
    }
  }

  async function tick() {
    if (stopped) return;
    const free = concurrency - inFlight.size;
    if (free <= 0) return;
    const runs = (await options.pending(concurrency * 4)).filter((r) => !inFlight.has(r.run_id));
    for (const run of runs) {
      if (inFlight.size >= concurrency || stopped) break;
      if (!(await options.leases.acquire(`generation-run:${run.run_id}`))) continue;
      const p = work(run)
        .catch((err: unknown) => options.logger.error({ err, run_id: run.run_id }, 'generation run crashed'))
        .finally(() => {
          inFlight.delete(run.run_id);
          kick();
        });
      inFlight.set(run.run_id, p);
    }
  }

  const kick = () => {
    if (!stopped) void tick().catch((err: unknown) => options.logger.warn({ err }, 'run worker tick failed'));
  };

  return {
    start() {
      timer = setInterval(kick, options.tickMs);
      kick();
    },
    tick,
    notify: kick,
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      await Promise.all(inFlight.values());
    },
  };
}
