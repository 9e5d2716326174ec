import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { errors, randomIds, silentLogger, systemClock } from '@kb/platform';
import { eventCatalog } from '@kb/events';
import { createCommandBus } from '@kb/eventsourcing';
import { openStore } from '@kb/runtime';
import type { Store } from '@kb/store';
import type { CallContext } from '@kb/rpc';
import { createCreditsService, type CreditsService } from '../app/credits.js';
import { gatewayProjections } from '../service.js';
import { registerMeter } from './meter.js';
import { sendError } from './errors.js';
import './route-auth.js';

/**
 * The reserve-before / settle-after mechanism behind every `config.meter` route,
 * on the real credits ledger (embedded store), with a metered route defined here.
 */
let dir: string;
let store: Store;
let credits: CreditsService;
let app: FastifyInstance;
const work: Record<string, number> = {};

const ctxOf = (org: string): CallContext => ({
  org_id: org,
  principal: { type: 'user', id: randomUUID() },
  permissions: ['manage:credits'],
  folder_scope: null,
  request_id: randomUUID(),
});

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kb-meter-'));
  store = await openStore({ DATA_DIR: dir, STORE: 'sqlite', BUS: 'sqlite' }, 'gateway', systemClock, silentLogger());
  const commands = createCommandBus({ store, catalog: eventCatalog, projections: gatewayProjections, ids: randomIds, clock: systemClock });
  credits = createCreditsService({ store, commands, ids: randomIds, clock: systemClock, costs: { ingest: 2, query: 1, generation: 5 } });

  app = Fastify();
  app.addHook('onRequest', async (req) => {
    req.caller = ctxOf(String(req.headers['x-org']));
  });
  registerMeter(app, credits);
  app.setErrorHandler((err, req, reply) => sendError(req, reply, err as Error));
  app.post<{ Body: { files?: number; fail?: 'client' | 'server' } }>(
    '/ingest',
    {
      config: {
        auth: { credential: 'any', permission: 'write:kb' },
        meter: { operation: 'ingest', units: (req) => (req.body as { files?: number }).files ?? 1 },
      },
    },
    async (req, reply) => {
      const org = req.caller!.org_id;
      work[org] = (work[org] ?? 0) + 1;
      await new Promise((r) => setTimeout(r, 2));
      if (req.body.fail === 'client') throw errors.validation('bad file');
      if (req.body.fail === 'server') throw errors.internal('boom');
      return reply.status(201).send({ ok: true });
    },
  );
  app.post('/query', { config: { auth: { credential: 'any', permission: 'read:kb' }, meter: { operation: 'query' } } }, async (req) => {
    const org = req.caller!.org_id;
    work[org] = (work[org] ?? 0) + 1;
    await new Promise((r) => setTimeout(r, 1));
    return { ok: true };
  });
  await app.ready();
});

afterAll(async () => {
  await app.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const call = (org: string, url: string, body: unknown = {}) =>
  app.inject({ method: 'POST', url, headers: { 'x-org': org, 'content-type': 'application/json' }, payload: JSON.stringify(body) });

describe('metered routes', () => {
  it('answers 402 before any work when the balance does not cover the cost', async () => {
    const org = randomUUID();
    const res = await call(org, '/ingest', { files: 1 });
    assert.equal(res.statusCode, 402);
    assert.equal(JSON.parse(res.body).error.code, 'insufficient_credits');
    assert.equal(work[org], undefined, 'the handler never ran');
    await credits.grant(ctxOf(org), 3, 'test');
    assert.equal((await call(org, '/ingest', { files: 2 })).statusCode, 402, 'cost 2 x 2 = 4 > 3');
    assert.equal(work[org], undefined);
    assert.equal((await credits.balance(ctxOf(org))).balance, 3);
  });

  it('settles a 2xx: the cost (per unit) leaves the balance and lands in the ledger', async () => {
    const org = randomUUID();
    await credits.grant(ctxOf(org), 10, 'test');
    const res = await call(org, '/ingest', { files: 3 });
    assert.equal(res.statusCode, 201);
    const balance = await credits.balance(ctxOf(org));
    assert.equal(balance.balance, 4);
    assert.equal(balance.reserved, 0);
    assert.equal(balance.spent_this_month, 6);
    const usage = await credits.usage(ctxOf(org), { limit: 10, offset: 0 });
    assert.deepEqual(
      usage.items.map((e) => [e.operation, e.amount, e.balance_after]),
      [
        ['ingest', -6, 4],
        ['grant', 10, 10],
      ],
    );
  });

  it('releases the reservation when the operation fails (4xx or 5xx)', async () => {
    const org = randomUUID();
    await credits.grant(ctxOf(org), 10, 'test');
    assert.equal((await call(org, '/ingest', { files: 1, fail: 'client' })).statusCode, 400);
    assert.equal((await call(org, '/ingest', { files: 1, fail: 'server' })).statusCode, 500);
    const balance = await credits.balance(ctxOf(org));
    assert.equal(balance.balance, 10);
    assert.equal(balance.reserved, 0);
    assert.equal(balance.spent_this_month, 0);
    assert.equal((await credits.usage(ctxOf(org), { limit: 10, offset: 0 })).total, 1, 'only the grant');
  });

  it('answers 402 when the monthly spend limit is reached, whatever the balance', async () => {
    const org = randomUUID();
    await credits.grant(ctxOf(org), 1000, 'test');
    await credits.setSpendLimit(ctxOf(org), 5);
    assert.equal((await call(org, '/ingest', { files: 2 })).statusCode, 201, '4 of 5');
    const res = await call(org, '/ingest', { files: 1 });
    assert.equal(res.statusCode, 402);
    assert.equal(JSON.parse(res.body).error.code, 'spend_limit_reached');
    assert.equal(work[org], 1);
    assert.equal((await call(org, '/query')).statusCode, 200, '5 of 5');
    assert.equal((await call(org, '/query')).statusCode, 402);
    await credits.setSpendLimit(ctxOf(org), null);
    assert.equal((await call(org, '/query')).statusCode, 200);
    assert.equal((await credits.balance(ctxOf(org))).balance, 1000 - 6);
  });

  it('never drives the balance below zero under many parallel requests', async () => {
    const org = randomUUID();
    await credits.grant(ctxOf(org), 40, 'test');
    const results = await Promise.all(Array.from({ length: 120 }, () => call(org, '/query')));
    const statuses = results.map((r) => r.statusCode);
    assert.equal(statuses.filter((s) => s === 200).length, 40);
    assert.equal(statuses.filter((s) => s === 402).length, 80);
    assert.equal(work[org], 40, 'no work for a 402');
    const balance = await credits.balance(ctxOf(org));
    assert.equal(balance.balance, 0);
    assert.equal(balance.reserved, 0);
    const usage = await credits.usage(ctxOf(org), { limit: 100, offset: 0 });
    assert.equal(usage.total, 41);
    assert.ok(usage.items.every((e) => e.balance_after >= 0));
  });

  it('keeps reservations of organizations apart', async () => {
    const rich = randomUUID();
    const poor = randomUUID();
    await credits.grant(ctxOf(rich), 5, 'test');
    const [a, b] = await Promise.all([call(rich, '/query'), call(poor, '/query')]);
    assert.equal(a.statusCode, 200);
    assert.equal(b.statusCode, 402);
    assert.equal((await credits.balance(ctxOf(rich))).balance, 4);
    assert.equal((await credits.balance(ctxOf(poor))).balance, 0);
  });
});
