import { Redis } from 'ioredis';
import type { LeaseManager, RateLimiter } from '../port.js';

// Take the lease when free, renew it when ours: one atomic step.
const ACQUIRE = `
local current = redis.call('GET', KEYS[1])
if current == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if current then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`;

// Compare and delete: only the holder releases.
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

// Fixed window: the key lives as long as its window; denied hits are not counted.
const HIT = `
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count >= tonumber(ARGV[1]) then return {0, count, redis.call('PTTL', KEYS[1])} end
count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return {1, count, redis.call('PTTL', KEYS[1])}`;

export interface RedisCoordinationOptions {
  url: string;
  /** Prefix of every key (one per service or deployment). */
  prefix?: string;
}

function connect(options: RedisCoordinationOptions): Redis {
  return new Redis(options.url, { lazyConnect: false, maxRetriesPerRequest: 3, enableOfflineQueue: true });
}

/** Leases in Redis: SET NX PX to take, PEXPIRE to renew, compare-and-delete to release. */
export function createRedisLeaseManager(options: RedisCoordinationOptions): LeaseManager {
  const redis = connect(options);
  const prefix = options.prefix ?? 'kb';
  const key = (name: string) => `${prefix}:lease:${name}`;
  return {
    acquire: async (name, owner, ttlMs) => (await redis.eval(ACQUIRE, 1, key(name), owner, String(Math.max(1, Math.round(ttlMs))))) === 1,
    release: async (name, owner) => (await redis.eval(RELEASE, 1, key(name), owner)) === 1,
    close: async () => {
      await redis.quit();
    },
  };
}

/**
 * Fixed windows in Redis, aligned to the window length from the epoch by
 * Redis' own clock (TIME), so every replica counts into the same window.
 */
export function createRedisRateLimiter(options: RedisCoordinationOptions): RateLimiter {
  const redis = connect(options);
  const prefix = options.prefix ?? 'kb';
  return {
    async hit(key, limit, windowMs) {
      const [seconds, micros] = await redis.time();
      const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
      const index = Math.floor(now / windowMs);
      const ttl = (index + 1) * windowMs - now;
      const [allowed, count, pttl] = (await redis.eval(HIT, 1, `${prefix}:rate:${key}:${index}`, String(limit), String(ttl))) as [
        number,
        number,
        number,
      ];
      if (allowed === 1) return { allowed: true, remaining: Math.max(0, limit - count), retryAfterSeconds: 0 };
      return { allowed: false, remaining: 0, retryAfterSeconds: Math.max(1, Math.ceil((pttl > 0 ? pttl : ttl) / 1000)) };
    },
    async peek(key, limit, windowMs) {
      const [seconds, micros] = await redis.time();
      const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
      const index = Math.floor(now / windowMs);
      const ttl = (index + 1) * windowMs - now;
      const name = `${prefix}:rate:${key}:${index}`;
      const [count, pttl] = await Promise.all([redis.get(name), redis.pttl(name)]);
      const n = Number(count ?? '0');
      if (n < limit) return { allowed: true, remaining: limit - n - 1, retryAfterSeconds: 0 };
      return { allowed: false, remaining: 0, retryAfterSeconds: Math.max(1, Math.ceil((pttl > 0 ? pttl : ttl) / 1000)) };
    },
    close: async () => {
      await redis.quit();
    },
  };
}
