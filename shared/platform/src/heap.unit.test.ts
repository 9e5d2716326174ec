import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { ConfigError, loadConfig } from './config.js';
import { heapConfigSpec, heapFlags } from './heap.js';

describe('heap settings', () => {
  it('default to a 4 MB semi-space and 30% growth; 0 keeps V8 defaults', () => {
    assert.deepEqual(loadConfig(heapConfigSpec, {}), { HEAP_SEMI_SPACE_MB: 4, HEAP_GROWING_PERCENT: 30 });
    assert.deepEqual(loadConfig(heapConfigSpec, { HEAP_SEMI_SPACE_MB: '0', HEAP_GROWING_PERCENT: '0' }), {
      HEAP_SEMI_SPACE_MB: 0,
      HEAP_GROWING_PERCENT: 0,
    });
  });

  it('give the V8 flags of the values that are set, none for 0', () => {
    assert.deepEqual(heapFlags({ HEAP_SEMI_SPACE_MB: 4, HEAP_GROWING_PERCENT: 30 }), [
      '--max-semi-space-size=4',
      '--heap-growing-percent=30',
    ]);
    assert.deepEqual(heapFlags({ HEAP_SEMI_SPACE_MB: 0, HEAP_GROWING_PERCENT: 30 }), ['--heap-growing-percent=30']);
    assert.deepEqual(heapFlags({ HEAP_SEMI_SPACE_MB: 0, HEAP_GROWING_PERCENT: 0 }), []);
  });

  it('refuse values that are not small whole numbers', () => {
    assert.throws(() => loadConfig(heapConfigSpec, { HEAP_SEMI_SPACE_MB: '-1' }), ConfigError);
    assert.throws(() => loadConfig(heapConfigSpec, { HEAP_SEMI_SPACE_MB: '1.5' }), ConfigError);
    assert.throws(() => loadConfig(heapConfigSpec, { HEAP_GROWING_PERCENT: '1e9' }), ConfigError);
  });

  it('a worker started after they apply gets the smaller young generation, even one that asks for more', () => {
    // In a fresh process: the largest new space a worker reaches while allocating garbage. V8's flag
    // overrides a worker's resourceLimits, so a worker that needs another size is started under it
    // (startModuleWorker's semiSpaceMb, worker.unit.test.ts).
    const probe = (semi: string, resourceLimits = '{}') => {
      const script = `
        import { setFlagsFromString } from 'node:v8';
        import { Worker } from 'node:worker_threads';
        if (${semi} > 0) setFlagsFromString('--max-semi-space-size=${semi}');
        const w = new Worker(\`
          const { getHeapSpaceStatistics } = process.getBuiltinModule('node:v8');
          const { parentPort } = process.getBuiltinModule('node:worker_threads');
          let keep = [], most = 0;
          for (let i = 0; i < 400000; i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 50000) keep = [];
            if (i % 1000 === 0) most = Math.max(most, getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size); }
          parentPort.postMessage(most);\`, { eval: true, resourceLimits: ${resourceLimits} });
        w.on('message', (m) => { console.log(m); process.exit(0); });`;
      const out = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
      assert.equal(out.status, 0, out.stderr);
      return Number(out.stdout.trim());
    };
    const small = probe('1');
    const standard = probe('0');
    assert.ok(small < standard, `new space with a 1 MB semi-space ${small} should be below the default's ${standard}`);
    const askedForMore = probe('1', '{ maxYoungGenerationSizeMb: 96 }');
    assert.ok(askedForMore <= small, `new space of a worker asking for 96 MB under a 1 MB semi-space: ${askedForMore}, not ${small}`);
  });
});
