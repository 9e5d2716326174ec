/**
 * Relevance of the embedded search on SciFact (train split, BEIR layout), through
 * the real path: every abstract goes in through POST /org/kb/raw (ingest service,
 * chunking, events, the knowledge base's indexing consumer) and every claim is
 * asked through POST /search, on the whole system started in-process on fresh
 * data. Prints nDCG@10 and Recall@100, and the same metrics of a bare index fed
 * the abstracts directly in the same run, against the published BM25 range.
 *
 *   npm run bench:relevance            (SCIFACT_DIR to point elsewhere; QUERIES=n for a subset)
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { createSqliteSearchIndex } from '@kb/search/sqlite';
import { startTestSystem } from '../e2e/harness.js';
import { distinctInOrder, loadScifact, ndcgAt, recallAt } from './scifact.js';

const PUBLISHED_BM25 = { low: 0.665, high: 0.69 };
const CONCURRENCY = 16;

async function pool<T>(items: T[], n: number, fn: (item: T, i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i]!, i);
      }
    }),
  );
}

function evaluate(ranked: Map<string, string[]>, qrels: Map<string, Map<string, number>>) {
  let ndcg = 0;
  let recall = 0;
  for (const [q, docs] of ranked) {
    ndcg += ndcgAt(10, docs, qrels.get(q)!);
    recall += recallAt(100, docs, qrels.get(q)!);
  }
  return { ndcg10: ndcg / ranked.size, recall100: recall / ranked.size };
}

const { corpus, queries: allQueries, qrels } = loadScifact();
const queries = process.env.QUERIES ? allQueries.slice(0, Number(process.env.QUERIES)) : allQueries;
console.log(`SciFact train: ${corpus.length} abstracts, ${queries.length} judged queries`);

const t = await startTestSystem({ BOOTSTRAP_CREDITS: '100000000' });
try {
  const probe = await t.api('POST', '/org/kb/raw', { body: {} });
  if (probe.status === 404 && !probe.text.startsWith('{'))
    throw new Error('POST /org/kb/raw does not exist: the bench needs the ingest route');

  // Ingest every abstract over HTTP.
  const docOf = new Map<string, string>();
  let started = performance.now();
  await pool(corpus, CONCURRENCY, async (doc) => {
    let res = await t.api('POST', '/org/kb/raw', { body: { title: doc.title || doc._id, text: doc.text } });
    // 503 means retry with backoff (spec 7).
    for (let attempt = 1; (res.status === 503 || res.status === 429) && attempt < 10; attempt++) {
      await new Promise((r) => setTimeout(r, 50 * 2 ** attempt));
      res = await t.api('POST', '/org/kb/raw', { body: { title: doc.title || doc._id, text: doc.text } });
    }
    if (res.status !== 202) throw new Error(`ingest of ${doc._id} answered ${res.status}: ${res.text}`);
    docOf.set(res.body.content_id ?? res.body.id, doc._id);
  });
  const accepted = performance.now() - started;

  // Wait until the knowledge base indexed all of them (read-only look at the index file; not part of the measured path).
  const indexDb = new Database(join(t.dataDir, 'knowledge-base-search.db'), { readonly: true, fileMustExist: false });
  for (;;) {
    const n = (indexDb.prepare('SELECT count(*) AS n FROM contents').get() as { n: number }).n;
    process.stdout.write(`\rindexed ${n}/${corpus.length}`);
    if (n >= corpus.length) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const chunks = (indexDb.prepare('SELECT count(*) AS n FROM chunks').get() as { n: number }).n;
  indexDb.close();
  console.log(
    `\ningested in ${(accepted / 1000).toFixed(1)} s (accepted), indexed after ${((performance.now() - started) / 1000).toFixed(1)} s; ${chunks} chunks`,
  );

  // Ask every claim through POST /search.
  const ranked = new Map<string, string[]>();
  const latencies: number[] = [];
  started = performance.now();
  await pool(queries, 4, async (q) => {
    const t0 = performance.now();
    const res = await t.api('POST', '/search', { body: { query: q.text, max_results: 100 } });
    latencies.push(performance.now() - t0);
    if (res.status !== 200) throw new Error(`search answered ${res.status}: ${res.text}`);
    ranked.set(q._id, distinctInOrder(res.body.results.map((r: { content_id: string }) => docOf.get(r.content_id) ?? '?')));
  });
  latencies.sort((a, b) => a - b);
  const http = evaluate(ranked, qrels);

  // The same corpus in a bare index (one chunk per abstract), same run.
  const bare = createSqliteSearchIndex({ path: ':memory:' });
  const org = '00000000-0000-4000-8000-000000000000';
  for (const d of corpus) {
    await bare.indexVersion({
      org_id: org,
      content_id: d._id,
      version_id: d._id,
      title: d.title,
      category_id: null,
      topic_id: null,
      tags: [],
      folder_path: [],
      chunks: [{ chunk_index: 0, text: d.text }],
    });
  }
  const bareRanked = new Map<string, string[]>();
  for (const q of queries) {
    const res = await bare.search({ org_id: org, query: q.text, filters: { folder_scope: null }, limit: 100 });
    bareRanked.set(q._id, distinctInOrder(res.hits.map((h) => h.content_id)));
  }
  await bare.close();
  const direct = evaluate(bareRanked, qrels);

  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  console.log('\n| run | nDCG@10 | Recall@100 | vs BM25 0.665 |');
  console.log('|---|---|---|---|');
  console.log(
    `| POST /search (ingest -> chunks -> index -> HTTP) | ${http.ndcg10.toFixed(4)} | ${http.recall100.toFixed(4)} | ${pct(http.ndcg10 / PUBLISHED_BM25.low)} |`,
  );
  console.log(
    `| bare FTS5 index, abstracts as one chunk | ${direct.ndcg10.toFixed(4)} | ${direct.recall100.toFixed(4)} | ${pct(direct.ndcg10 / PUBLISHED_BM25.low)} |`,
  );
  console.log(`published BM25 on SciFact: ${PUBLISHED_BM25.low} to ${PUBLISHED_BM25.high} nDCG@10`);
  console.log(
    `POST /search latency (100 results, 4 concurrent): p50 ${latencies[Math.floor(latencies.length * 0.5)]!.toFixed(1)} ms, p99 ${latencies[Math.floor(latencies.length * 0.99)]!.toFixed(1)} ms, ${(queries.length / ((performance.now() - started) / 1000)).toFixed(0)} q/s`,
  );
  if (http.ndcg10 < PUBLISHED_BM25.low) process.exitCode = 1;
} finally {
  await t.stop();
}
