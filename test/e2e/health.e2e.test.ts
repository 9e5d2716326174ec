import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { checkHealth, checkHealthWithReason, createRpcServer } from '@kb/rpc';
import { silentLogger, type AppError } from '@kb/platform';
import { registerHealth, grpcServing } from '@kb/gateway';
import { startTestSystem, type TestSystem } from './harness.js';
import { rawHttp } from './oauth-fixtures.js';

/** The gateway's probes: live while it serves, ready only while every dependency answers. */
let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem();
});
afterAll(async () => t.stop());

describe('gateway health', () => {
  it('an x-internal-token of the secret’s length in characters but not in bytes is a wrong token, not a 500', async () => {
    const token = 'health-test-internal-token';
    const app = Fastify();
    registerHealth(app, { checks: { store: async () => undefined }, internalToken: token });
    const multibyte = await app.inject({ method: 'GET', url: '/health/ready', headers: { 'x-internal-token': 'é'.repeat(token.length) } });
    assert.equal(multibyte.statusCode, 200, multibyte.body);
    assert.equal(multibyte.json().checks.store, 'ok');
    const right = await app.inject({ method: 'GET', url: '/health/ready', headers: { 'x-internal-token': token } });
    assert.equal(right.statusCode, 200);
    await app.close();

    const system = await rawHttp(`${t.url}/health/ready`, { headers: { 'x-internal-token': 'é'.repeat(48) } });
    assert.equal(system.status, 200, system.text);
  });

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
      'events',
      'generation',
      'ingest',
      'knowledge_base',
      'publishing',
      'store',
    ]);
    assert.ok(Object.values(body.checks).every((c) => c === 'ok'));
  });

  it('answers 503 naming a dependency that does not answer, and 200 again once it does; reasons only for the internal token', async () => {
    const token = 'health-test-internal-token';
    const server = createRpcServer({ internalToken: token, logger: silentLogger() });
    let serving = false;
    server.addHealth(async () => serving);
    const port = await server.listen('127.0.0.1', 0);
    const app = Fastify();
    registerHealth(app, {
      checks: { store: async () => undefined, slow: () => new Promise(() => undefined), service: grpcServing(`127.0.0.1:${port}`, token) },
      timeoutMs: 300,
      internalToken: token,
    });
    try {
      const down = await app.inject({ method: 'GET', url: '/health/ready' });
      assert.equal(down.statusCode, 503);
      const body = down.json() as { status: string; checks: Record<string, string>; failing: string[] };
      assert.equal(body.status, 'not_ready');
      assert.deepEqual(body.failing.sort(), ['service', 'slow']);
      // An anonymous caller learns which check failed, not why (no addresses, no gRPC errors).
      assert.deepEqual(body.checks, { store: 'ok', slow: 'failing', service: 'failing' });
      assert.doesNotMatch(down.body, /127\.0\.0\.1|NOT_SERVING|ms/);
      const detailed = await app.inject({ method: 'GET', url: '/health/ready', headers: { 'x-internal-token': token } });
      const reasons = (detailed.json() as { checks: Record<string, string> }).checks;
      assert.match(reasons.slow!, /no answer within 300 ms/);
      assert.equal(reasons.service, 'NOT_SERVING');
      const wrong = await app.inject({ method: 'GET', url: '/health/ready', headers: { 'x-internal-token': 'x'.repeat(token.length) } });
      assert.equal((wrong.json() as { checks: Record<string, string> }).checks.service, 'failing');
      serving = true;
      const stillSlow = await app.inject({ method: 'GET', url: '/health/ready' });
      assert.deepEqual((stillSlow.json() as { failing: string[] }).failing, ['slow']);
    } finally {
      await app.close();
      await server.shutdown(100);
    }
  });

  it("a service that is not ready says why to the internal caller only: the gateway's readiness shows its failing checks", async () => {
    const token = 'health-test-internal-token';
    const server = createRpcServer({ internalToken: token, logger: silentLogger() });
    const stuck = 'outbox relay of ingest cannot advance: 54 events (5.4 MB) behind; the oldest unpublished for 95 s';
    server.addHealth(async () => ({ ready: false, checks: { store: 'ok', events: stuck } }));
    const port = await server.listen('127.0.0.1', 0);
    const app = Fastify();
    registerHealth(app, { checks: { ingest: grpcServing(`127.0.0.1:${port}`, token) }, internalToken: token });
    try {
      const detailed = await app.inject({ method: 'GET', url: '/health/ready', headers: { 'x-internal-token': token } });
      assert.equal(detailed.statusCode, 503);
      assert.equal((detailed.json() as { checks: Record<string, string> }).checks.ingest, `NOT_SERVING (events: ${stuck})`);
      const anonymous = await app.inject({ method: 'GET', url: '/health/ready' });
      assert.deepEqual((anonymous.json() as { checks: Record<string, string> }).checks, { ingest: 'failing' });
      // A probe without the token gets the status alone.
      assert.deepEqual(await checkHealthWithReason(`127.0.0.1:${port}`, 1000), { status: 'NOT_SERVING' });
    } finally {
      await app.close();
      await server.shutdown(100);
    }
  });

  it('a service whose own check hangs answers NOT_SERVING within the deadline, not DEADLINE_EXCEEDED', async () => {
    const token = 'health-test-internal-token';
    const server = createRpcServer({ internalToken: token, logger: silentLogger() });
    // Its bus does not answer: its checks give up within the budget the caller's deadline leaves (as checkDependencies does).
    server.addHealth((budgetMs) => new Promise((resolve) => setTimeout(() => resolve(false), budgetMs)));
    const port = await server.listen('127.0.0.1', 0);
    try {
      const check = grpcServing(`127.0.0.1:${port}`, token, 1000);
      await assert.rejects(check(), (err: Error) => err.message === 'NOT_SERVING');
      assert.equal(await checkHealth(`127.0.0.1:${port}`, 1000), 'NOT_SERVING');
    } finally {
      await server.shutdown(100);
    }
  });

  it("a service that refuses the gateway's internal token fails its check with internal_auth_misconfigured", async () => {
    const server = createRpcServer({ internalToken: 'the-services-internal-token', logger: silentLogger() });
    server.addHealth(async () => true);
    const port = await server.listen('127.0.0.1', 0);
    try {
      // A probe sends no token and gets the plain answer; the gateway sends its own and learns it is refused.
      assert.equal(await checkHealth(`127.0.0.1:${port}`, 1000), 'SERVING');
      await assert.rejects(grpcServing(`127.0.0.1:${port}`, 'another-internal-token-value')(), (err: AppError) => {
        assert.equal(err.code, 'internal_auth_misconfigured');
        assert.match(err.message, /INTERNAL_TOKEN/);
        return true;
      });
    } finally {
      await server.shutdown(100);
    }
  });
});
