/**
 * The child of vector-store.bench.ts: builds a generated index, or measures one store
 * (on disk through the SearchIndex, or the in-memory scan it replaced) in a process of
 * its own.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteSearchIndex } from '@kb/search/sqlite';
import { answerRequests } from './bench-child.js';
import { seededRandom } from './seeded-random.js';

const DIMS = 384;
const CENTRES = 2000;
const PER_CONTENT = 1000;
const LIMIT = 210;
const ORG = 'bench-org';

const normalize = (v: Float32Array) => {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n);
  for (let i = 0; i < v.length; i++) v[i]! /= n;
  return v;
};
const centres = Array.from({ length: CENTRES }, (_, c) => {
  const r = seededRandom(1_000_000 + c);
  return normalize(Float32Array.from({ length: DIMS }, () => r() * 2 - 1));
});
/** Chunk i's vector: its centre plus noise of about the same size (neighbours, not copies). */
const vectorOf = (i: number, noise = 0.08) => {
  const r = seededRandom(i + 1);
  const c = centres[i % CENTRES]!;
  return normalize(Float32Array.from({ length: DIMS }, (_, d) => c[d]! + noise * (r() * 2 - 1)));
};
const queryOf = (q: number, size: number) => vectorOf(Math.floor(seededRandom(7_000_000 + q)() * size), 0.1);

const rssMb = () => process.memoryUsage().rss / 2 ** 20;
const pctl = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

async function build(path: string, size: number) {
  const started = performance.now();
  const index = createSqliteSearchIndex({ path });
  for (let first = 0; first < size; first += PER_CONTENT) {
    const n = Math.min(PER_CONTENT, size - first);
    await index.indexVersion({
      org_id: ORG,
      content_id: `c${first}`,
      version_id: `v${first}`,
      title: `generated ${first}`,
      category_id: null,
      topic_id: null,
      tags: [],
      folder_path: [],
      chunks: Array.from({ length: n }, (_, k) => ({ chunk_index: k, text: `chunk ${first + k}`, embedding: [...vectorOf(first + k)] })),
    });
  }
  await index.close();
  const db = new Database(path, { readonly: true });
  const bitsBytes = (db.prepare("SELECT sum(pgsize) AS n FROM dbstat WHERE name LIKE 'chunk_bits%'").get() as { n: number }).n;
  db.close();
  return { ms: performance.now() - started, bitsMb: bitsBytes / 2 ** 20, floatsMb: (size * DIMS * 4) / 2 ** 20 };
}

async function measure(path: string, store: 'disk' | 'memory', queries: number) {
  const size = (() => {
    const db = new Database(path, { readonly: true });
    const n = (db.prepare('SELECT count(*) AS n FROM chunks').get() as { n: number }).n;
    db.close();
    return n;
  })();
  // The empty size: this process with an empty index open.
  const emptyDir = mkdtempSync(join(tmpdir(), 'kb-vectors-empty-'));
  const empty = createSqliteSearchIndex({ path: join(emptyDir, 'search.db') });
  await empty.search({ org_id: ORG, query: '', vector: [...queryOf(0, 1)], filters: { folder_scope: null }, limit: LIMIT });
  const rssEmptyMb = rssMb();
  await empty.close();
  rmSync(emptyDir, { recursive: true, force: true });

  const latencies: number[] = [];
  const top10: string[][] = [];
  let peak = rssEmptyMb;
  const t0 = performance.now();
  if (store === 'disk') {
    const index = createSqliteSearchIndex({ path });
    const openMs = performance.now() - t0;
    for (let q = 0; q < queries; q++) {
      const vector = [...queryOf(q, size)];
      const s = performance.now();
      const res = await index.search({ org_id: ORG, query: '', vector, filters: { folder_scope: null }, limit: LIMIT });
      latencies.push(performance.now() - s);
      top10.push(res.hits.slice(0, 10).map((h) => h.vector_id));
      peak = Math.max(peak, rssMb());
    }
    await index.close();
    return { rssEmptyMb, rssMb: peak, openMs, p50: pctl(latencies, 0.5), p99: pctl(latencies, 0.99), top10 };
  }
  // The in-memory scan as it was: every vector of the organization read once and kept, then cosine over all.
  const db = new Database(path, { readonly: true });
  const vectors = new Map<number, { v: Float32Array; norm: number }>();
  for (const r of db.prepare('SELECT rowid, embedding FROM chunks WHERE org_id = ? AND embedding IS NOT NULL').iterate(ORG) as Iterable<{
    rowid: number;
    embedding: Buffer;
  }>) {
    const v = new Float32Array(r.embedding.buffer.slice(r.embedding.byteOffset, r.embedding.byteOffset + r.embedding.byteLength));
    let n = 0;
    for (const x of v) n += x * x;
    vectors.set(r.rowid, { v, norm: Math.sqrt(n) });
  }
  const openMs = performance.now() - t0;
  const details = (ids: number[]) =>
    db.prepare(`SELECT rowid, version_id, chunk_index, text FROM chunks WHERE rowid IN (${ids.map(() => '?').join(',')})`).all(...ids) as {
      rowid: number;
      version_id: string;
      chunk_index: number;
    }[];
  for (let q = 0; q < queries; q++) {
    const qv = queryOf(q, size);
    const s = performance.now();
    const scored: { rowid: number; score: number }[] = [];
    let floor = -Infinity;
    for (const [rowid, { v, norm }] of vectors) {
      let dot = 0;
      for (let i = 0; i < DIMS; i++) dot += v[i]! * qv[i]!;
      const score = dot / norm;
      if (scored.length < LIMIT || score > floor) {
        scored.push({ rowid, score });
        if (scored.length > LIMIT * 4) {
          scored.sort((a, b) => b.score - a.score).length = LIMIT;
          floor = scored[LIMIT - 1]!.score;
        }
      }
    }
    scored.sort((a, b) => b.score - a.score).length = Math.min(scored.length, LIMIT);
    const rows = new Map(details(scored.map((r) => r.rowid)).map((r) => [r.rowid, r]));
    latencies.push(performance.now() - s);
    top10.push(scored.slice(0, 10).map((r) => `${rows.get(r.rowid)!.version_id}:${rows.get(r.rowid)!.chunk_index}`));
    peak = Math.max(peak, rssMb());
  }
  db.close();
  return { rssEmptyMb, rssMb: peak, openMs, p50: pctl(latencies, 0.5), p99: pctl(latencies, 0.99), top10 };
}

answerRequests(
  async (r: { build?: { path: string; size: number }; measure?: { path: string; store: 'disk' | 'memory'; queries: number } }) => {
    if (r.build) return build(r.build.path, r.build.size);
    return measure(r.measure!.path, r.measure!.store, r.measure!.queries);
  },
);
