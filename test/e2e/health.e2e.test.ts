import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { createRpcServer } from '@kb/rpc';
import { silentLogger } from '@kb/platform';
import { registerHealth, grpcServing } from '@kb/gateway';
import { startTestSystem, type TestSystem } from './harness.js';

/** The gateway's probes: live while it serves, ready only while every dependency answers. */
let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem();
});
afterAll(async () => t.stop());

describe('gateway health', () => {
  it('is live and ready with every dependency answering, without a credential', async () => {
    const live = await fetch(`${t.url}/health/live`);
    assert.equal(live.status, 200);
    const ready = await fetch(`${t.url}/health/ready`);
    assert.equal(ready.status, 200, await ready.clone().text());
    assert.equal(ready.headers.get('cache-control'), 'no-store');
    const body = (await ready.json()) as { status: string; checks: Record<string, string> };
    assert.equal(body.status, 'ready');
    assert.deepEqual(Object.keys(body.checks).sort(), [
      'analytics',
      'bus',
      'generation',
      'ingest',
      'knowledge_base',
      'publishing',
      'store',
    ]);
    assert.ok(Object.values(body.checks).every((c) => c === 'ok'));
  });

  it('answers 503 naming a dependency that does not answer, and 200 again once it does', async () => {
    const server = createRpcServer({ internalToken: 'health-test-internal-token', logger: silentLogger() });
    let serving = false;
    server.addHealth(async () => serving);
    const port = await server.listen('127.0.0.1', 0);
    const app = Fastify();
    registerHealth(app, {
      checks: { store: async () => undefined, slow: () => new Promise(() => undefined), service: grpcServing(`127.0.0.1:${port}`) },
      timeoutMs: 300,
    });
    try {
      const down = await app.inject({ method: 'GET', url: '/health/ready' });
      assert.equal(down.statusCode, 503);
      const body = down.json() as { status: string; checks: Record<string, string>; failing: string[] };
      assert.equal(body.status, 'not_ready');
      assert.deepEqual(body.failing.sort(), ['service', 'slow']);
      assert.equal(body.checks.store, 'ok');
      assert.match(body.checks.slow!, /no answer within 300 ms/);
      assert.equal(body.checks.service, 'NOT_SERVING');
      serving = true;
      const stillSlow = await app.inject({ method: 'GET', url: '/health/ready' });
      assert.deepEqual((stillSlow.json() as { failing: string[] }).failing, ['slow']);
    } finally {
      await app.close();
      await server.shutdown(100);
    }
  });
});
