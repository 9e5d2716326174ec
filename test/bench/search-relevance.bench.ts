/**
 * Relevance and ingest of the embedded search on SciFact (train split, BEIR layout), through
 * the real path: every abstract goes in through POST /org/kb/raw (ingest service, chunking,
 * events, the knowledge base's indexing consumer and its vector worker) and every claim is
 * asked through POST /search, on the whole system started in-process on fresh data.
 *
 * Only the train split exists here, so the judged queries are split once by a hash of their
 * id: 20% held out (never used by any choice) and the rest in 5 folds. Two systems in the
 * same run:
 *  1. keyword only (EMBEDDINGS=none): BM25;
 *  2. the defaults: hybrid with the local model (.models/bge-small-en-v1.5-q, which npm start
 *     fetches), vectors computed in the background.
 * Printed: the ingest of each (time until every abstract is searchable by its words, and for
 * the default by its meaning, with the ratio and the vectors' docs/s per core), nDCG@10 on the
 * held-out split, the folds and all queries, Recall@100, p50/p99 latency, with ratios. Then,
 * as a check of the default fusion, the fusion settings cross-validated on the 5 folds from
 * the candidate lists of the default system's own index (each fold's choice made on the
 * other four). Without the model files only (1) runs (skipped: reason).
 *
 *   npm run bench:relevance
 *   CV=0 skips the offline cross-validation of the fusion; SCIFACT_DIR, QUERIES=n (subset), CORPUS=n (smoke run), EMBEDDINGS_MODEL_DIR (default .models/bge-small-en-v1.5-q),
 *   BENCH_SEARCH_INDEX=elasticsearch: the BM25 path on the Elasticsearch node at ELASTICSEARCH_URL
 *     (scripts/elasticsearch.sh start), in an index of its own (dropped afterwards); only (1) runs.
 *     (its analysis as the adapter picks it for that node); BENCH_ES_ANALYSIS=standard makes the index
 *     beforehand with the core's standard tokenizer and lowercase filter alone and no stems at all
 *     (what a node without analysis-common would give were the adapter not to stem).
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { createSqliteSearchIndex } from '@kb/search/sqlite';
import { DEFAULT_FUSION, cosine, fuseRanked, type FusionOptions } from '@kb/search';
import { createLocalEmbeddings, missingModelFiles } from '@kb/ai/local';
import { startTestSystem, type TestSystem } from '../e2e/harness.js';
import { indexedInElasticsearch } from '../e2e/elasticsearch-fixtures.js';
import { distinctInOrder, loadScifact, ndcgAt, recallAt } from './scifact.js';
import { crossValidate, bestSetting, meanOver, splitQueries } from './cross-validation.js';
import { ingestScifact, printIngestComparison } from './search-readiness.js';

const CONCURRENCY = 16;
const onElasticsearch = process.env.BENCH_SEARCH_INDEX === 'elasticsearch';
const esUrl = process.env.ELASTICSEARCH_URL;
if (onElasticsearch && !esUrl) throw new Error('BENCH_SEARCH_INDEX=elasticsearch needs ELASTICSEARCH_URL (scripts/elasticsearch.sh start)');
const esIndex = `kb-bench-relevance-${process.pid}-${Date.now()}`;
const searchEnv: Record<string, string> = onElasticsearch
  ? { SEARCH_INDEX: 'elasticsearch', ELASTICSEARCH_URL: esUrl!, ELASTICSEARCH_INDEX: esIndex }
  : {};
const MAX_RESULTS = 100;
/** What the service asks the index for max_results 100 (search.ts: max * 2 + 10, capped at 210). */
const POOL = 210;
const modelDir = process.env.EMBEDDINGS_MODEL_DIR ?? join(import.meta.dirname, '../../.models/bge-small-en-v1.5-q');

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

const { corpus: allDocs, queries: allQueries, qrels } = loadScifact();
// CORPUS=n: a smoke run on the first n abstracts (figures meaningless).
const corpus = process.env.CORPUS ? allDocs.slice(0, Number(process.env.CORPUS)) : allDocs;
const queries = process.env.QUERIES ? allQueries.slice(0, Number(process.env.QUERIES)) : allQueries;
const { heldOut, folds } = splitQueries(
  queries.map((q) => q._id),
  { heldOutShare: 0.2, folds: 5 },
);
const tuneIds = folds.flat();
console.log(
  `SciFact train: ${corpus.length} abstracts, ${queries.length} judged queries: ${heldOut.length} held out, ${tuneIds.length} in ${folds.length} folds (${folds.map((f) => f.length).join('/')})`,
);

const perQuery = (ranked: Map<string, string[]>, fn: typeof ndcgAt, k: number) =>
  new Map([...ranked].map(([q, docs]) => [q, fn(k, docs, qrels.get(q)!)]));
const pctl = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

/** Ingest of the keyword-only system on Elasticsearch: until the index holds every abstract. */
async function ingestOnElasticsearch(t: TestSystem) {
  const docOf = new Map<string, string>();
  await pool(corpus, CONCURRENCY, async (doc) => {
    const res = await t.api('POST', '/org/kb/raw', { body: { title: doc.title || doc._id, text: doc.text } });
    if (res.status !== 202) throw new Error(`ingest of ${doc._id} answered ${res.status}: ${res.text}`);
    docOf.set(res.body.content_id ?? res.body.id, doc._id);
  });
  while ((await indexedInElasticsearch(esUrl!, esIndex)).contents < corpus.length) await new Promise((r) => setTimeout(r, 1000));
  return { docOf };
}

/** Asks every claim through POST /search (4 concurrent); ranked documents and latencies. */
async function askAll(t: TestSystem, docOf: Map<string, string>) {
  const ranked = new Map<string, string[]>();
  const latencies: number[] = [];
  await pool(queries, 4, async (q) => {
    const t0 = performance.now();
    const res = await t.api('POST', '/search', { body: { query: q.text, max_results: MAX_RESULTS } });
    latencies.push(performance.now() - t0);
    if (res.status !== 200) throw new Error(`search answered ${res.status}: ${res.text}`);
    ranked.set(q._id, distinctInOrder(res.body.results.map((r: { content_id: string }) => docOf.get(r.content_id) ?? '?')));
  });
  return { ranked, latencies, ndcg: perQuery(ranked, ndcgAt, 10), recall: perQuery(ranked, recallAt, 100) };
}

if (onElasticsearch && process.env.BENCH_ES_ANALYSIS === 'standard') {
  // The index as the adapter makes it for the node's Porter stemming, but analyzed by the core alone.
  const text = { type: 'text', analyzer: 'kb_text' };
  const keyword = { type: 'keyword' };
  const res = await fetch(`${esUrl}/${esIndex}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      settings: { analysis: { analyzer: { kb_text: { type: 'custom', tokenizer: 'standard', filter: ['lowercase'] } } } },
      mappings: {
        _meta: { kb_analysis: 'porter' },
        properties: {
          ...Object.fromEntries(
            ['org_id', 'content_id', 'version_id', 'category_id', 'topic_id', 'tags', 'folder_path'].map((f) => [f, keyword]),
          ),
          chunk_index: { type: 'integer' },
          title: text,
          heading: text,
          body: text,
          heading_path: { type: 'keyword', index: false },
        },
      },
    }),
  });
  if (!res.ok) throw new Error(`creating the standard-analyzer index: ${res.status} ${await res.text()}`);
  console.log('Elasticsearch index analyzed by the core standard tokenizer + lowercase, no stemming');
}

// 1. Keyword only: BM25.
const lexicalSystem = await startTestSystem({ BOOTSTRAP_CREDITS: '100000000', EMBEDDINGS: 'none', ...searchEnv });
let bm25: Awaited<ReturnType<typeof askAll>>;
let bm25Ingest: Awaited<ReturnType<typeof ingestScifact>> | undefined;
try {
  const probe = await lexicalSystem.api('POST', '/org/kb/raw', { body: {} });
  if (probe.status === 404 && !probe.text.startsWith('{'))
    throw new Error('POST /org/kb/raw does not exist: the bench needs the ingest route');
  if (onElasticsearch) bm25 = await askAll(lexicalSystem, (await ingestOnElasticsearch(lexicalSystem)).docOf);
  else {
    bm25Ingest = await ingestScifact(lexicalSystem, corpus, 'keyword-only system', false);
    bm25 = await askAll(lexicalSystem, bm25Ingest.docOf);
  }
} finally {
  await lexicalSystem.stop();
  if (onElasticsearch) await fetch(`${esUrl}/${esIndex}`, { method: 'DELETE' });
}
const f4 = (x: number) => x.toFixed(4);
const ms = (xs: number[]) => `p50 ${pctl(xs, 0.5).toFixed(1)} ms, p99 ${pctl(xs, 0.99).toFixed(1)} ms`;
console.log(
  `keyword only (BM25) over HTTP: nDCG@10 all ${f4(
    meanOver(
      bm25.ndcg,
      queries.map((q) => q._id),
    ),
  )}, held out ${f4(meanOver(bm25.ndcg, heldOut))}; ${ms(bm25.latencies)}`,
);
if (onElasticsearch) {
  console.log(`(on Elasticsearch at ${esUrl}; the hybrid comparison runs on the embedded index only)`);
  process.exit(0);
}

const why = missingModelFiles(modelDir);
if (why) {
  console.log(`hybrid: skipped: ${why}`);
  process.exit(0);
}

// 2. The defaults: hybrid with the local model, vectors in the background (EMBEDDINGS unset).
const hybridEnv = { BOOTSTRAP_CREDITS: '100000000', EMBEDDINGS: '', EMBEDDINGS_MODEL_DIR: modelDir };
const hybridSystem = await startTestSystem(hybridEnv);
try {
  const hybridIngest = await ingestScifact(hybridSystem, corpus, 'default system', true);
  const hybrid = await askAll(hybridSystem, hybridIngest.docOf);
  const all = queries.map((q) => q._id);
  printIngestComparison(bm25Ingest!.timing, hybridIngest.timing);
  console.log('\n| POST /search, same run | nDCG@10 held out | nDCG@10 5 folds | nDCG@10 all | Recall@100 all | p50 | p99 |');
  console.log('|---|---|---|---|---|---|---|');
  for (const [name, r] of [
    ['keyword only (EMBEDDINGS=none)', bm25],
    ['default (hybrid)', hybrid],
  ] as const)
    console.log(
      `| ${name} | ${f4(meanOver(r.ndcg, heldOut))} | ${f4(meanOver(r.ndcg, tuneIds))} | ${f4(meanOver(r.ndcg, all))} | ${f4(meanOver(r.recall, all))} | ${pctl(r.latencies, 0.5).toFixed(1)} ms | ${pctl(r.latencies, 0.99).toFixed(1)} ms |`,
    );
  console.log(
    `default / keyword only: nDCG@10 held out ${(meanOver(hybrid.ndcg, heldOut) / meanOver(bm25.ndcg, heldOut)).toFixed(3)}x, ` +
      `all ${(meanOver(hybrid.ndcg, all) / meanOver(bm25.ndcg, all)).toFixed(3)}x, Recall@100 ${(meanOver(hybrid.recall, all) / meanOver(bm25.recall, all)).toFixed(3)}x, ` +
      `p50 latency ${(pctl(hybrid.latencies, 0.5) / pctl(bm25.latencies, 0.5)).toFixed(2)}x (target <= 2x)`,
  );

  if (meanOver(hybrid.ndcg, heldOut) < meanOver(bm25.ndcg, heldOut)) process.exitCode = 1;
  // CV=0: no offline cross-validation.
  crossValidation: {
    if (process.env.CV === '0') break crossValidation;
    // Candidate lists of the hybrid system's own index, once per query: BM25 (the index) and dense (the stored vectors).
    const dbPath = join(hybridSystem.dataDir, 'knowledge-base-search.db');
    const db = new Database(dbPath, { readonly: true });
    const rows = db.prepare('SELECT rowid, org_id, content_id, embedding FROM chunks WHERE embedding IS NOT NULL').all() as {
      rowid: number;
      org_id: string;
      content_id: string;
      embedding: Buffer;
    }[];
    db.close();
    if (rows.length !== hybridIngest.timing.chunks) throw new Error(`${hybridIngest.timing.chunks - rows.length} chunks have no embedding`);
    const org = rows[0]!.org_id;
    const vectors = rows.map(
      (r) => new Float32Array(r.embedding.buffer.slice(r.embedding.byteOffset, r.embedding.byteOffset + r.embedding.byteLength)),
    );
    const index = createSqliteSearchIndex({ path: dbPath });
    const embedder = await createLocalEmbeddings({ modelDir, threads: 1 });
    type Cand = { item: string; score: number }; // item: the chunk's content id (one entry per chunk: key = rowid)
    const lists = new Map<string, { lex: (Cand & { key: string })[]; dense: (Cand & { key: string })[] }>();
    const queryEmbedMs: number[] = [];
    for (const q of queries) {
      const res = await index.search({ org_id: org, query: q.text, filters: { folder_scope: null }, limit: POOL });
      const lex = res.hits.map((h) => ({ key: h.vector_id, item: h.content_id, score: h.score }));
      const t0 = performance.now();
      const [v] = await embedder.embed([q.text], 'query');
      queryEmbedMs.push(performance.now() - t0);
      const dense = rows
        .map((r, i) => ({ key: String(r.rowid), item: r.content_id, score: cosine(v!, vectors[i]!) }))
        .sort((a, b) => b.score - a.score)
        .slice(0, POOL);
      lists.set(q._id, { lex, dense });
    }
    await index.close();
    await embedder.close();

    // Keys must not collide between the lists' id spaces: lexical hits are keyed by vector id, so map rowids the same way.
    const vectorIdOfRow = new Map(
      (
        new Database(dbPath, { readonly: true }).prepare('SELECT rowid, version_id, chunk_index FROM chunks').all() as {
          rowid: number;
          version_id: string;
          chunk_index: number;
        }[]
      ).map((r) => [String(r.rowid), `${r.version_id}:${r.chunk_index}`]),
    );
    for (const l of lists.values()) for (const d of l.dense) d.key = vectorIdOfRow.get(d.key)!;

    const docOf = hybridIngest.docOf;
    const asItems = (list: (Cand & { key: string })[]) => list.map((c) => ({ item: c, score: c.score }));
    const rank = (setting: FusionOptions) =>
      new Map(
        [...lists].map(([q, l]) => [
          q,
          ndcgAt(
            10,
            distinctInOrder(fuseRanked(asItems(l.lex), asItems(l.dense), (c) => c.key, setting).map((f) => docOf.get(f.item.item) ?? '?')),
            qrels.get(q)!,
          ),
        ]),
      );
    // Simplest first (ties keep the earlier): BM25 alone, then RRF, then score fusion.
    const settings: FusionOptions[] = [{ method: 'rrf', k: 60, denseWeight: 0 }];
    for (const k of [10, 20, 40, 60, 100])
      for (const w of [0.3, 0.4, 0.5, 0.6, 0.7, 0.8]) settings.push({ method: 'rrf', k, denseWeight: w });
    for (const w of [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1]) settings.push({ method: 'convex', denseWeight: w });
    const perSetting = settings.map((setting) => ({ setting, scores: rank(setting) }));
    const show = (s: FusionOptions) => (s.method === 'rrf' ? `rrf k=${s.k} w=${s.denseWeight}` : `convex w=${s.denseWeight}`);
    const lexOnly = perSetting[0]!.scores;
    const denseOnly = rank({ method: 'convex', denseWeight: 1 });

    console.log(
      `\nCross-validation of the fusion on ${folds.length} folds (${settings.length} settings; each fold's setting chosen on the other folds):`,
    );
    console.log(
      '| fold | queries | chosen on the other folds | their nDCG@10 | held-out fold nDCG@10 | BM25 same fold (HTTP) | dense alone |',
    );
    console.log('|---|---|---|---|---|---|---|');
    const cv = crossValidate(perSetting, folds);
    for (const f of cv)
      console.log(
        `| ${f.fold + 1} | ${f.queries} | ${show(f.setting)} | ${f4(f.trainScore)} | ${f4(f.heldOutScore)} | ${f4(meanOver(bm25.ndcg, folds[f.fold]!))} | ${f4(meanOver(denseOnly, folds[f.fold]!))} |`,
      );
    const cvMean = cv.reduce((s, f) => s + f.heldOutScore * f.queries, 0) / tuneIds.length;
    console.log(
      `cross-validated nDCG@10 (each query scored by a setting chosen without it): ${f4(cvMean)}; BM25 ${f4(meanOver(bm25.ndcg, tuneIds))}`,
    );
    const chosen = bestSetting(perSetting, tuneIds);
    console.log(`setting chosen on all ${folds.length} folds: ${show(chosen.setting)} (${f4(chosen.score)} on them)`);
    console.log(
      `offline on the held-out split: chosen ${f4(meanOver(chosen.scores, heldOut))}, BM25 alone ${f4(meanOver(lexOnly, heldOut))}, dense alone ${f4(meanOver(denseOnly, heldOut))}`,
    );

    const defaults = perSetting.find((p) => show(p.setting) === show(DEFAULT_FUSION));
    console.log(
      `the default fusion (${show(DEFAULT_FUSION)}) on the folds offline: ${defaults ? f4(meanOver(defaults.scores, tuneIds)) : 'not among the settings'}`,
    );
    console.log(`query embedding alone (1 thread, sequential): p50 ${pctl(queryEmbedMs, 0.5).toFixed(1)} ms`);
  }
} finally {
  await hybridSystem.stop();
}
