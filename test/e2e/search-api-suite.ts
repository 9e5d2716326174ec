import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { loadConfig, silentLogger } from '@kb/platform';
import { knowledgeBaseConfigSpec, reindexSearch } from '@kb/knowledge-base';
import { startTestSystem, type TestSystem } from './harness.js';
import { contentFeed, eventually, orgIdOf } from './search-fixtures.js';

/** Where the system under test keeps its search index. */
export interface SearchBackend {
  /** Settings that select it (added to the system's environment and the re-index command's). */
  env: Record<string, string>;
  /** Empties the index behind the service's back, as a lost index would be. */
  loseIndex(t: TestSystem): Promise<void>;
}

/** The embedded index: SQLite FTS5 in the knowledge base's data directory. */
export const sqliteBackend: SearchBackend = {
  env: {},
  async loseIndex(t) {
    const db = new Database(join(t.dataDir, 'knowledge-base-search.db'));
    db.exec('DELETE FROM chunks_fts; DELETE FROM chunks; DELETE FROM contents;');
    db.close();
  },
};

/**
 * POST /search end to end (spec 4.2) on the whole system, against one search
 * backend: answers with citations, filters, versions and deletions, duplicates,
 * and rebuilding a lost index.
 */
export function describeSearchApi(backend: SearchBackend): void {
  let t: TestSystem;
  let feed: ReturnType<typeof contentFeed>;
  let org: string;
  let vacation: { content_id: string; version_id: string };
  let expenses: { content_id: string; version_id: string };
  let categoryId: string;
  let topicId: string;

  beforeAll(async () => {
    t = await startTestSystem(backend.env);
    feed = contentFeed(t);
    org = await orgIdOf(t);
    const cat = await t.api('POST', '/categories', { body: { name: 'Policies' } });
    categoryId = cat.body.category_id;
    topicId = (await t.api('POST', `/categories/${categoryId}/topics`, { body: { name: 'Leave' } })).body.topic_id;
    vacation = await feed.put(org, {
      title: 'Vacation policy',
      category_id: categoryId,
      topic_id: topicId,
      chunks: [
        'Employees receive 25 days of paid vacation every year. Unused vacation days expire at the end of March.',
        'Sick leave does not count against vacation days.',
      ],
    });
    expenses = await feed.put(org, { title: 'Travel expenses', chunks: ['Travel expenses are reimbursed within 30 days of submission.'] });
    await eventually(async () => {
      const res = await t.api('POST', '/search', { body: { query: 'travel expenses' } });
      assert.equal(res.body.results.length, 1);
    });
  });
  afterAll(async () => {
    await feed.close();
    await t.stop();
  });

  describe('POST /search (spec 4.2)', () => {
    it('answers a question with citations to the chunks that support it', async () => {
      const res = await t.api('POST', '/search', { body: { query: 'How many vacation days do employees get?' } });
      assert.equal(res.status, 200, res.text);
      const b = res.body;
      assert.equal(b.query, 'How many vacation days do employees get?');
      assert.equal(b.max_results, 5);
      assert.match(b.answer, /Employees receive 25 days of paid vacation every year\. \[1\]/);
      const top = b.results[0];
      assert.equal(top.content_id, vacation.content_id);
      assert.equal(top.version_id, vacation.version_id);
      assert.equal(top.chunk_index, 0);
      assert.equal(top.title, 'Vacation policy');
      assert.match(top.chunk_text, /^Employees receive 25 days/);
      assert.equal(typeof top.score, 'number');
      assert.equal(typeof top.vector_id, 'string');
      assert.ok(Number.isInteger(b.processing_time_ms) && b.processing_time_ms >= 1);
      assert.equal(b.total_results, b.results.length);
      assert.deepEqual(b.citations[0], {
        n: 1,
        content_id: vacation.content_id,
        version_id: vacation.version_id,
        chunk_index: 0,
        title: 'Vacation policy',
      });
    });

    it('says so when nothing relevant is found, instead of inventing an answer', async () => {
      const res = await t.api('POST', '/search', { body: { query: 'What is the capital of Mongolia?' } });
      assert.equal(res.status, 200);
      assert.equal(res.body.answer, 'No relevant information was found in the knowledge base for this question.');
      assert.deepEqual(res.body.citations, []);
    });

    it('bounds max_results and counts every match', async () => {
      const res = await t.api('POST', '/search', { body: { query: 'vacation days expenses', max_results: 1 } });
      assert.equal(res.status, 200);
      assert.equal(res.body.results.length, 1);
      assert.equal(res.body.max_results, 1);
      assert.equal(res.body.total_results, 3);
    });

    it('filters by category_id and topic_id', async () => {
      const byCategory = await t.api('POST', '/search', { body: { query: 'days', category_id: categoryId } });
      assert.equal(byCategory.status, 200);
      assert.ok(byCategory.body.results.length > 0);
      assert.ok(byCategory.body.results.every((r: { content_id: string }) => r.content_id === vacation.content_id));
      const byTopic = await t.api('POST', '/search', { body: { query: 'reimbursed', topic_id: topicId } });
      assert.deepEqual(byTopic.body.results, []);
      assert.equal(byTopic.body.total_results, 0);
    });

    it('accepts the caller organization as org_id; another organization is 404', async () => {
      assert.equal((await t.api('POST', '/search', { body: { query: 'vacation', org_id: org } })).status, 200);
      const other = await t.api('POST', '/search', { body: { query: 'vacation', org_id: randomUUID() } });
      assert.equal(other.status, 404);
      assert.equal(other.body.error.code, 'not_found');
    });

    it('is 404 for a category or topic that does not exist', async () => {
      assert.equal((await t.api('POST', '/search', { body: { query: 'vacation', category_id: randomUUID() } })).status, 404);
      assert.equal((await t.api('POST', '/search', { body: { query: 'vacation', topic_id: randomUUID() } })).status, 404);
    });

    it('is 400 without a query, with an empty one, bad max_results, bad ids or unknown fields', async () => {
      for (const body of [
        {},
        { query: '' },
        { query: '   ' },
        { query: 42 },
        { query: 'x', max_results: 0 },
        { query: 'x', max_results: 101 },
        { query: 'x', max_results: 2.5 },
        { query: 'x', category_id: 'nope' },
        { query: 'x', org_id: 'nope' },
        { query: 'x', surprise: true },
      ]) {
        const res = await t.api('POST', '/search', { body });
        assert.equal(res.status, 400, JSON.stringify(body));
      }
      assert.equal((await t.api('POST', '/search', { rawBody: '{"query":', headers: { 'content-type': 'application/json' } })).status, 400);
    });

    it('treats query syntax in user text as words', async () => {
      for (const query of ['"vacation', 'vacation AND OR NOT', 'NEAR(vacation days)', 'title:vacation*', '(((']) {
        const res = await t.api('POST', '/search', { body: { query } });
        assert.equal(res.status, 200, query);
      }
    });

    it('is 401 without a valid key', async () => {
      assert.equal((await t.api('POST', '/search', { key: null, body: { query: 'vacation' } })).status, 401);
      assert.equal((await t.api('POST', '/search', { key: 'kb_wrong_key_000000000000000000', body: { query: 'vacation' } })).status, 401);
    });

    it('follows new versions and deletions of content', async () => {
      const doc = await feed.put(org, { title: 'Parking', chunks: ['The parking garage opens at seven.'] });
      await eventually(async () =>
        assert.equal((await t.api('POST', '/search', { body: { query: 'parking garage' } })).body.results.length, 1),
      );
      const v2 = await feed.put(org, { title: 'Parking', chunks: ['The bicycle shed replaced the garage.'] }, doc.content_id);
      await eventually(async () => {
        const res = await t.api('POST', '/search', { body: { query: 'garage' } });
        assert.deepEqual(
          res.body.results.map((r: { version_id: string }) => r.version_id),
          [v2.version_id],
        );
      });
      // The first version's kept chunks go once the second is indexed; the second's stay for re-indexing.
      const kb = new Database(join(t.dataDir, 'knowledge-base.db'), { readonly: true });
      try {
        const kept = kb
          .prepare(
            "SELECT json_extract(data, '$.version_id') AS version_id FROM documents WHERE collection = 'search_chunks' AND json_extract(data, '$.content_id') = ?",
          )
          .all(doc.content_id) as { version_id: string }[];
        assert.deepEqual(
          kept.map((b) => b.version_id),
          [v2.version_id],
        );
      } finally {
        kb.close();
      }
      await feed.remove(org, doc.content_id);
      await eventually(async () =>
        assert.equal((await t.api('POST', '/search', { body: { query: 'garage bicycle' } })).body.total_results, 0),
      );
      assert.ok(expenses.content_id);
    });

    it('collapses near-duplicate chunks in results, answer and total_results', async () => {
      const memo =
        'The lighthouse keeper logs the lamp hours every night in the bound register kept by the stairs. ' +
        'Spare lenses are stored in the lower gallery, wrapped in cloth, and checked for cracks on the first day of each month. ' +
        'Storm shutters must be closed when the wind exceeds sixty knots, and the keeper radios the harbour office once they are shut.';
      const first = await feed.put(org, { title: 'Lighthouse manual', chunks: [memo] });
      // The same paragraph uploaded again (another file), with one word different.
      const copy = await feed.put(org, { title: 'Lighthouse manual (copy)', chunks: [memo.replace('sixty', '60')] });
      const other = await feed.put(org, { title: 'Keeper roster', chunks: ['The lighthouse keeper rota changes every Monday.'] });
      // Events of one organization are consumed in order: once the copy and the roster are in, so is the first.
      await eventually(async () => {
        for (const [query, id] of [
          ['copy', copy.content_id],
          ['roster', other.content_id],
        ] as const) {
          const found = (await t.api('POST', '/search', { body: { query, max_results: 10 } })).body.results;
          assert.ok(
            found.some((r: { content_id: string }) => r.content_id === id),
            query,
          );
        }
      });
      const question = { query: 'When does the lighthouse keeper close the storm shutters?' };
      const res = await t.api('POST', '/search', { body: question });
      assert.equal(res.status, 200, res.text);
      const ids = res.body.results.map((r: { content_id: string }) => r.content_id);
      assert.equal(ids.filter((id: string) => id === first.content_id || id === copy.content_id).length, 1, 'one of the two copies');
      assert.ok(ids.includes(other.content_id));
      assert.equal(res.body.total_results, 2, 'the collapsed copy is not counted');
      assert.equal((res.body.answer.match(/Storm shutters must be closed/g) ?? []).length, 1);
      for (const id of [first.content_id, copy.content_id, other.content_id]) await feed.remove(org, id);
      await eventually(async () => assert.equal((await t.api('POST', '/search', { body: { query: 'lighthouse' } })).body.total_results, 0));
    });

    it('the re-index command rebuilds a lost index from the store', async () => {
      const question = { query: 'How many vacation days do employees get?' };
      const before = (await t.api('POST', '/search', { body: question })).body;
      await backend.loseIndex(t);
      assert.equal((await t.api('POST', '/search', { body: question })).body.total_results, 0);
      const config = loadConfig(knowledgeBaseConfigSpec, {
        ...backend.env,
        DATA_DIR: t.dataDir,
        INTERNAL_TOKEN: 'reindex-test-token-0000',
        LOG_LEVEL: 'silent',
      });
      const progress: number[] = [];
      const result = await reindexSearch(config, silentLogger(), (done) => progress.push(done));
      assert.equal(result.contents, 2);
      assert.equal(result.chunks, 3);
      assert.deepEqual(progress, [1, 2]);
      // Same chunks in the same order (BM25 scores depend on the index's statistics, which a rebuild compacts),
      // once the index shows what was written (Elasticsearch refreshes within a second).
      const withoutScore = (rs: { score: number }[]) => rs.map(({ score: _score, ...r }) => r);
      await eventually(async () => {
        const after = (await t.api('POST', '/search', { body: question })).body;
        assert.deepEqual(withoutScore(after.results), withoutScore(before.results));
        assert.equal(after.answer, before.answer);
      });
    });

    it('npm run reindex:search rebuilds it from the command line, with progress', async () => {
      const question = { query: 'How many vacation days do employees get?' };
      const before = (await t.api('POST', '/search', { body: question })).body;
      await backend.loseIndex(t);
      assert.equal((await t.api('POST', '/search', { body: question })).body.total_results, 0);
      // The script behind `npm run reindex:search`, run the same way (same settings as the service, from the environment).
      const root = new URL('../..', import.meta.url).pathname;
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--conditions=source', '--import', 'tsx', 'services/knowledge-base/src/reindex-cli.ts'],
        { cwd: root, env: { ...process.env, ...backend.env, DATA_DIR: t.dataDir, LOG_LEVEL: 'silent' }, timeout: 60_000 },
      );
      assert.match(stdout, /re-indexing: 1\/\d+ content items/);
      assert.match(stdout, /re-indexed \d+ content items, \d+ chunks\n$/);
      await eventually(async () => {
        const after = (await t.api('POST', '/search', { body: question })).body;
        assert.equal(after.total_results, before.total_results);
        assert.equal(after.answer, before.answer);
      });
    });
  });
}
