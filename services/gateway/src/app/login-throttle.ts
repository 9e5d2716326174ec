import { createHash } from 'node:crypto';
import { AppError } from '@kb/platform';
import type { RateLimiter } from '@kb/coordination';

/**
 * Login rate limits (issue 13 item 3) on the RateLimiter port: failed logins are
 * counted per account and per address, in tiers whose windows double while the
 * allowance grows by one, so each further failure roughly doubles the wait
 * (exponential backoff), answered as 429 with Retry-After.
 *
 * No lockout usable against the real user: the per-account count is kept per
 * account AND address, so failures from an attacker's address never delay the
 * user at theirs; the account-wide count (failures from every address) is only
 * checked for addresses that have not signed in to that account before (in the
 * current ADDRESS_MEMORY period), so a distributed guesser is slowed while the
 * user's own devices still get in. A correct password is never counted.
 */
export interface LoginThrottleSettings {
  /** Failures allowed per account and address before the backoff starts. */
  perAccount: number;
  /** Failures allowed per address (any accounts) before the backoff starts. */
  perAddress: number;
  /** Failures allowed per account from addresses it never signed in from. */
  perAccountAnyAddress: number;
  /** First backoff window, seconds; each tier doubles it. */
  backoffBaseSeconds: number;
  /** Longest backoff window, seconds. */
  backoffMaxSeconds: number;
}

export const defaultLoginThrottle: LoginThrottleSettings = {
  perAccount: 5,
  perAddress: 20,
  perAccountAnyAddress: 50,
  backoffBaseSeconds: 30,
  backoffMaxSeconds: 3840,
};

/** How long a successful sign-in from an address is remembered (fixed periods). */
const ADDRESS_MEMORY_MS = 30 * 86_400_000;

export interface Tier {
  limit: number;
  windowMs: number;
}

/** Tier k allows free + k failures in base * 2^k seconds, up to the longest window. */
export function backoffTiers(free: number, baseSeconds: number, maxSeconds: number): Tier[] {
  const tiers: Tier[] = [];
  for (let k = 0, w = baseSeconds; w <= maxSeconds; k++, w *= 2) tiers.push({ limit: free + k, windowMs: w * 1000 });
  return tiers;
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex').slice(0, 32);

export interface LoginThrottle {
  /** 429 (with Retry-After) when this attempt must wait; counts nothing. */
  check(email: string, address: string): Promise<void>;
  /** Counts a failed attempt. */
  failed(email: string, address: string): Promise<void>;
  /** Remembers the address as one the account signs in from. */
  succeeded(email: string, address: string): Promise<void>;
}

export function createLoginThrottle(limiter: RateLimiter, settings: LoginThrottleSettings = defaultLoginThrottle): LoginThrottle {
  const tiersOf = (free: number) => backoffTiers(free, settings.backoffBaseSeconds, settings.backoffMaxSeconds);
  const pair = tiersOf(settings.perAccount);
  const address = tiersOf(settings.perAddress);
  const account = tiersOf(settings.perAccountAnyAddress);
  const keys = (email: string, addr: string) => {
    const acct = digest(email.trim().toLowerCase());
    const ip = digest(addr);
    return {
      pair: `login:pair:${acct}:${ip}`,
      address: `login:addr:${ip}`,
      account: `login:acct:${acct}`,
      known: `login:known:${acct}:${ip}`,
    };
  };
  const counted = (k: ReturnType<typeof keys>, knownAddress: boolean): [string, Tier[]][] => [
    [k.pair, pair],
    [k.address, address],
    ...(knownAddress ? [] : ([[k.account, account]] as [string, Tier[]][])),
  ];
  const isKnown = async (key: string) => !(await limiter.peek(key, 1, ADDRESS_MEMORY_MS)).allowed;

  return {
    async check(email, addr) {
      const k = keys(email, addr);
      const known = await isKnown(k.known);
      const decisions = await Promise.all(
        counted(k, known).flatMap(([key, tiers]) => tiers.map((t, i) => limiter.peek(`${key}:${i}`, t.limit, t.windowMs))),
      );
      const wait = Math.max(0, ...decisions.filter((d) => !d.allowed).map((d) => d.retryAfterSeconds));
      if (wait > 0)
        throw new AppError('rate_limited', `Too many failed logins; try again in ${wait} s`, {
          code: 'login_rate_limited',
          retryAfterSeconds: wait,
        });
    },
    async failed(email, addr) {
      const k = keys(email, addr);
      // Every failure counts towards the account-wide tiers too; only the check skips them for a known address.
      await Promise.all(counted(k, false).flatMap(([key, tiers]) => tiers.map((t, i) => limiter.hit(`${key}:${i}`, t.limit, t.windowMs))));
    },
    async succeeded(email, addr) {
      await limiter.hit(keys(email, addr).known, 1, ADDRESS_MEMORY_MS);
    },
  };
}
