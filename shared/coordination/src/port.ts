/**
 * Coordination ports shared by replicas of a service: time-bound leases (one
 * holder at a time: schedulers, per-slot claims) and rate limits per key. The
 * embedded adapters keep their state in the service's Store; the distributed
 * ones in Redis, so the state holds across replicas and processes.
 */
export interface LeaseManager {
  /**
   * Takes the lease, or renews it when `owner` already holds it. True when
   * `owner` holds it for the next ttlMs; false when someone else does.
   */
  acquire(name: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Gives the lease up if `owner` holds it (compare and delete). */
  release(name: string, owner: string): Promise<boolean>;
  close(): Promise<void>;
}

export interface RateLimitDecision {
  allowed: boolean;
  /** Hits left in the current window after this one. */
  remaining: number;
  /** Seconds until the window resets (0 when allowed), for a Retry-After header. */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  /**
   * Counts one hit for `key` in a fixed window of windowMs and decides whether
   * it is within `limit`. Denied hits are not counted.
   */
  hit(key: string, limit: number, windowMs: number): Promise<RateLimitDecision>;
  /**
   * Decides as hit would, without counting: whether one more hit of `key` would
   * be allowed now (for checks before an outcome is known, like a login that
   * counts only failures).
   */
  peek(key: string, limit: number, windowMs: number): Promise<RateLimitDecision>;
  close(): Promise<void>;
}

/**
 * The sliding-window variant of the RateLimiter port (same interface): `hit`
 * allows at most `limit` hits in ANY span of windowMs, not per aligned window,
 * so no burst of 2 x limit straddles a boundary. Retry-after is when the oldest
 * counted hit leaves the window. Adapters: createStoreSlidingRateLimiter,
 * createRedisSlidingRateLimiter.
 */
export type SlidingRateLimiter = RateLimiter;

/** The hits of a sliding log still inside the window ending now, oldest first. */
export function liveHits(hits: readonly number[], nowMs: number, windowMs: number): number[] {
  return hits.filter((at) => at > nowMs - windowMs).sort((a, b) => a - b);
}

/** The fixed window a moment falls in: its index and end (ms since the epoch). */
export function fixedWindow(nowMs: number, windowMs: number): { index: number; endsAt: number } {
  const index = Math.floor(nowMs / windowMs);
  return { index, endsAt: (index + 1) * windowMs };
}
