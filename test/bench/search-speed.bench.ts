/**
 * Speed of the embedded search index, against baselines measured in the same
 * run on the same corpus and queries (SciFact abstracts and claims):
 *   - MiniSearch (in-memory JS full-text search),
 *   - a bare FTS5 query (one table, ORDER BY rank, no filters, no count),
 *   - our SQLite SearchIndex (filters, folder scope, totals, BM25 column weights),
 * at about 5k and 100k chunks; then the cost of the whole HTTP path
 * (gateway, auth, credits, gRPC, answer composition, query record) as a ratio to
 * the bare index call, on the 5k corpus.
 *
 *   npm run bench:search            (SIZES=5000 HTTP=0 for a quick index-only run; QUERIES=n to set the claims measured)
 */
import Database from 'better-sqlite3';
import MiniSearch from 'minisearch';
import { randomUUID } from 'node:crypto';
import { createSqliteSearchIndex, ftsQuery } from '@kb/search/sqlite';
import { startTestSystem } from '../e2e/harness.js';
import { contentFeed, orgIdOf } from '../e2e/search-fixtures.js';
import { loadScifact } from './scifact.js';

interface Chunk {
  id: string;
  doc: string;
  title: string;
  text: string;
}

const LIMIT = 10;
const { corpus, queries } = loadScifact();
const allQuestions = queries.map((q) => q.text);
/**
 * The claims measured at a corpus size: QUERIES=n when given, else all 809 up to 20k chunks and
 * the first 200 above (MiniSearch takes about 0.5 s a query at 100k chunks, so all of them would
 * take many minutes); every engine of a size gets the same claims, so the ratios hold.
 */
const questionsFor = (size: number): string[] =>
  allQuestions.slice(0, process.env.QUERIES ? Number(process.env.QUERIES) : size > 20_000 ? 200 : allQuestions.length);
let questions = allQuestions;

/** Abstracts as chunks of two sentences (5k: whole abstracts); repeated with new ids to reach the target size. */
function chunksOf(target: number): Chunk[] {
  const base: Chunk[] =
    target <= corpus.length
      ? corpus.map((d) => ({ id: d._id, doc: d._id, title: d.title, text: d.text }))
      : corpus.flatMap((d) => {
          const sentences = d.text.split(/(?<=[.!?])\s+/);
          const out: Chunk[] = [];
          for (let i = 0; i < sentences.length; i += 2)
            out.push({ id: `${d._id}-${i}`, doc: d._id, title: d.title, text: sentences.slice(i, i + 2).join(' ') });
          return out;
        });
  const out: Chunk[] = [];
  for (let copy = 0; out.length < target; copy++)
    for (const c of base) if (out.length < target) out.push({ ...c, id: `${c.id}#${copy}`, doc: `${c.doc}#${copy}` });
  return out;
}

async function measure(name: string, fn: (q: string) => unknown | Promise<unknown>) {
  for (const q of questions.slice(0, 50)) await fn(q); // warm-up
  const lat: number[] = [];
  const started = performance.now();
  for (const q of questions) {
    const t0 = performance.now();
    await fn(q);
    lat.push(performance.now() - t0);
  }
  const seconds = (performance.now() - started) / 1000;
  lat.sort((a, b) => a - b);
  return { name, qps: questions.length / seconds, p50: lat[Math.floor(lat.length * 0.5)]!, p99: lat[Math.floor(lat.length * 0.99)]! };
}

type Row = Awaited<ReturnType<typeof measure>>;
function print(title: string, rows: Row[], baseline: string) {
  const base = rows.find((r) => r.name === baseline)!;
  console.log(`\n${title}`);
  console.log('| engine | q/s | p50 ms | p99 ms | p50 vs ' + baseline + ' |');
  console.log('|---|---|---|---|---|');
  for (const r of rows)
    console.log(`| ${r.name} | ${r.qps.toFixed(0)} | ${r.p50.toFixed(3)} | ${r.p99.toFixed(3)} | ${(r.p50 / base.p50).toFixed(2)}x |`);
}

async function engines(size: number) {
  const chunks = chunksOf(size);
  const org = randomUUID();

  const mini = new MiniSearch<Chunk>({ fields: ['title', 'text'], storeFields: ['doc'], idField: 'id' });
  mini.addAll(chunks);

  const bare = new Database(':memory:');
  bare.exec("CREATE VIRTUAL TABLE f USING fts5(title, body, tokenize='porter unicode61 remove_diacritics 2')");
  const insert = bare.prepare('INSERT INTO f (title, body) VALUES (?, ?)');
  bare.transaction(() => chunks.forEach((c) => insert.run(c.title, c.text)))();
  const bareQuery = bare.prepare('SELECT rowid, bm25(f, 2, 1) AS s FROM f WHERE f MATCH ? ORDER BY s LIMIT ?');

  const index = createSqliteSearchIndex({ path: ':memory:' });
  const byDoc = new Map<string, Chunk[]>();
  for (const c of chunks) byDoc.set(c.doc, [...(byDoc.get(c.doc) ?? []), c]);
  for (const [doc, cs] of byDoc) {
    await index.indexVersion({
      org_id: org,
      content_id: doc,
      version_id: doc,
      title: cs[0]!.title,
      category_id: null,
      topic_id: null,
      tags: [],
      folder_path: ['root'],
      chunks: cs.map((c, i) => ({ chunk_index: i, text: c.text })),
    });
  }

  const rows = [
    await measure('MiniSearch (OR, in memory)', (q) => mini.search(q, { combineWith: 'OR' }).slice(0, LIMIT)),
    await measure('bare FTS5 query', (q) => {
      const m = ftsQuery(q);
      return m ? bareQuery.all(m, LIMIT) : [];
    }),
    await measure('SearchIndex (SQLite FTS5)', (q) =>
      index.search({ org_id: org, query: q, filters: { folder_scope: null }, limit: LIMIT }),
    ),
    await measure('SearchIndex, folder-scoped', (q) =>
      index.search({ org_id: org, query: q, filters: { folder_scope: ['root'] }, limit: LIMIT }),
    ),
  ];
  print(`${chunks.length} chunks (${byDoc.size} content items), ${questions.length} SciFact claims, top ${LIMIT}`, rows, 'bare FTS5 query');
  bare.close();
  return { index, org };
}

// SIZES=5000 for a quick run; HTTP=0 skips the whole-path part; QUERIES=n measures n claims.
for (const size of (process.env.SIZES ?? '5000,100000').split(',').map(Number)) {
  questions = questionsFor(size);
  await (await engines(size)).index.close();
}
questions = questionsFor(5000);
if (process.env.HTTP === '0') process.exit(0);

// The whole HTTP path on a 5k corpus, against the index call inside the same process.
const t = await startTestSystem({ BOOTSTRAP_CREDITS: '100000000' });
try {
  const feed = contentFeed(t);
  const org = await orgIdOf(t);
  const docs = corpus.slice(0, 5_000);
  for (const d of docs) await feed.put(org, { title: d.title, chunks: [d.text] });
  const kbIndex = new Database(`${t.dataDir}/knowledge-base-search.db`, { readonly: true });
  while ((kbIndex.prepare('SELECT count(*) AS n FROM contents').get() as { n: number }).n < docs.length)
    await new Promise((r) => setTimeout(r, 200));
  kbIndex.close();
  await feed.close();
  const sameIndex = createSqliteSearchIndex({ path: `${t.dataDir}/knowledge-base-search.db` });
  const rows = [
    await measure('SearchIndex call (same index file)', (q) =>
      sameIndex.search({ org_id: org, query: q, filters: { folder_scope: null }, limit: 20 }),
    ),
    await measure('POST /search over HTTP (max_results 10)', async (q) => {
      const res = await t.api('POST', '/search', { body: { query: q, max_results: 10 } });
      if (res.status !== 200) throw new Error(res.text);
    }),
  ];
  print(
    'Whole path: gateway + auth + credits + gRPC + answer + query record, vs the bare index call',
    rows,
    'SearchIndex call (same index file)',
  );
  await sameIndex.close();
} finally {
  await t.stop();
}
