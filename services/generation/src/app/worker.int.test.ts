import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixedClock, silentLogger } from '@kb/platform';
import type { Store } from '@kb/store';
import { createSqliteStore } from '@kb/store/sqlite';
import type { RunDoc } from '../projections/index.js';
import { createRunWorker, createStoreRunLeases } from './worker.js';

/** Runs shared by workers through per-run store leases: one works a run at a time; a dead worker's run is taken once its lease lapses. */

let dir: string;
let store: Store;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'kb-gen-worker-'));
  store = createSqliteStore({ path: join(dir, 'generation.db') });
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const run = (id: string) => ({ run_id: id }) as RunDoc;

describe('run worker', () => {
  it('never works one run in two workers at once, and takes a crashed worker’s run after its lease lapses', async () => {
    const clock = fixedClock('2026-01-01T00:00:00Z');
    let pending = [run('r1')];
    const worked: string[] = [];
    let release: () => void = () => undefined;
    const hanging = new Promise<void>((r) => (release = r));
    // Worker A takes r1 and then "dies": its work never finishes, its heartbeat never renews (the clock does not move for it).
    const a = createRunWorker({
      pending: async () => pending,
      execute: async (r) => {
        worked.push(`a:${r.run_id}`);
        await hanging;
      },
      leases: createStoreRunLeases({ store, owner: 'a', ttlMs: 60_000, clock }),
      logger: silentLogger(),
      tickMs: 1_000_000,
    });
    const b = createRunWorker({
      pending: async () => pending,
      execute: async (r) => {
        worked.push(`b:${r.run_id}`);
        pending = []; // completed: no longer pending
      },
      leases: createStoreRunLeases({ store, owner: 'b', ttlMs: 60_000, clock }),
      logger: silentLogger(),
      tickMs: 1_000_000,
    });
    await a.tick();
    await b.tick();
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(worked, ['a:r1'], 'b stays off a run whose lease a holds');
    clock.advance(59_000);
    await b.tick();
    assert.deepEqual(worked, ['a:r1'], 'still within the lease');
    clock.advance(2_000);
    await b.tick();
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(worked, ['a:r1', 'b:r1'], 'taken once the lease has lapsed');
    release();
    await a.stop();
    await b.stop();
  });
});
