/**
 * Offline benchmark: does the text a chunk's vector is computed from
 * change retrieval on SciFact train? Chunks are made exactly as the service makes them for
 * POST /org/kb/raw (ingest's Markdown extraction, then chunkBlocks with the default 1200/150),
 * BM25 candidates come from an in-memory SQLite index, dense candidates from cosine over the
 * chunk vectors, fused with fuseRanked as test/bench/search-relevance.bench.ts does offline.
 *
 * Variants of the embedded text (the query is always embed([claim], 'query')):
 *  A  embeddingTextOf(title, chunk)                               (today's)
 *  B  title + heading + chunk + the following chunk (its overlap with this one dropped)
 *  C  one vector per document: title + the whole text, used for each of its chunks
 *  D  title + heading + the preceding chunk's tail + chunk
 *
 *   npm run bench:embedding-text
 *   VARIANTS=A,B,C,D (default), THREADS=2, POOL=210, COST_SAMPLE=n (n texts per variant re-embedded
 *   uncached for a same-conditions CPU comparison, default 0), CHUNKS_ONLY=1 (count chunks and stop).
 *   Vectors are cached in .cache/embedding-context-<model>.bin (git-ignored).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createSqliteSearchIndex } from '@kb/search/sqlite';
import { DEFAULT_FUSION, cosine, fuseRanked, type FusionOptions } from '@kb/search';
import { createLocalEmbeddings, createWordPieceTokenizer, wordPieceSpecOf } from '@kb/ai/local';
import { extractFile, DEFAULT_LIMITS } from '../../services/ingest/src/extract/extract.js';
import { chunkBlocks, tailOf } from '../../services/ingest/src/domain/chunking.js';
import { embeddingTextOf } from '../../services/knowledge-base/src/app/search-vectors.js';
import { diskCachedEmbeddings } from './cached-embeddings.js';
import { distinctInOrder, loadScifact, ndcgAt, recallAt } from './scifact.js';
import { bestSetting, meanOver, splitQueries } from './cross-validation.js';

const modelDir = process.env.EMBEDDINGS_MODEL_DIR ?? join(import.meta.dirname, '../../.models/bge-small-en-v1.5-q');
const THREADS = Number(process.env.THREADS ?? 2);
const POOL = Number(process.env.POOL ?? 210); // what the service asks the index for at max_results 100
const BATCH = 32;
const VARIANTS = (process.env.VARIANTS ?? 'A,B,C,D').split(',').map((v) => v.trim().toUpperCase());
const COST_SAMPLE = Number(process.env.COST_SAMPLE ?? 0);
const f4 = (x: number) => x.toFixed(4);
const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const)
  process.on(sig, () => {
    console.log(`[${new Date().toISOString().slice(11, 19)}] got ${sig}; the vectors so far are in the cache, rerun to resume`);
    process.exit(1);
  });
const log = (s: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${s}`);

// ---- corpus, deduplicated by text as the service does (the later identical text is a 422 duplicate)
const { corpus: allDocs, queries, qrels } = loadScifact();
const seenText = new Set<string>();
const docs = allDocs.filter((d) => (seenText.has(d.text) ? false : (seenText.add(d.text), true)));
type Chunk = { chunk_index: number; text: string; heading_path?: string[] };
const chunksOf = new Map<string, Chunk[]>();
for (const d of docs) {
  const { blocks } = await extractFile({ bytes: Buffer.from(d.text, 'utf8'), filename: 'raw.md', format: 'md' }, DEFAULT_LIMITS);
  chunksOf.set(
    d._id,
    chunkBlocks(blocks, { targetChars: 1200, overlapChars: 150 }).map((c) => ({
      chunk_index: c.chunk_index,
      text: c.text,
      ...(c.heading_path && { heading_path: c.heading_path }),
    })),
  );
}
const titleOf = (d: { _id: string; title: string }) => d.title || d._id;
const nChunks = [...chunksOf.values()].reduce((n, c) => n + c.length, 0);
const hist = new Map<number, number>();
for (const c of chunksOf.values()) hist.set(c.length, (hist.get(c.length) ?? 0) + 1);
log(
  `SciFact train: ${allDocs.length} abstracts, ${docs.length} after dropping ${allDocs.length - docs.length} duplicate texts; ` +
    `${nChunks} chunks (${(nChunks / docs.length).toFixed(2)}/doc; docs by chunk count ${[...hist]
      .sort((a, b) => a[0] - b[0])
      .map(([k, v]) => `${k}:${v}`)
      .join(' ')}); ` +
    `chunks with a heading path: ${[...chunksOf.values()].flat().filter((c) => c.heading_path?.length).length}`,
);
if (process.env.CHUNKS_ONLY === '1') process.exit(0);

const ids = queries.map((q) => q._id);
const { heldOut, folds } = splitQueries(ids, { heldOutShare: 0.2, folds: 5 });
const tuneIds = folds.flat();
log(`${queries.length} judged queries: ${heldOut.length} held out (splitQueries 0.2, as the bench), ${tuneIds.length} in the 5 folds`);

// ---- the chunk list, keyed `${doc}:${chunk_index}`
const flat: { key: string; doc: string; chunk: Chunk; prev?: Chunk; next?: Chunk; title: string }[] = [];
for (const d of docs) {
  const cs = chunksOf.get(d._id)!;
  cs.forEach((c, i) =>
    flat.push({ key: `${d._id}:${c.chunk_index}`, doc: d._id, chunk: c, prev: cs[i - 1], next: cs[i + 1], title: titleOf(d) }),
  );
}

/** The next chunk's text without the overlap it repeats from this one (its first line, carried over as a tail). */
const withoutOverlap = (prev: Chunk, next: Chunk) => {
  const nl = next.text.indexOf('\n');
  const first = nl >= 0 ? next.text.slice(0, nl) : next.text;
  return nl >= 0 && prev.text.endsWith(first) ? next.text.slice(nl + 1) : next.text;
};
const heading = (c: Chunk) => c.heading_path?.join(' > ') ?? '';
const wholeText = (cs: Chunk[]) => cs.map((c, i) => (i === 0 ? c.text : withoutOverlap(cs[i - 1]!, c))).join('\n');

// ---- BM25 candidates (the service's own index code)
const ORG = 'org-bench';
const index = createSqliteSearchIndex({ path: ':memory:' });
for (const d of docs)
  await index.indexVersion({
    org_id: ORG,
    content_id: d._id,
    version_id: `v-${d._id}`,
    title: titleOf(d),
    category_id: null,
    topic_id: null,
    tags: [],
    folder_path: [],
    chunks: chunksOf.get(d._id)!,
  });
type Cand = { key: string; doc: string; score: number };
const lexOf = new Map<string, Cand[]>();
for (const q of queries) {
  const res = await index.search({ org_id: ORG, query: q.text, filters: { folder_scope: null }, limit: POOL });
  lexOf.set(
    q._id,
    res.hits.map((h) => ({ key: `${h.content_id}:${h.chunk_index}`, doc: h.content_id, score: h.score })),
  );
}
await index.close();
log(`BM25 candidates: ${POOL} per query`);

// ---- embeddings (disk-cached) and their CPU
const inner = await createLocalEmbeddings({ modelDir, threads: THREADS });
const cacheFile = join(import.meta.dirname, `../../.cache/embedding-context-${inner.model}.bin`);
const embedder = diskCachedEmbeddings(inner, cacheFile);
const tokenizer = createWordPieceTokenizer(wordPieceSpecOf(JSON.parse(readFileSync(join(modelDir, 'tokenizer.json'), 'utf8'))));
const tokens = (t: string) => tokenizer.encode(t, 1e9).ids.length;

const qvec = new Map<string, number[]>();
{
  const vs = await embedder.embed(
    queries.map((q) => q.text),
    'query',
  );
  queries.forEach((q, i) => qvec.set(q._id, vs[i]!));
}
log(`query vectors: ${queries.length}`);

/** Embeds texts in batches of 32 through the cache; CPU of the whole process (ONNX threads included) and wall time. */
async function embedAll(label: string, texts: string[]) {
  const cpu0 = cpuNow();
  const wall0 = performance.now();
  const out: number[][] = [];
  let lastReport = performance.now();
  for (let i = 0; i < texts.length; i += BATCH) {
    out.push(...(await embedder.embed(texts.slice(i, i + BATCH), 'document')));
    if (performance.now() - lastReport > 60_000) {
      lastReport = performance.now();
      log(`  ${label}: ${Math.min(i + BATCH, texts.length)}/${texts.length} texts, ${(cpuNow() - cpu0).toFixed(0)} s CPU`);
    }
  }
  return { vectors: out, cpu: cpuNow() - cpu0, wall: (performance.now() - wall0) / 1000 };
}

// ---- evaluation
const perQuery = (rank: (q: string) => string[]) => {
  const ndcg = new Map<string, number>();
  const recall = new Map<string, number>();
  for (const q of ids) {
    const r = rank(q);
    ndcg.set(q, ndcgAt(10, r, qrels.get(q)!));
    recall.set(q, recallAt(100, r, qrels.get(q)!));
  }
  return { ndcg, recall };
};
const show = (s: FusionOptions) => (s.method === 'rrf' ? `rrf k=${s.k} w=${s.denseWeight}` : `convex w=${s.denseWeight}`);
const settings: FusionOptions[] = [];
for (let w = 0; w <= 10; w++) settings.push({ method: 'convex', denseWeight: w / 10 });
for (const k of [20, 60]) for (const w of [0.3, 0.5, 0.7]) settings.push({ method: 'rrf', k, denseWeight: w });
const row = (name: string, r: { ndcg: Map<string, number>; recall: Map<string, number> }) =>
  `| ${name} | ${f4(meanOver(r.ndcg, ids))} | ${f4(meanOver(r.ndcg, heldOut))} | ${f4(meanOver(r.recall, ids))} | ${f4(meanOver(r.recall, heldOut))} |`;
const HEADER = '| system | nDCG@10 all | nDCG@10 held out | Recall@100 all | Recall@100 held out |\n|---|---|---|---|---|';

const bm25 = perQuery((q) => distinctInOrder(lexOf.get(q)!.map((c) => c.doc)));
console.log(`\n${HEADER}\n${row('BM25 only', bm25)}`);

const variants: Record<string, { what: string; perChunk: boolean; texts: () => string[] }> = {
  A: { what: "today's embeddingTextOf(title, chunk)", perChunk: true, texts: () => flat.map((f) => embeddingTextOf(f.title, f.chunk)) },
  B: {
    what: 'title + heading + chunk + following chunk',
    perChunk: true,
    texts: () => flat.map((f) => `${f.title}\n${heading(f.chunk)}\n${f.chunk.text}${f.next ? `\n${withoutOverlap(f.chunk, f.next)}` : ''}`),
  },
  C: {
    what: 'one vector per document: title + whole text',
    perChunk: false,
    texts: () => docs.map((d) => `${titleOf(d)}\n\n${wholeText(chunksOf.get(d._id)!)}`),
  },
  D: {
    what: "title + heading + preceding chunk's tail (600 chars) + chunk",
    perChunk: true,
    texts: () =>
      flat.map((f) =>
        f.prev
          ? `${f.title}\n${heading(f.chunk)}\n${tailOf(f.prev.text, 600)}\n${withoutOverlap(f.prev, f.chunk)}`
          : embeddingTextOf(f.title, f.chunk),
      ),
  },
};

// Same-conditions cost: COST_SAMPLE texts of each variant embedded uncached, one after the other.
if (COST_SAMPLE > 0) {
  console.log(`\nCPU of ${COST_SAMPLE} texts per variant embedded without the cache (same sample of chunks; threads ${THREADS}):`);
  const step = Math.max(1, Math.floor(flat.length / COST_SAMPLE));
  const sampleIdx = Array.from({ length: COST_SAMPLE }, (_, i) => (i * step) % flat.length);
  for (const v of VARIANTS) {
    const spec = variants[v]!;
    const all = spec.texts();
    const docIndex = new Map(docs.map((d, i) => [d._id, i]));
    const sample = sampleIdx.map((i) => (spec.perChunk ? all[i]! : all[docIndex.get(flat[i]!.doc)!]!));
    const c0 = cpuNow();
    const w0 = performance.now();
    for (let i = 0; i < sample.length; i += BATCH) await inner.embed(sample.slice(i, i + BATCH), 'document');
    const cpu = cpuNow() - c0;
    const perText = (cpu * 1000) / sample.length;
    const perCorpus = ((spec.perChunk ? flat.length : docs.length) * perText) / 1000;
    console.log(
      `  ${v}: ${perText.toFixed(1)} ms CPU per text, ${((performance.now() - w0) / sample.length).toFixed(1)} ms wall per text; ` +
        `whole corpus (${spec.perChunk ? flat.length : docs.length} texts) ~ ${perCorpus.toFixed(0)} s CPU`,
    );
  }
}
const summary: string[] = [];
const costs: string[] = [];
const seenTexts = new Set<string>();
for (const v of VARIANTS) {
  const spec = variants[v];
  if (!spec) throw new Error(`unknown variant ${v}`);
  const texts = spec.texts();
  const toks = texts.map(tokens);
  const truncated = toks.filter((t) => t > 512).length;
  const fresh = [...new Set(texts)].filter((t) => !seenTexts.has(t)).length;
  log(`variant ${v} (${spec.what}): embedding ${texts.length} texts (${fresh} not used by an earlier variant of this run)...`);
  const e = await embedAll(v, texts);
  texts.forEach((t) => seenTexts.add(t));
  // One vector per chunk: C gives each chunk its document's vector.
  const docVec = new Map<string, number[]>();
  if (!spec.perChunk) docs.forEach((d, i) => docVec.set(d._id, e.vectors[i]!));
  const chunkVecs = spec.perChunk ? e.vectors : flat.map((f) => docVec.get(f.doc)!);
  const denseOf = new Map<string, Cand[]>();
  for (const q of queries) {
    const qv = qvec.get(q._id)!;
    denseOf.set(
      q._id,
      flat
        .map((f, i) => ({ key: f.key, doc: f.doc, score: cosine(qv, chunkVecs[i]!) }))
        .sort((a, b) => b.score - a.score)
        .slice(0, POOL),
    );
  }
  const items = (l: Cand[]) => l.map((c) => ({ item: c, score: c.score }));
  const fused = (s: FusionOptions) =>
    perQuery((q) => distinctInOrder(fuseRanked(items(lexOf.get(q)!), items(denseOf.get(q)!), (c) => c.key, s).map((f) => f.item.doc)));
  const dense = perQuery((q) => distinctInOrder(denseOf.get(q)!.map((c) => c.doc)));
  const perSetting = settings.map((setting) => ({ setting, ...fused(setting) }));
  const def = fused(DEFAULT_FUSION);
  const bestAll = bestSetting(
    perSetting.map((p) => ({ setting: p.setting, scores: p.ndcg })),
    ids,
  );
  const bestTune = bestSetting(
    perSetting.map((p) => ({ setting: p.setting, scores: p.ndcg })),
    tuneIds,
  );
  const bestTuneRecall = perSetting.find((p) => p.setting === bestTune.setting)!.recall;
  console.log(`\nvariant ${v}: ${spec.what}`);
  console.log(HEADER);
  console.log(row(`${v} dense only`, dense));
  console.log(row(`${v} hybrid ${show(DEFAULT_FUSION)} (DEFAULT_FUSION)`, def));
  console.log(
    `| ${v} hybrid best on all queries: ${show(bestAll.setting)} | ${f4(bestAll.score)} | ${f4(meanOver(bestAll.scores, heldOut))} | ${f4(meanOver(perSetting.find((p) => p.setting === bestAll.setting)!.recall, ids))} | - |`,
  );
  console.log(
    `| ${v} hybrid chosen on the 5 folds: ${show(bestTune.setting)} | - | ${f4(meanOver(bestTune.scores, heldOut))} | - | ${f4(meanOver(bestTuneRecall, heldOut))} |`,
  );
  console.log(
    `sweep nDCG@10 all (held out): ${perSetting.map((p) => `${show(p.setting)} ${f4(meanOver(p.ndcg, ids))} (${f4(meanOver(p.ndcg, heldOut))})`).join('; ')}`,
  );
  const meanTok = toks.reduce((a, b) => a + b, 0) / toks.length;
  const cost =
    `${v}: ${texts.length} texts (${fresh} new this run), mean ${meanTok.toFixed(0)} tokens untruncated (${truncated} over 512, truncated); ` +
    `embedding this run ${e.cpu.toFixed(1)} s CPU, ${e.wall.toFixed(1)} s wall (threads ${THREADS}; cached texts cost 0)`;
  console.log(cost);
  costs.push(cost);
  summary.push(
    `| ${v} | ${f4(meanOver(dense.ndcg, ids))} / ${f4(meanOver(dense.ndcg, heldOut))} | ${f4(meanOver(def.ndcg, ids))} / ${f4(meanOver(def.ndcg, heldOut))} | ${show(bestAll.setting)} ${f4(bestAll.score)} | ${show(bestTune.setting)} ${f4(meanOver(bestTune.scores, heldOut))} | ${f4(meanOver(dense.recall, ids))} | ${f4(meanOver(def.recall, ids))} |`,
  );
}

await inner.close();

console.log(
  `\nSummary (${docs.length} docs, ${flat.length} chunks, ${ids.length} queries, ${heldOut.length} held out; BM25 only nDCG@10 ${f4(meanOver(bm25.ndcg, ids))} all / ${f4(meanOver(bm25.ndcg, heldOut))} held out, Recall@100 ${f4(meanOver(bm25.recall, ids))})`,
);
console.log(
  '| variant | dense nDCG@10 all / held out | hybrid default all / held out | best weight (all) | chosen on folds -> held out | dense R@100 | hybrid R@100 |',
);
console.log('|---|---|---|---|---|---|---|');
for (const s of summary) console.log(s);
for (const c of costs) console.log(c);
