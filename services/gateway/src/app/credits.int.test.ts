import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { fixedClock, randomIds, silentLogger } from '@kb/platform';
import { eventCatalog } from '@kb/events';
import { createCommandBus, rebuildReadModels } from '@kb/eventsourcing';
import { openStore } from '@kb/runtime';
import type { Store } from '@kb/store';
import type { CallContext } from '@kb/rpc';
import { gatewayProjections } from '../service.js';
import { CREDIT_HOLDS } from '../projections/credits.js';
import { createCreditsService, type CreditsService } from './credits.js';

/**
 * Reservations a crashed gateway never settled: the sweep gives them back after
 * their time is up, and leaves live and finished ones alone.
 */
const HOUR = 3_600_000;
let dir: string;
let store: Store;
let credits: CreditsService;
const clock = fixedClock('2026-11-23T10:00:00.000Z');

const ctxOf = (org: string): CallContext => ({
  org_id: org,
  principal: { type: 'user', id: randomUUID() },
  permissions: ['manage:credits'],
  folder_scope: null,
  request_id: randomUUID(),
});

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kb-credits-'));
  store = await openStore({ DATA_DIR: dir, STORE: 'sqlite', BUS: 'sqlite' }, 'gateway', clock, silentLogger());
  const commands = createCommandBus({ store, catalog: eventCatalog, projections: gatewayProjections, ids: randomIds, clock });
  credits = createCreditsService({ store, commands, ids: randomIds, clock, costs: { ingest: 2, query: 1, generation: 5 } });
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('abandoned reservations', () => {
  it('are released after their time is up; settled, released and recent ones are left alone', async () => {
    const ctx = ctxOf(randomUUID());
    await credits.grant(ctx, 100, 'test');
    const abandoned = await credits.reserve(ctx, 'generation', 2); // 10, never settled: its gateway "crashed"
    const settled = await credits.reserve(ctx, 'query', 1);
    const released = await credits.reserve(ctx, 'ingest', 1);
    await credits.settle(settled!);
    await credits.release(released!);
    clock.advance(2 * HOUR);
    const recent = await credits.reserve(ctx, 'query', 3); // 3, still in flight
    assert.deepEqual(
      (await credits.balance(ctx)).balance,
      100 - 10 - 1 - 3,
      'before the sweep: the abandoned and the recent reservation are held',
    );

    assert.equal(await credits.releaseAbandoned(HOUR), 1);
    const after = await credits.balance(ctx);
    assert.equal(after.balance, 100 - 1 - 3, 'the abandoned 10 are back; the settled 1 is spent; the recent 3 stay held');
    assert.equal(after.reserved, 3);
    assert.equal(await credits.releaseAbandoned(HOUR), 0, 'a second sweep finds nothing');

    // The recent one is still settled normally later, and the sweep never touched it.
    await credits.settle(recent!);
    assert.equal((await credits.balance(ctx)).reserved, 0);
    assert.deepEqual(await store.find(CREDIT_HOLDS, { where: { org_id: ctx.org_id } }), []);
    assert.equal(abandoned?.amount, 10);
  });

  it('skips a reservation settled between the scan and the release (another gateway, or the live request)', async () => {
    const ctx = ctxOf(randomUUID());
    await credits.grant(ctx, 10, 'test');
    const r = await credits.reserve(ctx, 'query', 1);
    clock.advance(2 * HOUR);
    // Settled by its request just as a sweeper looks at it: the sweeper's release finds no hold.
    const racing = credits.releaseAbandoned(HOUR);
    await credits.settle(r!).catch(() => undefined);
    await racing;
    const b = await credits.balance(ctx);
    assert.equal(b.reserved, 0);
    assert.ok(b.balance === 9 || b.balance === 10, `settled (9) or released (10), never both: ${b.balance}`);
  });

  it('the holds read model is rebuilt from the events like the rest', async () => {
    const ctx = ctxOf(randomUUID());
    await credits.grant(ctx, 10, 'test');
    await credits.reserve(ctx, 'query', 2);
    const before = await store.find(CREDIT_HOLDS, { where: { org_id: ctx.org_id } });
    assert.equal(before.length, 1);
    await rebuildReadModels(store, gatewayProjections);
    assert.deepEqual(await store.find(CREDIT_HOLDS, { where: { org_id: ctx.org_id } }), before);
  });
});

describe('the ledger', () => {
  it('chains under concurrent reservations: each entry is the one before plus its amount', async () => {
    const ctx = ctxOf(randomUUID());
    await credits.grant(ctx, 100, 'test');
    // Three requests in flight at once, settled in another order than reserved, one released, a charge among them.
    const a = (await credits.reserve(ctx, 'generation', 1))!; // 5
    const b = (await credits.reserve(ctx, 'query', 2))!; // 2
    const c = (await credits.reserve(ctx, 'ingest', 1))!; // 2
    await credits.settle(b);
    await store.transaction((tx) =>
      credits.chargeWithin(tx, { org_id: ctx.org_id, charge_id: randomUUID(), operation: 'ingest', amount: 3, reason: 'characters' }),
    );
    await credits.release(c);
    await credits.settle(a, 4);
    const { items } = await credits.usage(ctx, { limit: 10, offset: 0 });
    const ledger = items.reverse().map((e) => [e.operation, e.amount, e.balance_after]);
    assert.deepEqual(ledger, [
      ['grant', 100, 100],
      ['query', -2, 98],
      ['ingest', -3, 95],
      ['generation', -4, 91],
    ]);
    assert.equal((await credits.balance(ctx)).balance, 91, 'nothing held any more: the live balance is the last entry');
  });
});
