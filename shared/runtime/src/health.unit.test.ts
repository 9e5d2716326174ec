import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import type { Store } from '@kb/store';
import type { EventBus } from '@kb/bus';
import { checkDependencies, dependencyChecks } from './health.js';

describe('readiness from dependency checks', () => {
  it('is ready when every dependency answers', async () => {
    assert.deepEqual(await checkDependencies({ store: async () => 0, bus: async () => undefined }), {
      ready: true,
      checks: { store: 'ok', bus: 'ok' },
    });
  });

  it('names the dependency that failed or did not answer in time', async () => {
    const report = await checkDependencies(
      {
        store: async () => 0,
        bus: () => Promise.reject(new Error('Connection refused')),
        index: () => new Promise(() => {}),
      },
      50,
    );
    assert.deepEqual(report, {
      ready: false,
      checks: { store: 'ok', bus: 'Connection refused', index: 'no answer within 50 ms' },
    });
  });

  it("checks the store, the bus's ping and the search index", async () => {
    const calls: string[] = [];
    const store = { count: async (c: string) => (calls.push(`count ${c}`), 0) } as unknown as Store;
    const bus = { ping: async () => void calls.push('ping') } as unknown as EventBus;
    const index = { countChunks: async (org: string) => (calls.push(`chunks ${org}`), 0) };
    const report = await checkDependencies(dependencyChecks({ store, bus, index }));
    assert.equal(report.ready, true);
    assert.deepEqual(calls.sort(), ['chunks 00000000-0000-0000-0000-000000000000', 'count health_checks', 'ping']);
    const down = { ping: () => Promise.reject(new Error('broker down')) } as unknown as EventBus;
    assert.deepEqual((await checkDependencies(dependencyChecks({ store, bus: down }))).checks, { store: 'ok', bus: 'broker down' });
  });
});
