import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig } from './config.js';
import { heapConfigSpec, heapFlags, youngGenerationMb } from './heap.js';

/**
 * In a fresh process (`--import tsx`, so this package's source loads): applies the heap settings
 * of `env`, then starts a worker with `resourceLimits` and answers the largest new space (MB) it
 * reaches while allocating garbage.
 */
function workerNewSpaceMb(env: Record<string, string>, resourceLimits: Record<string, number>): number {
  const heap = JSON.stringify(fileURLToPath(new URL('./heap.ts', import.meta.url)));
  const script = `
    import { Worker } from 'node:worker_threads';
    const { applyHeapSettings } = await import(${heap});
    applyHeapSettings('test', ${JSON.stringify(env)});
    const w = new Worker(\`
      const { getHeapSpaceStatistics } = process.getBuiltinModule('node:v8');
      const { parentPort } = process.getBuiltinModule('node:worker_threads');
      let keep = [], most = 0;
      for (let i = 0; i < 2000000; i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 200000) keep = [];
        if (i % 5000 === 0) most = Math.max(most, getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size); }
      parentPort.postMessage(most);\`, { eval: true, resourceLimits: ${JSON.stringify(resourceLimits)} });
    w.on('message', (m) => { console.log(m / 1048576); process.exit(0); });`;
  const out = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(out.status, 0, out.stderr);
  return Number(out.stdout.trim());
}

describe('heap settings', () => {
  it('default to 30% growth; 0 keeps V8 defaults', () => {
    assert.deepEqual(loadConfig(heapConfigSpec, {}), { HEAP_GROWING_PERCENT: 30 });
    assert.deepEqual(loadConfig(heapConfigSpec, { HEAP_GROWING_PERCENT: '0' }), { HEAP_GROWING_PERCENT: 0 });
  });

  it('give the V8 flag of a value that is set, none for 0', () => {
    assert.deepEqual(heapFlags({ HEAP_GROWING_PERCENT: 30 }), ['--heap-growing-percent=30']);
    assert.deepEqual(heapFlags({ HEAP_GROWING_PERCENT: 0 }), []);
  });

  it('refuse values that are not small whole numbers', () => {
    assert.throws(() => loadConfig(heapConfigSpec, { HEAP_GROWING_PERCENT: '-1' }), ConfigError);
    assert.throws(() => loadConfig(heapConfigSpec, { HEAP_GROWING_PERCENT: '1.5' }), ConfigError);
    assert.throws(() => loadConfig(heapConfigSpec, { HEAP_GROWING_PERCENT: '1e9' }), ConfigError);
  });

  it('leave each worker the young generation it asks for, small or large', () => {
    // A process-wide --max-semi-space-size once overrode these: the fold thread asked for 96 MB and got 12.
    // The new space is two of the three semi-spaces of a young generation.
    assert.equal(workerNewSpaceMb({}, { maxYoungGenerationSizeMb: youngGenerationMb(32) }), 64);
    assert.equal(workerNewSpaceMb({}, { maxYoungGenerationSizeMb: youngGenerationMb(2) }), 4);
    assert.equal(workerNewSpaceMb({ HEAP_GROWING_PERCENT: '0' }, { maxYoungGenerationSizeMb: youngGenerationMb(2) }), 4);
  });
});
