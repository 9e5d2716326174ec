import { afterAll, it } from 'vitest';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { describeOrSkip } from '@kb/testing';
import { startTestSystem, type TestSystem } from './harness.js';
import { indexedInElasticsearch } from './elasticsearch-fixtures.js';
import { distinctInOrder, loadScifact, ndcgAt, scifactDir } from '../bench/scifact.js';

/**
 * The relevance benchmark's BM25 path (npm run bench:relevance) on a slice of SciFact, on
 * Elasticsearch and on the embedded index in the same run: abstracts in through POST
 * /org/kb/raw, claims asked through POST /search, nDCG@10 of each. Elasticsearch must rank
 * as well as the embedded index, within a small margin (the full corpus figures are in the
 * bench: `BENCH_SEARCH_INDEX=elasticsearch npm run bench:relevance`).
 */
const url = process.env.ELASTICSEARCH_URL;
const haveData = existsSync(join(scifactDir, 'corpus.jsonl'));
const skip = !url
  ? 'skipped: ELASTICSEARCH_URL is not set (CI starts a node with scripts/elasticsearch.sh)'
  : !haveData
    ? `skipped: no SciFact data at ${scifactDir} (SCIFACT_DIR)`
    : false;

/** Abstracts in the slice (the first of the corpus) and the margin Elasticsearch may trail by. */
const SLICE = 500;
const MARGIN = 0.05;
const esIndex = `kb-e2e-relevance-${randomUUID()}`;

async function pool<T>(items: T[], n: number, fn: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

async function indexedContents(t: TestSystem, onElasticsearch: boolean): Promise<number> {
  if (onElasticsearch) return (await indexedInElasticsearch(url!, esIndex)).contents;
  const path = join(t.dataDir, 'knowledge-base-search.db');
  if (!existsSync(path)) return 0;
  const db = new Database(path, { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM contents').get() as { n: number }).n;
  } catch {
    return 0;
  } finally {
    db.close();
  }
}

describeOrSkip('relevance of the BM25 path on Elasticsearch (SciFact slice)', skip, () => {
  afterAll(async () => {
    await fetch(`${url}/${esIndex}`, { method: 'DELETE' });
  });

  it(`ranks the claims of ${SLICE} abstracts within ${MARGIN} nDCG@10 of the embedded index`, async () => {
    const { corpus, queries, qrels } = loadScifact();
    const docs = corpus.slice(0, SLICE);
    const inSlice = new Set(docs.map((d) => d._id));
    // Claims whose every judged abstract is in the slice.
    const claims = queries.filter((q) => [...(qrels.get(q._id)?.keys() ?? [])].every((id) => inSlice.has(id)) && qrels.has(q._id));
    assert.ok(claims.length >= 40, `${claims.length} claims`);

    async function ndcgOn(env: Record<string, string>): Promise<number> {
      const onElasticsearch = env.SEARCH_INDEX === 'elasticsearch';
      const t = await startTestSystem({ BOOTSTRAP_CREDITS: '100000000', ...env });
      try {
        const docOf = new Map<string, string>();
        await pool(docs, 8, async (doc) => {
          let res = await t.api('POST', '/org/kb/raw', { body: { title: doc.title || doc._id, text: doc.text } });
          for (let attempt = 1; (res.status === 503 || res.status === 429) && attempt < 10; attempt++) {
            await new Promise((r) => setTimeout(r, 50 * 2 ** attempt));
            res = await t.api('POST', '/org/kb/raw', { body: { title: doc.title || doc._id, text: doc.text } });
          }
          assert.equal(res.status, 202, res.text);
          docOf.set(res.body.content_id ?? res.body.id, doc._id);
        });
        // Waits on progress: the index count grows until it holds every abstract.
        let seen = -1;
        let still = 0;
        for (;;) {
          const n = await indexedContents(t, onElasticsearch);
          if (n >= docs.length) break;
          still = n > seen ? 0 : still + 1;
          seen = n;
          assert.ok(still < 120, `indexing stalled at ${n}/${docs.length}`);
          await new Promise((r) => setTimeout(r, 500));
        }
        let total = 0;
        await pool(claims, 4, async (q) => {
          const res = await t.api('POST', '/search', { body: { query: q.text, max_results: 10 } });
          assert.equal(res.status, 200, res.text);
          const ranked = distinctInOrder(res.body.results.map((r: { content_id: string }) => docOf.get(r.content_id) ?? '?'));
          total += ndcgAt(10, ranked, qrels.get(q._id)!);
        });
        return total / claims.length;
      } finally {
        await t.stop();
      }
    }

    const embedded = await ndcgOn({});
    const elasticsearch = await ndcgOn({ SEARCH_INDEX: 'elasticsearch', ELASTICSEARCH_URL: url!, ELASTICSEARCH_INDEX: esIndex });
    console.log(
      `SciFact slice (${docs.length} abstracts, ${claims.length} claims): nDCG@10 embedded ${embedded.toFixed(4)}, elasticsearch ${elasticsearch.toFixed(4)}`,
    );
    assert.ok(elasticsearch >= embedded - MARGIN, `elasticsearch ${elasticsearch.toFixed(4)} vs embedded ${embedded.toFixed(4)}`);
  });
});
