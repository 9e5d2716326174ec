import { systemClock, type Clock } from '@kb/platform';
import type { Store } from '@kb/store';
import { fixedWindow, liveHits, type LeaseManager, type RateLimitDecision, type RateLimiter, type SlidingRateLimiter } from '../port.js';

const LEASES = '_coordination_leases';
const LIMITS = '_coordination_rate_limits';
const SLIDING = '_coordination_sliding_limits';

interface LeaseDoc {
  id: string;
  owner: string;
  expires_at: number;
}

interface WindowDoc {
  id: string;
  count: number;
  ends_at: number;
}

/** Leases in the service's Store: one transaction decides, so replicas sharing the store agree. */
export function createStoreLeaseManager(deps: { store: Store; clock?: Clock }): LeaseManager {
  const clock = deps.clock ?? systemClock;
  return {
    acquire: (name, owner, ttlMs) =>
      deps.store.transaction(async (tx) => {
        const now = clock.now().getTime();
        const current = await tx.get<LeaseDoc>(LEASES, name);
        if (current && current.owner !== owner && current.expires_at > now) return false;
        await tx.put(LEASES, { id: name, owner, expires_at: now + ttlMs });
        return true;
      }),
    release: (name, owner) =>
      deps.store.transaction(async (tx) => {
        const current = await tx.get<LeaseDoc>(LEASES, name);
        if (!current || current.owner !== owner) return false;
        return tx.delete(LEASES, name);
      }),
    close: async () => {},
  };
}

/** Fixed-window counters in the service's Store. Expired windows are replaced on the next hit of their key. */
export function createStoreRateLimiter(deps: { store: Store; clock?: Clock }): RateLimiter {
  const clock = deps.clock ?? systemClock;
  return {
    hit: (key, limit, windowMs) =>
      deps.store.transaction(async (tx) => {
        const now = clock.now().getTime();
        const window = fixedWindow(now, windowMs);
        const current = await tx.get<WindowDoc>(LIMITS, key);
        const count = current && current.ends_at === window.endsAt ? current.count : 0;
        const retryAfterSeconds = Math.max(1, Math.ceil((window.endsAt - now) / 1000));
        if (count >= limit) return { allowed: false, remaining: 0, retryAfterSeconds };
        await tx.put(LIMITS, { id: key, count: count + 1, ends_at: window.endsAt });
        return { allowed: true, remaining: limit - count - 1, retryAfterSeconds: 0 };
      }),
    peek: async (key, limit, windowMs) => {
      const now = clock.now().getTime();
      const window = fixedWindow(now, windowMs);
      const current = await deps.store.get<WindowDoc>(LIMITS, key);
      const count = current && current.ends_at === window.endsAt ? current.count : 0;
      if (count >= limit) return { allowed: false, remaining: 0, retryAfterSeconds: Math.max(1, Math.ceil((window.endsAt - now) / 1000)) };
      return { allowed: true, remaining: limit - count - 1, retryAfterSeconds: 0 };
    },
    close: async () => {},
  };
}

interface SlidingDoc {
  id: string;
  hits: number[];
}

/** A sliding log of hit times per key in the service's Store; one transaction decides. */
export function createStoreSlidingRateLimiter(deps: { store: Store; clock?: Clock }): SlidingRateLimiter {
  const clock = deps.clock ?? systemClock;
  const denied = (hits: number[], limit: number, windowMs: number, now: number): RateLimitDecision => {
    const oldest = hits[hits.length - limit]!;
    return { allowed: false, remaining: 0, retryAfterSeconds: Math.max(1, Math.ceil((oldest + windowMs - now) / 1000)) };
  };
  return {
    hit: (key, limit, windowMs) =>
      deps.store.transaction(async (tx) => {
        const now = clock.now().getTime();
        const hits = liveHits((await tx.get<SlidingDoc>(SLIDING, key))?.hits ?? [], now, windowMs);
        if (hits.length >= limit) return denied(hits, limit, windowMs, now);
        hits.push(now);
        await tx.put(SLIDING, { id: key, hits });
        return { allowed: true, remaining: limit - hits.length, retryAfterSeconds: 0 };
      }),
    peek: async (key, limit, windowMs) => {
      const now = clock.now().getTime();
      const hits = liveHits((await deps.store.get<SlidingDoc>(SLIDING, key))?.hits ?? [], now, windowMs);
      if (hits.length >= limit) return denied(hits, limit, windowMs, now);
      return { allowed: true, remaining: limit - hits.length - 1, retryAfterSeconds: 0 };
    },
    close: async () => {},
  };
}
