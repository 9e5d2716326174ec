import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { backoffMs, callApi, isTransientStatus, retryAfterMs, type RetryPolicy } from './cli-http.js';

const policy: RetryPolicy = { attempts: 4, baseDelayMs: 100, maxDelayMs: 1_000 };

/** A fetch that answers from a script, one entry per call: a status (with headers) or a thrown error. */
function scripted(script: ({ status: number; headers?: Record<string, string>; body?: string } | Error)[]) {
  const calls: { url: string; body: unknown }[] = [];
  const fake = (async (url: string, init: RequestInit) => {
    calls.push({ url, body: init.body });
    const next = script[calls.length - 1];
    assert.ok(next, `call ${calls.length} was not expected`);
    if (next instanceof Error) throw next;
    return new Response(next.body ?? '{}', { status: next.status, headers: next.headers ?? {} });
  }) as unknown as typeof fetch;
  return { fake, calls };
}

describe('callApi', () => {
  it('retries connection errors, 429 and 503, honouring Retry-After, and rebuilds the body each time', async () => {
    const refused = Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
    const { fake, calls } = scripted([
      refused,
      { status: 429, headers: { 'retry-after': '2' } },
      { status: 503 },
      { status: 202, body: '{"id":"x"}' },
    ]);
    const waits: number[] = [];
    const reasons: string[] = [];
    let built = 0;
    const res = await callApi(
      'http://kb/api',
      { method: 'POST', headers: {}, body: () => `body ${++built}` },
      { policy, fetch: fake, sleep: async (ms) => void waits.push(ms), onRetry: (r) => reasons.push(r.reason) },
    );
    assert.deepEqual([res.status, res.json, res.attempts], [202, { id: 'x' }, 4]);
    assert.deepEqual(reasons, ['ECONNREFUSED', 'HTTP 429', 'HTTP 503']);
    assert.deepEqual(
      calls.map((c) => c.body),
      ['body 1', 'body 2', 'body 3', 'body 4'],
    );
    assert.ok(waits[0]! <= 100, `first backoff within the base delay: ${waits[0]}`);
    assert.ok(waits[1]! >= 2_000, `Retry-After: 2 is honoured: ${waits[1]}`);
    assert.ok(waits[2]! <= 400, `third backoff within 4 x base: ${waits[2]}`);
  });

  it('answers a lasting transient status after the last attempt, and never retries a 4xx', async () => {
    const busy = scripted(Array.from({ length: 4 }, () => ({ status: 503 })));
    const res = await callApi('http://kb/api', { method: 'GET', headers: {} }, { policy, fetch: busy.fake, sleep: async () => {} });
    assert.deepEqual([res.status, res.attempts, busy.calls.length], [503, 4, 4]);

    const refused = scripted([{ status: 422, body: '{"error":{"code":"duplicate"}}' }]);
    const dup = await callApi('http://kb/api', { method: 'GET', headers: {} }, { policy, fetch: refused.fake, sleep: async () => {} });
    assert.deepEqual([dup.status, dup.attempts], [422, 1]);
  });

  it('rethrows a connection error that outlasts every attempt', async () => {
    const down = scripted(Array.from({ length: 4 }, () => new TypeError('fetch failed')));
    await assert.rejects(
      callApi('http://kb/api', { method: 'GET', headers: {} }, { policy, fetch: down.fake, sleep: async () => {} }),
      /fetch failed/,
    );
    assert.equal(down.calls.length, 4);
  });
});

describe('backoff', () => {
  it('grows exponentially with full jitter up to the cap, and never undercuts Retry-After', () => {
    assert.equal(
      backoffMs(1, policy, undefined, () => 1),
      100,
    );
    assert.equal(
      backoffMs(3, policy, undefined, () => 1),
      400,
    );
    assert.equal(
      backoffMs(10, policy, undefined, () => 1),
      1_000,
    );
    assert.equal(
      backoffMs(3, policy, undefined, () => 0),
      0,
    );
    assert.equal(
      backoffMs(1, policy, 5_000, () => 0.5),
      5_000,
    );
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    assert.equal(retryAfterMs('3'), 3_000);
    assert.equal(retryAfterMs(new Date(10_000).toUTCString(), 4_000), 6_000);
    assert.equal(retryAfterMs('soon'), undefined);
    assert.equal(retryAfterMs(null), undefined);
  });

  it('treats 429 and 5xx but 501 as transient', () => {
    assert.deepEqual([400, 401, 402, 404, 422, 429, 500, 501, 502, 503, 504].filter(isTransientStatus), [429, 500, 502, 503, 504]);
  });
});
