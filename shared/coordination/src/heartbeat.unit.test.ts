import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { fixedClock } from '@kb/platform';
import { startHeartbeat, type HeartbeatTimers } from './heartbeat.js';

/** Timers driven by hand: run() fires the pending one. */
function manualTimers() {
  let pending: (() => void) | undefined;
  const timers: HeartbeatTimers = {
    setTimeout: (fn) => {
      pending = fn;
      return 1;
    },
    clearTimeout: () => {
      pending = undefined;
    },
  };
  return {
    timers,
    async fire() {
      const fn = pending;
      pending = undefined;
      fn?.();
      await new Promise((r) => setImmediate(r));
    },
    get pending() {
      return pending !== undefined;
    },
  };
}

describe('startHeartbeat', () => {
  it('renews on every beat while the lease is held, and stops on stop()', async () => {
    const t = manualTimers();
    let renewals = 0;
    const hb = startHeartbeat({
      ttlMs: 3000,
      renew: async () => (renewals++, true),
      timers: t.timers,
      clock: fixedClock('2026-01-01T00:00:00Z'),
    });
    await t.fire();
    await t.fire();
    assert.equal(renewals, 2);
    assert.equal(hb.lost, false);
    await hb.stop();
    assert.equal(t.pending, false);
  });

  it('is lost when a renewal says someone else holds the lease', async () => {
    const t = manualTimers();
    let lost = 0;
    const hb = startHeartbeat({ ttlMs: 3000, renew: async () => false, onLost: () => lost++, timers: t.timers });
    await t.fire();
    assert.equal(hb.lost, true);
    assert.equal(hb.signal.aborted, true);
    assert.equal(lost, 1);
    assert.equal(t.pending, false, 'no more beats after the loss');
  });

  it('survives failing renewals within the ttl, and is lost once none succeeded for a whole ttl', async () => {
    const t = manualTimers();
    const clock = fixedClock('2026-01-01T00:00:00Z');
    const errors: unknown[] = [];
    const hb = startHeartbeat({
      ttlMs: 3000,
      renew: async () => {
        throw new Error('store unreachable');
      },
      onError: (e) => errors.push(e),
      timers: t.timers,
      clock,
    });
    clock.advance(1000);
    await t.fire();
    clock.advance(1000);
    await t.fire();
    assert.equal(hb.lost, false);
    clock.advance(1000);
    await t.fire();
    assert.equal(hb.lost, true);
    assert.equal(errors.length, 3);
  });
});
