import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// A worker module that answers the largest new space (MB) its heap reaches while allocating garbage.
const PROBE = `
import { getHeapSpaceStatistics } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
let keep = [], most = 0;
for (let i = 0; i < 2000000; i++) {
  keep.push({ i });
  if (keep.length > 200000) keep = [];
  if (i % 5000 === 0) most = Math.max(most, getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size);
}
parentPort.postMessage({ newSpaceMb: most / 1048576, workerData });
`;

/**
 * In a fresh process (the flag is process-wide): the heap settings apply a 1 MB semi-space, then
 * one worker starts asking for 16 MB and one after it asking for nothing; both run the probe.
 */
function newSpaces(dir: string, probeFile: string): { sized: number; after: number; workerData: unknown } {
  const platform = (file: string) => JSON.stringify(fileURLToPath(new URL(file, import.meta.url)));
  const script = `
    const { applyHeapSettings } = await import(${platform('./heap.ts')});
    const { startModuleWorker } = await import(${platform('./worker.ts')});
    applyHeapSettings('test', { HEAP_SEMI_SPACE_MB: '1', HEAP_GROWING_PERCENT: '0' });
    const url = new URL(${JSON.stringify(pathToFileURL(probeFile).href)});
    const answer = (w) => new Promise((resolve, reject) => { w.once('message', resolve); w.once('error', reject); });
    const sized = startModuleWorker(url, { semiSpaceMb: 16, workerData: { kept: true } });
    const after = startModuleWorker(url);
    const [a, b] = await Promise.all([answer(sized), answer(after)]);
    console.log(JSON.stringify({ sized: a.newSpaceMb, after: b.newSpaceMb, workerData: a.workerData }));
    process.exit(0);`;
  // From a file: a worker inherits the flags of an -e script (--input-type), which a worker of a file refuses.
  writeFileSync(join(dir, 'main.mjs'), script);
  const out = spawnSync(process.execPath, ['--conditions=source', '--import', 'tsx', join(dir, 'main.mjs')], { encoding: 'utf8' });
  assert.equal(out.status, 0, out.stderr);
  return JSON.parse(out.stdout.trim().split('\n').at(-1)!) as { sized: number; after: number; workerData: unknown };
}

describe('startModuleWorker with its own semi-space', () => {
  for (const ext of ['mjs', 'ts']) {
    it(`gives the worker its size under a smaller process-wide one, and the next worker the process's (.${ext})`, () => {
      const dir = mkdtempSync(join(tmpdir(), 'kb-worker-'));
      try {
        writeFileSync(join(dir, 'package.json'), '{ "type": "module" }');
        const probe = join(dir, `probe.${ext}`);
        writeFileSync(probe, PROBE);
        const { sized, after, workerData } = newSpaces(dir, probe);
        // New space is two semi-spaces: at most 2 MB under the 1 MB flag.
        assert.ok(sized > 2, `the sized worker's new space reached only ${sized} MB`);
        assert.ok(after <= 2, `the next worker's new space reached ${after} MB, past the flag's 2 MB`);
        assert.deepEqual(workerData, { kept: true }, 'the worker keeps its own workerData');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
