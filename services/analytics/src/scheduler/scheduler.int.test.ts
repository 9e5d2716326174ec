import { afterAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { fixedClock, randomIds, silentLogger } from '@kb/platform';
import { eventCatalog } from '@kb/events';
import { createCommandBus } from '@kb/eventsourcing';
import { createSqliteStore } from '@kb/store/sqlite';
import type { LeaseManager } from '@kb/coordination';
import { createStoreLeaseManager } from '@kb/coordination/store';
import { createRedisLeaseManager } from '@kb/coordination/redis';
import { startTestRedis } from '@kb/coordination/testing';
import type { CallContext } from '@kb/rpc';
import { createAnswersService } from '../app/answers.js';
import { createSettingsService } from '../app/settings.js';
import type { AnswerEngine } from '../engines/port.js';
import { analyticsProjections } from '../projections/index.js';
import { ORGANIZATIONS, PROMPTS, PROMPT_RUNS, derivedUuid, type PromptRunDoc } from '../projections/collections.js';
import { promptRunDecider, promptRunStream } from '../domain/aggregates.js';
import { createScheduler, RUNS_SWITCHED_OFF } from './scheduler.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** An engine that counts what it is asked and answers after a short delay (so replicas overlap). */
function countingEngine() {
  const asked: string[] = [];
  const engine: AnswerEngine = {
    async ask({ model, prompt, location }) {
      asked.push(`${prompt}|${model}|${location}`);
      await new Promise((r) => setTimeout(r, 5));
      if (model === 'flaky') throw new Error('engine timed out');
      return { text: `Acme answers ${prompt}`, citations: ['https://acme.com/a'] };
    },
  };
  return { engine, asked };
}

async function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'kb-scheduler-'));
  dirs.push(dir);
  const store = createSqliteStore({ path: join(dir, 'analytics.db') });
  const clock = fixedClock(new Date('2026-03-05T13:47:00Z'));
  const commands = createCommandBus({ store, catalog: eventCatalog, projections: analyticsProjections, ids: randomIds, clock });
  const ctx: CallContext = {
    org_id: randomUUID(),
    principal: { type: 'system', id: 't' },
    permissions: [],
    folder_scope: null,
    request_id: 'r',
  };
  const tag = randomUUID();
  const promptIds: Record<string, string> = {};
  await store.transaction(async (tx) => {
    for (const [name, tags] of [
      ['one', [tag]],
      ['two', [tag]],
      ['three', []],
    ] as const) {
      promptIds[name] = randomUUID();
      await tx.put(PROMPTS, { id: promptIds[name], org_id: ctx.org_id, name, text: `question ${name}`, tags: [...tags], deleted: false });
    }
  });
  const deps = { store, commands, ids: randomIds, clock };
  await createSettingsService(deps).setRunConfiguration(ctx, {
    enabled: true,
    models: ['m1', 'flaky'],
    locations: ['us'],
    cadence: 'hourly',
    tag_ids: [tag],
  });
  const answers = createAnswersService(deps);
  const replica = (owner: string, leases: LeaseManager, engine: AnswerEngine, claimTtlMs?: number) =>
    createScheduler({
      store,
      commands,
      answers,
      leases,
      engine,
      clock,
      logger: silentLogger(),
      owner,
      tickMs: 60_000,
      ...(claimTtlMs !== undefined && { claimTtlMs }),
    });
  return { store, commands, ctx, promptIds, replica, leases: createStoreLeaseManager({ store, clock }) };
}

async function assertOncePerSlot(leasesFor: (s: Awaited<ReturnType<typeof setup>>) => [LeaseManager, LeaseManager]) {
  const s = await setup();
  const { engine, asked } = countingEngine();
  const [la, lb] = leasesFor(s);
  const a = s.replica('replica-a', la, engine);
  const b = s.replica('replica-b', lb, engine);
  await Promise.all([a.tick(), b.tick(), a.tick(), b.tick()]);
  // Two tagged prompts x two models x one location, each asked exactly once.
  assert.equal(asked.length, 4, asked.join(', '));
  assert.equal(new Set(asked).size, 4);
  const runs = await s.store.find<PromptRunDoc>(PROMPT_RUNS, { where: { org_id: s.ctx.org_id } });
  assert.equal(runs.length, 1);
  const run = runs[0]!;
  assert.equal(run.slot, '2026-03-05T13:00:00.000Z');
  assert.deepEqual([run.status, run.planned, run.collected, run.failed], ['completed', 4, 2, 2]);
  assert.deepEqual(run.engines.m1, { collected: 2, failed: 0, last_error: null });
  assert.deepEqual(run.engines.flaky, { collected: 0, failed: 2, last_error: 'engine timed out' });
  // A later tick in the same slot does nothing.
  await a.tick();
  assert.equal(asked.length, 4);
  await s.store.close();
}

describe('scheduler', () => {
  it('two replicas sharing the store run each prompt x model x location once per slot, with progress per engine', async () => {
    await assertOncePerSlot((s) => [s.leases, s.leases]);
  });

  it('the same with the claims in Redis', async (t) => {
    const redis = await startTestRedis();
    if ('skip' in redis) return t.skip(redis.skip);
    const a = createRedisLeaseManager({ url: redis.url, prefix: randomUUID() });
    const prefix = randomUUID();
    const la = createRedisLeaseManager({ url: redis.url, prefix });
    const lb = createRedisLeaseManager({ url: redis.url, prefix });
    try {
      await assertOncePerSlot(() => [la, lb]);
    } finally {
      await Promise.all([a.close(), la.close(), lb.close()]);
      await redis.stop();
    }
  });

  it('a run whose engine calls outlast its short claim keeps the claim (heartbeat); a dead holder loses it within the ttl', async () => {
    const s = await setup();
    // Leases on real time: the claim's 200 ms ttl runs out unless renewed.
    const leases = createStoreLeaseManager({ store: s.store });
    const asked: string[] = [];
    const slow: AnswerEngine = {
      async ask({ model, prompt }) {
        asked.push(`a:${prompt}|${model}`);
        await new Promise((r) => setTimeout(r, 500));
        return { text: 'Acme', citations: [] };
      },
    };
    const { engine, asked: askedByB } = countingEngine();
    const aTick = s.replica('a', leases, slow, 200).tick();
    await new Promise((r) => setTimeout(r, 700));
    await s.replica('b', leases, engine, 200).tick();
    assert.deepEqual(askedByB, [], 'b found the run claimed while a was alive');
    await aTick;
    assert.equal(asked.length, 4);
    // A holder that died: its claim (not renewed) is free again after the ttl.
    assert.equal(await leases.acquire('prompt-run:dead', 'dead-replica', 200), true);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await leases.acquire('prompt-run:dead', 'successor', 200), true);
    await s.store.close();
  });

  it('a replica that claims the run only after another finished it asks nothing again (not even failed items)', async () => {
    const s = await setup();
    const { engine, asked } = countingEngine();
    let finishedA!: () => void;
    const aDone = new Promise<void>((r) => (finishedA = r));
    // B has already seen the run as not finished when its claim goes through: after A released it.
    const late: LeaseManager = {
      acquire: async (name, owner, ttl) => {
        await aDone;
        return s.leases.acquire(name, owner, ttl);
      },
      release: (name, owner) => s.leases.release(name, owner),
      close: async () => {},
    };
    const a = s.replica('a', s.leases, engine);
    const b = s.replica('b', late, engine);
    const bTick = b.tick();
    await a.tick();
    finishedA();
    await bTick;
    assert.equal(asked.length, 4, asked.join(', '));
    const [run] = await s.store.find<PromptRunDoc>(PROMPT_RUNS, { where: { org_id: s.ctx.org_id } });
    assert.deepEqual([run!.status, run!.collected, run!.failed], ['completed', 2, 2]);
    await s.store.close();
  });

  it('a run taken over after a crash skips the items already collected or recorded as failed', async () => {
    const s = await setup();
    const slot = '2026-03-05T13:00:00.000Z';
    const runId = derivedUuid(`run:${s.ctx.org_id}:${slot}`);
    const at = '2026-03-05T13:01:00.000Z';
    const system = { metadata: { org_id: s.ctx.org_id, actor: 'system:test' } };
    // The crashed replica started the run and recorded one failed item; its claim has lapsed.
    await s.commands.transaction(system, (x) =>
      x.execute(promptRunDecider, promptRunStream(runId), {
        type: 'start',
        run_id: runId,
        org_id: s.ctx.org_id,
        slot,
        planned: 4,
        models: ['m1', 'flaky'],
        at,
      }),
    );
    await s.commands.transaction(system, (x) =>
      x.execute(promptRunDecider, promptRunStream(runId), {
        type: 'item_failed',
        prompt_id: s.promptIds.one!,
        model: 'flaky',
        location: 'us',
        error: 'crashed replica saw a timeout',
        at,
      }),
    );
    const { engine, asked } = countingEngine();
    await s.replica('successor', s.leases, engine).tick();
    assert.equal(asked.length, 3, asked.join(', '));
    assert.ok(!asked.includes(`question one|flaky|us`));
    const run = (await s.store.get<PromptRunDoc>(PROMPT_RUNS, runId))!;
    assert.deepEqual([run.status, run.planned, run.collected, run.failed], ['completed', 4, 2, 2]);
    await s.store.close();
  });

  it('stops a run when the organization switches runs off mid-run', async () => {
    const s = await setup();
    const asked: string[] = [];
    const engine: AnswerEngine = {
      async ask({ prompt, model }) {
        asked.push(`${prompt}|${model}`);
        // The gateway's runs_enabled_changed event arrives while the run is under way.
        await s.store.transaction((tx) => tx.put(ORGANIZATIONS, { id: s.ctx.org_id, name: 'Org', runs_enabled: false }));
        return { text: 'Acme', citations: [] };
      },
    };
    await s.replica('a', s.leases, engine).tick();
    assert.equal(asked.length, 1);
    const [run] = await s.store.find<PromptRunDoc>(PROMPT_RUNS, { where: { org_id: s.ctx.org_id } });
    assert.deepEqual([run!.status, run!.collected, run!.error], ['failed', 1, RUNS_SWITCHED_OFF]);
    await s.store.close();
  });

  it('honours the organization runs switch', async () => {
    const s = await setup();
    await s.store.transaction((tx) => tx.put(ORGANIZATIONS, { id: s.ctx.org_id, name: 'Org', runs_enabled: false }));
    const { engine, asked } = countingEngine();
    const a = s.replica('a', s.leases, engine);
    await a.tick();
    assert.equal(asked.length, 0);
    await assert.rejects(a.runNow(s.ctx.org_id), /switched off/);
    await s.store.close();
  });
});
