import { describe, it, beforeEach, afterEach } from 'vitest';
import { skippedTest } from './skip.js';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { IndexedContent, SearchIndex, SearchRequest } from '@kb/search';

export type SearchIndexFactory = () => Promise<{ index: SearchIndex; cleanup: () => Promise<void> } | { skip: string }>;

const content = (org: string, over: Partial<IndexedContent> & { texts: string[] }): IndexedContent => ({
  org_id: org,
  content_id: over.content_id ?? randomUUID(),
  version_id: over.version_id ?? randomUUID(),
  title: over.title ?? 'Untitled',
  category_id: over.category_id ?? null,
  topic_id: over.topic_id ?? null,
  tags: over.tags ?? [],
  folder_path: over.folder_path ?? [],
  chunks: over.texts.map((text, chunk_index) => ({ ...(over.chunks?.[chunk_index] ?? {}), chunk_index, text })),
});

/** The one contract every SearchIndex adapter passes (DESIGN section 8.3). */
export function describeSearchIndexContract(name: string, factory: SearchIndexFactory): void {
  describe(`SearchIndex contract: ${name}`, async () => {
    const probe = await factory();
    if ('skip' in probe) {
      skippedTest('runs against this adapter', probe.skip);
      return;
    }
    await probe.cleanup();

    let index: SearchIndex;
    let cleanup: () => Promise<void>;
    let org: string;
    const search = (query: string, over: Partial<SearchRequest> = {}) =>
      index.search({ org_id: org, query, filters: { folder_scope: null }, limit: 10, ...over });

    beforeEach(async () => {
      const made = await factory();
      if ('skip' in made) throw new Error(made.skip);
      ({ index, cleanup } = made);
      org = randomUUID();
    });
    afterEach(async () => cleanup());

    it('finds chunks by stemmed words of a natural-language question, best first', async () => {
      const a = content(org, { title: 'Vacation policy', texts: ['Employees receive 25 days of paid vacation every year.'] });
      const b = content(org, { title: 'Expenses', texts: ['Travel expenses are reimbursed within 30 days.'] });
      await index.indexVersion(a);
      await index.indexVersion(b);
      const res = await search('How many vacation days do employees get?');
      assert.equal(res.hits[0]!.content_id, a.content_id);
      assert.equal(res.hits[0]!.chunk_text, 'Employees receive 25 days of paid vacation every year.');
      assert.equal(res.hits[0]!.title, 'Vacation policy');
      assert.equal(res.hits[0]!.version_id, a.version_id);
      assert.equal(res.hits[0]!.chunk_index, 0);
      assert.equal(typeof res.hits[0]!.vector_id, 'string');
      // OR semantics: the expenses chunk shares only "days" and still matches, ranked lower.
      assert.deepEqual(
        res.hits.map((h) => h.content_id),
        [a.content_id, b.content_id],
      );
      assert.equal(res.total, 2);
      assert.ok(res.hits[0]!.score > res.hits[1]!.score);
    });

    it('matches the title and the heading path as well as the text', async () => {
      const a = content(org, { title: 'Onboarding handbook', texts: ['Read this first.'] });
      const b = content(org, {
        title: 'Other',
        texts: ['Bring your badge.'],
        chunks: [{ chunk_index: 0, text: '', heading_path: ['Security', 'Badges'] }],
      });
      await index.indexVersion(a);
      await index.indexVersion(b);
      assert.deepEqual(
        (await search('onboarding')).hits.map((h) => h.content_id),
        [a.content_id],
      );
      const badge = await search('security');
      assert.deepEqual(
        badge.hits.map((h) => h.content_id),
        [b.content_id],
      );
      assert.deepEqual(badge.hits[0]!.heading_path, ['Security', 'Badges']);
    });

    it('never lets user text break the query syntax', async () => {
      const doc = content(org, { texts: ['The NOT operator and "quotes" (parentheses) are plain words here. Café in Tōkyō 東京.'] });
      await index.indexVersion(doc);
      const other = randomUUID();
      await index.indexVersion(content(other, { texts: ['plain words of another organization'] }));
      const hostile = [
        '"unbalanced',
        'NOT',
        'a AND OR b',
        '(*) ^ : - +',
        'column:value',
        'NEAR(a b)',
        '',
        '   ',
        '???',
        '{title body}: x',
        '\\"\\',
        "'; DROP TABLE chunks; --",
        '\u0000\u200b\u200f',
        '\ud800 lone surrogate',
        '😀 emoji',
        'ǅ ﬁ ² ½ İ',
        'a'.repeat(2000),
        `org_id:${other}`,
        `filing : o${other.replaceAll('-', '')}`,
        '*:*',
        '{"match_all":{}}',
        '/regex.*/',
        'field:[* TO *]',
        'fuzzy~2 boost^3',
      ];
      for (const q of hostile) {
        const res = await search(q);
        assert.ok(Array.isArray(res.hits), q);
        // Whatever the text, never another organization's chunk.
        assert.ok(
          res.hits.every((h) => h.content_id === doc.content_id),
          q,
        );
      }
      // Operators, quotes and column names are plain words: each of these finds the chunk.
      for (const q of ['"quotes', 'not', 'NEAR(operator words)', 'title:plain', '-plain', 'plain*', '(parentheses', 'tokyo', 'CAFE']) {
        assert.equal((await search(q)).hits.length, 1, q);
      }
    });

    it('keeps organizations apart', async () => {
      await index.indexVersion(content(org, { texts: ['shared secret word zebra'] }));
      const other = randomUUID();
      await index.indexVersion(content(other, { texts: ['zebra in another organization'] }));
      const res = await search('zebra');
      assert.equal(res.hits.length, 1);
      assert.equal(res.total, 1);
      assert.equal(await index.countChunks(other), 1);
    });

    it('a new version replaces the old version chunks; removing content removes it', async () => {
      const id = randomUUID();
      await index.indexVersion(content(org, { content_id: id, texts: ['alpha version one', 'alpha second chunk'] }));
      const v2 = randomUUID();
      await index.indexVersion(content(org, { content_id: id, version_id: v2, texts: ['beta version two'] }));
      assert.equal((await search('alpha')).hits.length, 0);
      const res = await search('beta');
      assert.equal(res.hits[0]!.version_id, v2);
      assert.equal(await index.countChunks(org), 1);
      assert.equal(await index.removeContent(org, id), true);
      assert.equal((await search('beta')).hits.length, 0);
      assert.equal(await index.removeContent(org, id), false);
      assert.equal(await index.countChunks(org), 0);
    });

    it('filters by category, topic, tags and folders', async () => {
      const [cat, topic, tag, folder, sub] = [randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID()];
      const a = content(org, { category_id: cat, topic_id: topic, tags: [tag], folder_path: [folder, sub], texts: ['pricing plans'] });
      const b = content(org, { texts: ['pricing overview'] });
      await index.indexVersion(a);
      await index.indexVersion(b);
      const only = async (filters: Partial<SearchRequest['filters']>) =>
        (await search('pricing', { filters: { folder_scope: null, ...filters } })).hits.map((h) => h.content_id);
      assert.deepEqual(await only({ category_id: cat }), [a.content_id]);
      assert.deepEqual(await only({ topic_id: topic }), [a.content_id]);
      assert.deepEqual(await only({ tags: [tag] }), [a.content_id]);
      assert.deepEqual(await only({ folder_ids: [folder] }), [a.content_id]);
      assert.deepEqual(await only({ category_id: randomUUID() }), []);
      assert.equal((await only({})).length, 2);
    });

    it('applies the folder scope to hits and totals; an empty scope sees nothing', async () => {
      const [f1, f2] = [randomUUID(), randomUUID()];
      const inside = content(org, { folder_path: [f1], texts: ['quarterly revenue report'] });
      await index.indexVersion(inside);
      await index.indexVersion(content(org, { folder_path: [f2], texts: ['quarterly revenue forecast'] }));
      await index.indexVersion(content(org, { folder_path: [], texts: ['quarterly revenue at the root'] }));
      const scoped = await search('quarterly revenue', { filters: { folder_scope: [f1] } });
      assert.deepEqual(
        scoped.hits.map((h) => h.content_id),
        [inside.content_id],
      );
      assert.equal(scoped.total, 1);
      const none = await search('quarterly revenue', { filters: { folder_scope: [] } });
      assert.deepEqual(none, { hits: [], total: 0 });
      assert.equal((await search('quarterly revenue')).total, 3);
    });

    it('re-files content without re-indexing: title, filing, tags, folders', async () => {
      const c = content(org, { title: 'Old name', texts: ['kangaroo facts'] });
      await index.indexVersion(c);
      const [cat, tag, folder] = [randomUUID(), randomUUID(), randomUUID()];
      assert.equal(
        await index.updateContent(org, c.content_id, { title: 'Marsupials', category_id: cat, tags: [tag], folder_path: [folder] }),
        true,
      );
      assert.equal((await search('marsupials')).hits[0]!.title, 'Marsupials');
      assert.equal((await search('old name')).hits.length, 0);
      assert.equal((await search('kangaroo', { filters: { folder_scope: null, category_id: cat, tags: [tag] } })).hits.length, 1);
      assert.equal((await search('kangaroo', { filters: { folder_scope: [folder] } })).hits.length, 1);
      assert.equal(await index.updateContent(org, randomUUID(), { title: 'x' }), false);
    });

    it('limits hits but counts every match', async () => {
      for (let i = 0; i < 7; i++) await index.indexVersion(content(org, { texts: [`lighthouse keeper log ${i}`] }));
      const res = await search('lighthouse', { limit: 3 });
      assert.equal(res.hits.length, 3);
      assert.equal(res.total, 7);
    });

    it('fuses dense retrieval with BM25 when a query vector is given', async () => {
      const near = content(org, {
        texts: ['automobile maintenance schedule'],
        chunks: [{ chunk_index: 0, text: '', embedding: [1, 0, 0] }],
      });
      const far = content(org, { texts: ['car wash prices'], chunks: [{ chunk_index: 0, text: '', embedding: [0, 1, 0] }] });
      await index.indexVersion(near);
      await index.indexVersion(far);
      // No shared words with "automobile", found by its vector alone.
      const res = await search('car', { vector: [0.9, 0.1, 0] });
      const ids = res.hits.map((h) => h.content_id);
      assert.ok(ids.includes(near.content_id));
      assert.ok(ids.includes(far.content_id));
      assert.ok(res.hits.every((h) => h.score > 0));
    });

    it('dense retrieval follows new versions, removals, filters and organizations', async () => {
      const folder = randomUUID();
      const id = randomUUID();
      const vec = (text: string, embedding: number[]) => ({ texts: [text], chunks: [{ chunk_index: 0, text, embedding }] });
      await index.indexVersion(content(org, { content_id: id, ...vec('zeta one', [1, 0, 0]) }));
      const other = content(org, { folder_path: [folder], ...vec('eta two', [0, 1, 0]) });
      await index.indexVersion(other);
      await index.indexVersion(content(randomUUID(), { ...vec('theta elsewhere', [0, 0, 1]) }));
      const dense = async (vector: number[], filters: SearchRequest['filters'] = { folder_scope: null }) =>
        (await search('nothinglexical', { vector, filters })).hits.map((h) => h.chunk_text);
      assert.deepEqual(await dense([1, 0, 0]), ['zeta one', 'eta two'], 'another organization never appears');
      // A new version replaces the old vector.
      const v2 = randomUUID();
      await index.indexVersion(content(org, { content_id: id, version_id: v2, ...vec('zeta two', [0, 0, 1]) }));
      assert.deepEqual(await dense([0, 0, 1]), ['zeta two', 'eta two']);
      assert.deepEqual(await dense([1, 0, 0], { folder_scope: [folder] }), ['eta two'], 'the folder scope filters dense hits');
      assert.equal(await index.removeContent(org, id), true);
      assert.deepEqual(await dense([0, 0, 1]), ['eta two']);
    });

    it('vectors written after the text join dense retrieval; a replaced or removed version never gets them', async () => {
      const id = randomUUID();
      const v1 = randomUUID();
      await index.indexVersion(content(org, { content_id: id, version_id: v1, texts: ['zeta one', 'zeta two'] }));
      const dense = async (vector: number[]) => (await search('nothinglexical', { vector })).hits.map((h) => h.chunk_text);
      assert.deepEqual(await dense([1, 0, 0]), [], 'no vectors yet: nothing by meaning');
      assert.equal(await search('zeta').then((r) => r.hits.length), 2, 'searchable by words before its vectors');
      assert.equal(
        await index.setVectors(org, id, v1, [
          { chunk_index: 0, embedding: [1, 0, 0] },
          { chunk_index: 1, embedding: [0, 1, 0] },
        ]),
        true,
      );
      assert.deepEqual(await dense([1, 0.1, 0]), ['zeta one', 'zeta two']);
      assert.equal(await index.setVectors(randomUUID(), id, v1, [{ chunk_index: 0, embedding: [0, 0, 1] }]), false, 'another organization');
      // A new version: the old version's vectors, computed late, are refused and the old ones are gone.
      const v2 = randomUUID();
      await index.indexVersion(content(org, { content_id: id, version_id: v2, texts: ['zeta three'] }));
      assert.deepEqual(await dense([1, 0, 0]), []);
      assert.equal(await index.setVectors(org, id, v1, [{ chunk_index: 0, embedding: [1, 0, 0] }]), false);
      assert.deepEqual(await dense([1, 0, 0]), []);
      assert.equal(await index.setVectors(org, id, v2, [{ chunk_index: 0, embedding: [0, 0, 1] }]), true);
      assert.deepEqual(await dense([0, 0, 1]), ['zeta three']);
      await index.removeContent(org, id);
      assert.equal(await index.setVectors(org, id, v2, [{ chunk_index: 0, embedding: [0, 0, 1] }]), false);
      assert.deepEqual(await dense([0, 0, 1]), []);
    });

    it('finds the nearest of many model-sized vectors, under a folder scope too', async () => {
      // Deterministic pseudo-random unit vectors of 384 dimensions.
      let seed = 7;
      const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
      const unit = (v: number[]) => {
        const n = Math.hypot(...v);
        return v.map((x) => x / n);
      };
      const vectors = Array.from({ length: 40 }, () => unit(Array.from({ length: 384 }, rnd)));
      const folder = randomUUID();
      for (let i = 0; i < vectors.length; i++) {
        const c = content(org, { folder_path: i % 2 ? [folder] : [], texts: [`item ${i}`] });
        await index.indexVersion(c);
        assert.equal(await index.setVectors(org, c.content_id, c.version_id, [{ chunk_index: 0, embedding: vectors[i]! }]), true);
      }
      const near = (i: number) => unit(vectors[i]!.map((x) => x + (0.3 * rnd()) / Math.sqrt(384)));
      for (const i of [0, 17, 26, 39]) {
        const res = await search('nothinglexical', { vector: near(i) });
        assert.equal(res.hits[0]!.chunk_text, `item ${i}`);
      }
      const scoped = await search('nothinglexical', { vector: near(17), filters: { folder_scope: [folder] } });
      assert.equal(scoped.hits[0]!.chunk_text, 'item 17');
      assert.ok(
        scoped.hits.every((h) => Number(h.chunk_text.split(' ')[1]) % 2 === 1),
        'only the scope',
      );
    });

    it('clear drops everything', async () => {
      await index.indexVersion(content(org, { texts: ['to be dropped'] }));
      await index.clear();
      assert.equal(await index.countChunks(org), 0);
      assert.equal((await search('dropped')).hits.length, 0);
    });
  });
}
