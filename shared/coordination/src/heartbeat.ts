import { systemClock, type Clock } from '@kb/platform';
import type { LeaseManager } from './port.js';

/** The timer functions a heartbeat uses (injected in tests). */
export interface HeartbeatTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: HeartbeatTimers = {
  setTimeout: (fn, ms) => {
    const handle = setTimeout(fn, ms);
    // A heartbeat alone never keeps a process alive.
    handle.unref?.();
    return handle;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface HeartbeatOptions {
  /**
   * Renews the lease for another ttlMs: true when the caller still holds it,
   * false when someone else does (it ran out and was taken over). Throwing
   * (the store or Redis is unreachable) is not a loss by itself.
   */
  renew(): Promise<boolean>;
  /** How long one renewal holds the lease. */
  ttlMs: number;
  /** Time between renewals; default a third of ttlMs, so two renewals can fail before the lease runs out. */
  everyMs?: number;
  /** Called once when the lease is lost: renew said false, or no renewal succeeded for ttlMs. */
  onLost?: () => void;
  /** Called with each renewal that threw. */
  onError?: (err: unknown) => void;
  clock?: Clock;
  timers?: HeartbeatTimers;
}

export interface Heartbeat {
  /** True once the lease is known lost; the holder should stop and must not record an outcome. */
  readonly lost: boolean;
  /** Aborted when the lease is lost, to cancel work in hand. */
  readonly signal: AbortSignal;
  /** Stops renewing (the lease then runs out by itself unless released). Waits for a renewal in flight. */
  stop(): Promise<void>;
}

/**
 * Keeps a short lease alive while its holder is alive: renews it every
 * `everyMs` until stopped. This is how every lease in the system is held
 * (ingest jobs, analytics run slots, and the generation and publishing runs):
 * the ttl stays short (seconds), so when the process dies (kill -9, OOM, a lost
 * machine) its leases run out within one ttl and another worker, in the same
 * process after a restart or in another replica, takes the work over; while the
 * holder lives, nothing expires under it however long the work takes.
 *
 * How a service uses it for its runs (generation and publishing included):
 *   1. Claim the run with a lease whose ttl is short (10-30 s), e.g.
 *      `holdLease(leases, 'generation-run:' + runId, owner, { ttlMs: 15_000 })`
 *      with a LeaseManager (store or Redis), or for leases kept on the work's
 *      own document (like ingest jobs) `startHeartbeat({ renew, ttlMs })` with a
 *      `renew` that extends `lease_expires_at` only while `lease_owner` is still
 *      this worker (one store transaction).
 *   2. Make `owner` unique per process start (host, pid and a random part), so a
 *      restarted process never mistakes its predecessor's leases for its own.
 *   3. Do the work checking `lost` (or passing `signal`) between steps; record
 *      the outcome only under a check that the lease is still held.
 *   4. `release()` (or `stop()`) in a finally block.
 *   5. A poller (each replica, and each process as it starts) takes work whose
 *      lease has run out: runs are idempotent per step, so the taker carries on
 *      from the steps recorded so far.
 */
export function startHeartbeat(options: HeartbeatOptions): Heartbeat {
  const clock = options.clock ?? systemClock;
  const timers = options.timers ?? realTimers;
  const everyMs = Math.max(1, options.everyMs ?? Math.floor(options.ttlMs / 3));
  const controller = new AbortController();
  let lastHeld = clock.now().getTime();
  let stopped = false;
  let handle: unknown;
  let inFlight: Promise<void> = Promise.resolve();

  const lose = () => {
    if (controller.signal.aborted) return;
    controller.abort(new Error('lease lost'));
    options.onLost?.();
  };

  const beat = async () => {
    try {
      if (await options.renew()) lastHeld = clock.now().getTime();
      else lose();
    } catch (err) {
      options.onError?.(err);
      if (clock.now().getTime() - lastHeld >= options.ttlMs) lose();
    }
  };

  const schedule = () => {
    if (stopped || controller.signal.aborted) return;
    handle = timers.setTimeout(() => {
      inFlight = beat().then(schedule);
    }, everyMs);
  };
  schedule();

  return {
    get lost() {
      return controller.signal.aborted;
    },
    signal: controller.signal,
    async stop() {
      stopped = true;
      if (handle !== undefined) timers.clearTimeout(handle);
      await inFlight;
    },
  };
}

export interface HeldLease extends Heartbeat {
  /** Stops the heartbeat and gives the lease up (when still held), so the next holder need not wait for it to run out. */
  release(): Promise<void>;
}

/**
 * Takes `name` for `owner` in a LeaseManager and keeps it with a heartbeat;
 * null when someone else holds it. See startHeartbeat for how to use it.
 */
export async function holdLease(
  leases: LeaseManager,
  name: string,
  owner: string,
  options: Omit<HeartbeatOptions, 'renew'>,
): Promise<HeldLease | null> {
  if (!(await leases.acquire(name, owner, options.ttlMs))) return null;
  const heartbeat = startHeartbeat({ ...options, renew: () => leases.acquire(name, owner, options.ttlMs) });
  return {
    get lost() {
      return heartbeat.lost;
    },
    signal: heartbeat.signal,
    stop: () => heartbeat.stop(),
    async release() {
      await heartbeat.stop();
      if (!heartbeat.lost) await leases.release(name, owner);
    },
  };
}
