/**
 * Dense retrieval at scale: the embedded index's vectors on disk (sign bits in memory,
 * rescored by exact cosine over the stored floats) against the in-memory scan it replaced
 * (every float of the organization held in the process, cosine over all of them), in the
 * same run, on the same generated corpus and queries, at 100k and 1M chunks of 384
 * dimensions (bge-small's): process memory above an empty index, disk, query latency and
 * how many of the exact top 10 the on-disk search returns.
 *
 * Vectors are generated (clustered around 2,000 seeded centres, so that a query has true
 * neighbours as an embedding would); each measurement runs in a child process of its own
 * so that its memory is its own.
 *
 *   npm run bench:vectors            (SIZES=100000 for a shorter run; QUERIES=n, default 200)
 */
import { mkdtempSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { child } from './bench-child.js';

const sizes = (process.env.SIZES ?? '100000,1000000').split(',').map(Number);
const queries = Number(process.env.QUERIES ?? 200);

type Reply = {
  rssEmptyMb: number;
  rssMb: number;
  openMs: number;
  p50: number;
  p99: number;
  top10: string[][];
};

const fileMb = (p: string) => (existsSync(p) ? statSync(p).size / 2 ** 20 : 0);
const pct = (n: number) => n.toFixed(1);

console.log(`dense retrieval, 384 dimensions, ${queries} queries, top 210 candidates (what a search of max_results 100 asks)`);
console.log('| chunks | store | memory above empty | disk | open | p50 | p99 | exact top 10 found |');
console.log('|---|---|---|---|---|---|---|---|');
for (const size of sizes) {
  const dir = mkdtempSync(join(tmpdir(), 'kb-vectors-'));
  const path = join(dir, 'search.db');
  try {
    const builder = child('./vector-store-child.ts');
    const built = await builder.ask<{ build: { path: string; size: number } }, { ms: number; bitsMb: number; floatsMb: number }>({
      build: { path, size },
    });
    builder.kill();
    const disk = fileMb(path) + fileMb(`${path}-wal`);
    const measure = async (store: 'disk' | 'memory') => {
      const c = child('./vector-store-child.ts');
      try {
        return await c.ask<{ measure: { path: string; store: string; queries: number } }, Reply>({ measure: { path, store, queries } });
      } finally {
        c.kill();
      }
    };
    const memory = await measure('memory');
    const onDisk = await measure('disk');
    const found =
      onDisk.top10.reduce((n, top, i) => n + top.filter((id) => memory.top10[i]!.includes(id)).length, 0) /
      memory.top10.reduce((n, t) => n + t.length, 0);
    console.log(
      `| ${size} | in-memory scan (before) | ${pct(memory.rssMb - memory.rssEmptyMb)} MB | ${pct(built.floatsMb)} MB of floats | ${pct(memory.openMs)} ms | ${pct(memory.p50)} ms | ${pct(memory.p99)} ms | 100% (exact) |`,
    );
    console.log(
      `| ${size} | on disk, sign bits + rescoring from disk | ${pct(onDisk.rssMb - onDisk.rssEmptyMb)} MB | ${pct(disk)} MB file (bits ${pct(built.bitsMb)} MB) | ${pct(onDisk.openMs)} ms | ${pct(onDisk.p50)} ms | ${pct(onDisk.p99)} ms | ${(found * 100).toFixed(1)}% |`,
    );
    console.log(
      `  ratios on disk / in memory at ${size}: memory ${((onDisk.rssMb - onDisk.rssEmptyMb) / (memory.rssMb - memory.rssEmptyMb)).toFixed(3)}x, ` +
        `p50 ${(onDisk.p50 / memory.p50).toFixed(2)}x, open ${(onDisk.openMs / memory.openMs).toFixed(3)}x (built in ${(built.ms / 1000).toFixed(0)} s)`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
