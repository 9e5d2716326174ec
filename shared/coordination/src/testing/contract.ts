import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import type { LeaseManager, RateLimiter } from '../port.js';
import { holdLease } from '../heartbeat.js';

export interface CoordinationUnderTest {
  leases: LeaseManager;
  limiter: RateLimiter;
  /** The sliding-window variant of the same port. */
  sliding: RateLimiter;
  cleanup(): Promise<void>;
}

/** What a factory returns when its backend is not available here. */
export interface Skipped {
  skip: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let unique = 0;
const name = (what: string) => `${what}-${process.pid}-${Date.now()}-${unique++}`;

/** ONE contract for every LeaseManager and RateLimiter adapter. */
export function describeCoordinationContract(label: string, factory: () => Promise<CoordinationUnderTest | Skipped>): void {
  describe(`coordination contract: ${label}`, () => {
    let sut: CoordinationUnderTest | undefined;
    let skipped: string | undefined;
    beforeAll(async () => {
      const made = await factory();
      if ('skip' in made) skipped = made.skip;
      else sut = made;
    });
    afterAll(async () => sut?.cleanup());
    const test = (title: string, fn: (s: CoordinationUnderTest) => Promise<void>) =>
      it(title, async (t) => {
        if (skipped) return t.skip(skipped);
        await fn(sut!);
      });

    describe('leases', () => {
      test('one holder at a time; the holder renews', async ({ leases }) => {
        const lease = name('lease');
        assert.equal(await leases.acquire(lease, 'a', 10_000), true);
        assert.equal(await leases.acquire(lease, 'b', 10_000), false);
        assert.equal(await leases.acquire(lease, 'a', 10_000), true);
      });
      test('only the holder releases; then another can take it', async ({ leases }) => {
        const lease = name('lease');
        assert.equal(await leases.acquire(lease, 'a', 10_000), true);
        assert.equal(await leases.release(lease, 'b'), false);
        assert.equal(await leases.acquire(lease, 'b', 10_000), false);
        assert.equal(await leases.release(lease, 'a'), true);
        assert.equal(await leases.release(lease, 'a'), false);
        assert.equal(await leases.acquire(lease, 'b', 10_000), true);
      });
      test('an expired lease can be taken by another owner', async ({ leases }) => {
        const lease = name('lease');
        assert.equal(await leases.acquire(lease, 'a', 100), true);
        await sleep(250);
        assert.equal(await leases.acquire(lease, 'b', 10_000), true);
        assert.equal(await leases.acquire(lease, 'a', 10_000), false);
      });
      test('of many concurrent contenders exactly one wins', async ({ leases }) => {
        const lease = name('lease');
        const won = await Promise.all(Array.from({ length: 12 }, (_, i) => leases.acquire(lease, `owner-${i}`, 10_000)));
        assert.equal(won.filter(Boolean).length, 1);
      });
    });

    describe('heartbeat leases', () => {
      test('a held lease outlives its ttl while the heartbeat runs', async ({ leases }) => {
        const lease = name('held');
        const held = await holdLease(leases, lease, 'a', { ttlMs: 300, everyMs: 60 });
        assert.ok(held);
        await sleep(900);
        assert.equal(held.lost, false);
        assert.equal(await leases.acquire(lease, 'b', 10_000), false);
        await held.release();
        assert.equal(await leases.acquire(lease, 'b', 10_000), true);
      });
      test('when the holder dies (heartbeat stops, no release) another takes it within one ttl', async ({ leases }) => {
        const lease = name('held');
        const held = await holdLease(leases, lease, 'a', { ttlMs: 300, everyMs: 60 });
        assert.ok(held);
        assert.equal(await holdLease(leases, lease, 'b', { ttlMs: 300 }), null);
        await held.stop();
        await sleep(400);
        const taker = await holdLease(leases, lease, 'b', { ttlMs: 300, everyMs: 60 });
        assert.ok(taker, 'taken over after the ttl');
        await taker.release();
      });
      test('a holder whose lease was taken over learns it has lost it', async ({ leases }) => {
        const lease = name('held');
        let lostCalls = 0;
        // A renewal period longer than the ttl: the lease runs out between beats and another owner takes it.
        const held = await holdLease(leases, lease, 'a', { ttlMs: 100, everyMs: 300, onLost: () => lostCalls++ });
        assert.ok(held);
        await sleep(150);
        assert.equal(await leases.acquire(lease, 'b', 10_000), true);
        await sleep(300);
        assert.equal(held.lost, true);
        assert.equal(held.signal.aborted, true);
        assert.equal(lostCalls, 1);
        await held.release();
        assert.equal(await leases.acquire(lease, 'a', 10_000), false, 'the loser does not release the new holder');
      });
    });

    describe('rate limiter', () => {
      test('allows limit hits per window, then denies with a retry-after', async ({ limiter }) => {
        const key = name('key');
        const decisions = [];
        for (let i = 0; i < 4; i++) decisions.push(await limiter.hit(key, 3, 60_000));
        assert.deepEqual(
          decisions.map((d) => [d.allowed, d.remaining]),
          [
            [true, 2],
            [true, 1],
            [true, 0],
            [false, 0],
          ],
        );
        assert.equal(decisions[0]!.retryAfterSeconds, 0);
        assert.ok(
          decisions[3]!.retryAfterSeconds >= 1 && decisions[3]!.retryAfterSeconds <= 60,
          `retry after ${decisions[3]!.retryAfterSeconds}`,
        );
      });
      test('keys are counted apart', async ({ limiter }) => {
        const a = name('key');
        const b = name('key');
        assert.equal((await limiter.hit(a, 1, 60_000)).allowed, true);
        assert.equal((await limiter.hit(a, 1, 60_000)).allowed, false);
        assert.equal((await limiter.hit(b, 1, 60_000)).allowed, true);
      });
      test('a new window allows again', async ({ limiter }) => {
        const key = name('key');
        // Start right after a window boundary so both hits share one window.
        await sleep(400 - (Date.now() % 400) + 5);
        assert.equal((await limiter.hit(key, 1, 400)).allowed, true);
        assert.equal((await limiter.hit(key, 1, 400)).allowed, false);
        await sleep(450);
        assert.equal((await limiter.hit(key, 1, 400)).allowed, true);
      });
      test('peek decides as a hit would, without counting', async ({ limiter }) => {
        const key = name('key');
        assert.deepEqual(await limiter.peek(key, 2, 60_000), { allowed: true, remaining: 1, retryAfterSeconds: 0 });
        assert.deepEqual(await limiter.peek(key, 2, 60_000), { allowed: true, remaining: 1, retryAfterSeconds: 0 });
        await limiter.hit(key, 2, 60_000);
        assert.equal((await limiter.peek(key, 2, 60_000)).remaining, 0);
        await limiter.hit(key, 2, 60_000);
        const denied = await limiter.peek(key, 2, 60_000);
        assert.equal(denied.allowed, false);
        assert.ok(denied.retryAfterSeconds >= 1 && denied.retryAfterSeconds <= 60, `retry after ${denied.retryAfterSeconds}`);
        assert.equal((await limiter.hit(key, 2, 60_000)).allowed, false);
      });
      test('concurrent hits never exceed the limit', async ({ limiter }) => {
        const key = name('key');
        const decisions = await Promise.all(Array.from({ length: 20 }, () => limiter.hit(key, 5, 60_000)));
        assert.equal(decisions.filter((d) => d.allowed).length, 5);
      });
    });

    describe('sliding-window rate limiter', () => {
      test('allows limit hits, then denies with a retry-after; keys apart', async ({ sliding }) => {
        const key = name('key');
        const decisions = [];
        for (let i = 0; i < 4; i++) decisions.push(await sliding.hit(key, 3, 60_000));
        assert.deepEqual(
          decisions.map((d) => [d.allowed, d.remaining]),
          [
            [true, 2],
            [true, 1],
            [true, 0],
            [false, 0],
          ],
        );
        assert.equal(decisions[0]!.retryAfterSeconds, 0);
        assert.ok(
          decisions[3]!.retryAfterSeconds >= 59 && decisions[3]!.retryAfterSeconds <= 60,
          `retry after ${decisions[3]!.retryAfterSeconds}`,
        );
        assert.equal((await sliding.hit(name('key'), 3, 60_000)).allowed, true);
      });
      test('never allows more than limit in any span of the window, across boundaries', async ({ sliding }) => {
        const key = name('key');
        // Hits straddling an aligned boundary: a fixed window would allow 2 x limit here.
        await sleep(600 - (Date.now() % 600) + 450);
        assert.equal((await sliding.hit(key, 2, 600)).allowed, true);
        assert.equal((await sliding.hit(key, 2, 600)).allowed, true);
        await sleep(200);
        assert.equal((await sliding.hit(key, 2, 600)).allowed, false, 'still inside 600 ms of the first two');
        await sleep(500);
        assert.equal((await sliding.hit(key, 2, 600)).allowed, true, 'the first hits have left the window');
      });
      test('peek decides as a hit would, without counting', async ({ sliding }) => {
        const key = name('peek');
        assert.deepEqual(await sliding.peek(key, 2, 60_000), { allowed: true, remaining: 1, retryAfterSeconds: 0 });
        assert.deepEqual(await sliding.peek(key, 2, 60_000), { allowed: true, remaining: 1, retryAfterSeconds: 0 });
        await sliding.hit(key, 2, 60_000);
        assert.equal((await sliding.peek(key, 2, 60_000)).remaining, 0);
        await sliding.hit(key, 2, 60_000);
        const denied = await sliding.peek(key, 2, 60_000);
        assert.equal(denied.allowed, false);
        assert.ok(denied.retryAfterSeconds >= 1);
        assert.equal((await sliding.hit(key, 2, 60_000)).allowed, false, 'peeks left the count at the limit');
      });
      test('denied hits are not counted; concurrent hits never exceed the limit', async ({ sliding }) => {
        const key = name('key');
        const decisions = await Promise.all(Array.from({ length: 20 }, () => sliding.hit(key, 5, 60_000)));
        assert.equal(decisions.filter((d) => d.allowed).length, 5);
        const other = name('key');
        assert.equal((await sliding.hit(other, 1, 500)).allowed, true);
        for (let i = 0; i < 5; i++) assert.equal((await sliding.hit(other, 1, 500)).allowed, false);
        await sleep(550);
        assert.equal((await sliding.hit(other, 1, 500)).allowed, true, 'denials did not extend the wait');
      });
    });
  });
}
