import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import type { LeaseManager, RateLimitDecision, RateLimiter, SlidingRateLimiter } from '../port.js';

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

// Sliding log: a sorted set of hit times; hits older than the window are dropped
// first, a denied hit is not added, and the answer carries when the oldest hit leaves.
const SLIDE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local limit = tonumber(ARGV[1])
if count >= limit then
  local oldest = redis.call('ZRANGE', KEYS[1], count - limit, count - limit, 'WITHSCORES')
  return {0, count, tonumber(oldest[2]) + window - now}
end
if ARGV[3] == '' then
  return {1, count, 0}
end
redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('PEXPIRE', KEYS[1], window)
return {1, count + 1, 0}`;

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

/** Sliding logs in Redis (a sorted set per key, timed by Redis' own clock), shared by every replica. */
export function createRedisSlidingRateLimiter(options: RedisCoordinationOptions & { ids?: () => string }): SlidingRateLimiter {
  const redis = connect(options);
  const prefix = options.prefix ?? 'kb';
  const ids = options.ids ?? randomUUID;
  // An empty member id makes the script decide without recording the hit (peek).
  const decide = async (key: string, limit: number, windowMs: number, member: string): Promise<RateLimitDecision> => {
    const [allowed, count, waitMs] = (await redis.eval(
      SLIDE,
      1,
      `${prefix}:slide:${key}`,
      String(limit),
      String(Math.max(1, Math.round(windowMs))),
      member,
    )) as [number, number, number];
    if (allowed === 1) return { allowed: true, remaining: Math.max(0, limit - count - (member ? 0 : 1)), retryAfterSeconds: 0 };
    return { allowed: false, remaining: 0, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
  };
  return {
    hit: (key, limit, windowMs) => decide(key, limit, windowMs, ids()),
    peek: (key, limit, windowMs) => decide(key, limit, windowMs, ''),
    close: async () => {
      await redis.quit();
    },
  };
}
