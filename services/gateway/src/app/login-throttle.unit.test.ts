import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { isAppError } from '@kb/platform';
import { fixedWindow, type RateLimiter } from '@kb/coordination';
import { backoffTiers, createLoginThrottle, type LoginThrottleSettings } from './login-throttle.js';

/** The RateLimiter contract in memory on a controlled clock (the adapters have their own contract suite). */
function memoryLimiter(now: () => number): RateLimiter {
  const windows = new Map<string, { count: number; endsAt: number }>();
  const decide = (key: string, limit: number, windowMs: number, count: boolean) => {
    const w = fixedWindow(now(), windowMs);
    const current = windows.get(key);
    const n = current && current.endsAt === w.endsAt ? current.count : 0;
    if (n >= limit) return { allowed: false, remaining: 0, retryAfterSeconds: Math.max(1, Math.ceil((w.endsAt - now()) / 1000)) };
    if (count) windows.set(key, { count: n + 1, endsAt: w.endsAt });
    return { allowed: true, remaining: limit - n - (count ? 1 : 0), retryAfterSeconds: 0 };
  };
  return {
    hit: async (key, limit, windowMs) => decide(key, limit, windowMs, true),
    peek: async (key, limit, windowMs) => {
      const d = decide(key, limit, windowMs, false);
      return d.allowed ? { ...d, remaining: d.remaining - 1 } : d;
    },
    close: async () => {},
  };
}

const settings: LoginThrottleSettings = {
  perAccount: 3,
  perAddress: 10,
  perAccountAnyAddress: 6,
  backoffBaseSeconds: 30,
  backoffMaxSeconds: 3840,
};

async function waitOf(p: Promise<void>): Promise<number> {
  try {
    await p;
    return 0;
  } catch (err) {
    assert.ok(isAppError(err) && err.httpStatus === 429, String(err));
    return err.retryAfterSeconds!;
  }
}

function setup() {
  let t = Date.UTC(2026, 0, 1);
  const throttle = createLoginThrottle(
    memoryLimiter(() => t),
    settings,
  );
  return { throttle, advance: (seconds: number) => (t += seconds * 1000) };
}

describe('login throttle', () => {
  it('tiers double their window while the allowance grows by one', () => {
    assert.deepEqual(
      backoffTiers(5, 30, 3840).map((tier) => [tier.limit, tier.windowMs / 1000]),
      [
        [5, 30],
        [6, 60],
        [7, 120],
        [8, 240],
        [9, 480],
        [10, 960],
        [11, 1920],
        [12, 3840],
      ],
    );
  });

  it('after the free failures per account and address, the next attempt waits (429 with Retry-After)', async () => {
    const { throttle } = setup();
    for (let i = 0; i < settings.perAccount; i++) {
      assert.equal(await waitOf(throttle.check('a@example.test', '10.0.0.1')), 0);
      await throttle.failed('a@example.test', '10.0.0.1');
    }
    const wait = await waitOf(throttle.check('A@example.test ', '10.0.0.1'));
    assert.ok(wait >= 1 && wait <= 30, `wait ${wait}`);
  });

  it('waits grow exponentially while an address keeps failing', async () => {
    const { throttle, advance } = setup();
    const waits: number[] = [];
    let attempts = 0;
    while (waits.length < 6) {
      const wait = await waitOf(throttle.check('a@example.test', '10.0.0.1'));
      if (wait > 0) {
        waits.push(wait);
        advance(wait);
        continue;
      }
      attempts++;
      await throttle.failed('a@example.test', '10.0.0.1');
    }
    // Six waits in ~ (3 + 6) attempts, each window twice the one before: the late waits dwarf the first.
    assert.ok(attempts <= 3 + 6, `attempts ${attempts}`);
    assert.ok(waits.at(-1)! >= (8 * 30) / 2, `waits ${waits.join(', ')}`);
    const total = waits.reduce((a, b) => a + b, 0);
    assert.ok(total >= 900, `total wait ${total} s for ${attempts} guesses (${waits.join(', ')})`);
  });

  it('failures from an attacker’s address never hold up the real user at theirs', async () => {
    const { throttle } = setup();
    for (let i = 0; i < 20; i++) {
      await throttle.failed('victim@example.test', '203.0.113.9');
    }
    assert.ok((await waitOf(throttle.check('victim@example.test', '203.0.113.9'))) > 0, 'the attacker waits');
    // The user signed in from home before: never held up by the account-wide count.
    await throttle.succeeded('victim@example.test', '198.51.100.7');
    assert.equal(await waitOf(throttle.check('victim@example.test', '198.51.100.7')), 0);
  });

  it('failures spread over many addresses slow a new address for that account (account-wide count)', async () => {
    const { throttle } = setup();
    for (let i = 0; i < settings.perAccountAnyAddress; i++) await throttle.failed('target@example.test', `192.0.2.${i}`);
    assert.ok((await waitOf(throttle.check('target@example.test', '192.0.2.200'))) > 0, 'a new address waits');
    await throttle.succeeded('target@example.test', '198.51.100.7');
    assert.equal(await waitOf(throttle.check('target@example.test', '198.51.100.7')), 0, 'a known address does not');
    assert.equal(await waitOf(throttle.check('other@example.test', '192.0.2.200')), 0, 'another account does not');
  });

  it('failures over many accounts from one address are limited per address', async () => {
    const { throttle } = setup();
    for (let i = 0; i < settings.perAddress; i++) await throttle.failed(`user${i}@example.test`, '10.9.9.9');
    assert.ok((await waitOf(throttle.check('fresh@example.test', '10.9.9.9'))) > 0);
    assert.equal(await waitOf(throttle.check('fresh@example.test', '10.9.9.10')), 0);
  });

  it('a window that passes lets the address try again', async () => {
    const { throttle, advance } = setup();
    for (let i = 0; i < settings.perAccount; i++) await throttle.failed('a@example.test', '10.0.0.1');
    const wait = await waitOf(throttle.check('a@example.test', '10.0.0.1'));
    advance(wait);
    assert.equal(await waitOf(throttle.check('a@example.test', '10.0.0.1')), 0);
  });
});
