import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestSystem, type TestSystem } from './harness.js';
import { logIn, newApiKey, newOrgAdmin, type SignedIn } from './identity-fixtures.js';
import { contentFeed, eventually, orgIdOf } from './search-fixtures.js';

let t: TestSystem;
let feed: ReturnType<typeof contentFeed>;
let org: string;
let admin: SignedIn;
let folderA: string;
let folderA1: string;
let folderB: string;
let inA1: { content_id: string };
let inB: { content_id: string };
let atRoot: { content_id: string };

const folder = async (name: string, parent_id?: string) => {
  const res = await t.api('POST', '/org/kb/folders', { body: { name, ...(parent_id && { parent_id }) } });
  assert.equal(res.status, 201, res.text);
  return res.body.kb_node_id as string;
};

beforeAll(async () => {
  t = await startTestSystem();
  feed = contentFeed(t);
  org = await orgIdOf(t);
  admin = await logIn(t, 'admin@example.com', 'development-password');
  folderA = await folder('Research');
  folderA1 = await folder('Trials', folderA);
  folderB = await folder('Finance');
  inA1 = await feed.put(org, {
    title: 'Vitamin D trial',
    parent_id: folderA1,
    tags: ['clinical'],
    chunks: ['Vitamin D supplementation reduced fracture risk in adults over sixty. The trial enrolled 2,000 participants.'],
  });
  inB = await feed.put(org, {
    title: 'Budget memo',
    parent_id: folderB,
    chunks: ['Vitamin D supplements were the largest line item of the wellness budget.'],
  });
  atRoot = await feed.put(org, { title: 'Loose note', chunks: ['Vitamin D levels were measured in winter.'] });
  await eventually(async () => assert.equal((await t.api('POST', '/org/search', { body: { query: 'vitamin' } })).body.total_results, 3));
});
afterAll(async () => {
  await feed.close();
  await t.stop();
});

const ids = (chunks: { content_id: string }[]) => chunks.map((c) => c.content_id).sort();

describe('POST /org/search', () => {
  it('returns an answer, its context chunks and the matching source ids', async () => {
    const res = await t.api('POST', '/org/search', { body: { query: 'Does vitamin D reduce fracture risk?' } });
    assert.equal(res.status, 200, res.text);
    const b = res.body;
    assert.match(b.answer, /Vitamin D supplementation reduced fracture risk in adults over sixty\. \[1\]/);
    assert.equal(b.answered, true);
    assert.equal(b.context[0].content_id, inA1.content_id);
    assert.deepEqual(b.source_ids, [...new Set(b.context.map((c: { content_id: string }) => c.content_id))]);
    assert.equal(b.citations[0].content_id, inA1.content_id);
    assert.equal(b.max_results, 5);
    assert.ok(b.processing_time_ms >= 1);
    assert.match(b.query_id, /^[0-9a-f-]{36}$/);
  });

  it('filters by folder (its whole subtree) and by filter_tags, by name or id', async () => {
    const inA = await t.api('POST', '/org/search', { body: { query: 'vitamin', folder_ids: [folderA] } });
    assert.deepEqual(ids(inA.body.context), [inA1.content_id]);
    const tagged = await t.api('POST', '/org/search', { body: { query: 'vitamin', filter_tags: ['clinical'] } });
    assert.deepEqual(ids(tagged.body.context), [inA1.content_id]);
    const tagId = tagged.body.tags[0];
    const byId = await t.api('POST', '/org/search', { body: { query: 'vitamin', filter_tags: [tagId] } });
    assert.deepEqual(ids(byId.body.context), [inA1.content_id]);
    const unknownTag = await t.api('POST', '/org/search', { body: { query: 'vitamin', filter_tags: ['no-such-tag-yet'] } });
    assert.equal(unknownTag.body.total_results, 0);
    const all = await t.api('GET', '/org/tags?limit=100');
    assert.ok(!all.body.some((x: { name: string }) => x.name === 'no-such-tag-yet'), 'a filter never creates a tag');
    assert.equal((await t.api('POST', '/org/search', { body: { query: 'vitamin', folder_ids: [randomUUID()] } })).status, 404);
  });

  it('applies tags to the recorded query without filtering retrieval: a query tagged with a new name finds everything (spec 2.8)', async () => {
    const res = await t.api('POST', '/org/search', { body: { query: 'vitamin', tags: ['Brand new label'] } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.total_results, 3);
    const one = await t.api('GET', `/org/search/queries/${res.body.query_id}`);
    assert.ok(one.body.tags.some((x: { name: string }) => x.name === 'Brand new label'));
    // Both at once: applied and filtered apart.
    const both = await t.api('POST', '/org/search', { body: { query: 'vitamin', tags: ['Applied only'], filter_tags: ['clinical'] } });
    assert.deepEqual(ids(both.body.context), [inA1.content_id]);
    const rec = await t.api('GET', `/org/search/queries/${both.body.query_id}`);
    assert.deepEqual(rec.body.tags.map((x: { name: string }) => x.name).sort(), ['Applied only', 'clinical']);
  });

  it('records each query, tagged with the request tags and the tags of the cited sources (spec 2.8)', async () => {
    const res = await t.api('POST', '/org/search', { body: { query: 'fracture risk trial', tags: ['clinical', 'Q3 review'] } });
    assert.equal(res.status, 200);
    const tagNames = async (tagIds: string[]) => {
      const all = await t.api('GET', '/org/tags?limit=100');
      return all.body
        .filter((x: { tag_id: string }) => tagIds.includes(x.tag_id))
        .map((x: { name: string }) => x.name)
        .sort();
    };
    assert.deepEqual(await tagNames(res.body.tags), ['Q3 review', 'clinical']);
    const one = await t.api('GET', `/org/search/queries/${res.body.query_id}`);
    assert.equal(one.status, 200);
    assert.equal(one.body.query, 'fracture risk trial');
    assert.deepEqual(one.body.source_ids, res.body.source_ids);
    assert.deepEqual(one.body.tags.map((x: { name: string }) => x.name).sort(), ['Q3 review', 'clinical']);
    // An untagged query on a tagged source still gets the source's tag.
    const auto = await t.api('POST', '/org/search', { body: { query: 'vitamin D fracture participants' } });
    assert.deepEqual(await tagNames(auto.body.tags), ['clinical']);

    const list = await t.api('GET', '/org/search/queries?limit=2');
    assert.equal(list.status, 200);
    assert.equal(list.body.length, 2);
    assert.equal(list.body[0].query_id, auto.body.query_id, 'newest first');
    assert.ok(Number(list.headers.get('x-total-count')) >= 3);
    // /search (the category/topic API) is not listed among the organization's recorded queries.
    const sdk = await t.api('POST', '/search', { body: { query: 'vitamin asked on the sdk surface' } });
    assert.equal(sdk.status, 200);
    const recorded = (await t.api('GET', '/org/search/queries?limit=100')).body.map((q: { query: string }) => q.query);
    assert.ok(recorded.includes('fracture risk trial'));
    assert.ok(!recorded.includes('vitamin asked on the sdk surface'));
  });

  it('answers 400 for bad bodies and pages, 404 for an unknown or malformed query id, 401 without a key', async () => {
    for (const body of [
      {},
      { query: '' },
      { query: 'x', max_results: 0 },
      { query: 'x', org_id: org },
      { query: 'x', tags: [''] },
      { query: 'x', folder_ids: ['x'] },
    ]) {
      assert.equal((await t.api('POST', '/org/search', { body })).status, 400, JSON.stringify(body));
    }
    for (const q of ['limit=0', 'limit=101', 'offset=-1', 'sort=at'])
      assert.equal((await t.api('GET', `/org/search/queries?${q}`)).status, 400, q);
    assert.equal((await t.api('GET', `/org/search/queries/${randomUUID()}`)).status, 404);
    assert.equal((await t.api('GET', '/org/search/queries/not-a-uuid')).status, 400);
    assert.equal((await t.api('POST', '/org/search', { key: null, body: { query: 'x' } })).status, 401);
    assert.equal((await t.api('GET', '/org/search/queries', { key: null })).status, 401);
  });
});

describe('folder-scoped keys and other organizations', () => {
  it('a folder-scoped key sees only its folders, in results, answers and counts, on both surfaces', async () => {
    const { key } = await newApiKey(admin, { name: 'Research only', folder_scope: [folderA] });
    for (const path of ['/search', '/org/search']) {
      const res = await t.api('POST', path, { key, body: { query: 'vitamin D supplements budget winter' } });
      assert.equal(res.status, 200, res.text);
      const chunks = res.body.results ?? res.body.context;
      assert.deepEqual(ids(chunks), [inA1.content_id], path);
      assert.equal(res.body.total_results, 1, path);
      assert.ok(!res.body.answer.includes('budget'), path);
      assert.ok(!res.body.answer.includes('winter'), path);
    }
    // The unrestricted key sees all three.
    assert.equal((await t.api('POST', '/search', { body: { query: 'vitamin D supplements budget winter' } })).body.total_results, 3);
    // A folder filter outside the scope is 403.
    const outside = await t.api('POST', '/org/search', { key, body: { query: 'vitamin', folder_ids: [folderB] } });
    assert.equal(outside.status, 403);
    assert.ok(atRoot.content_id && inB.content_id);
  });

  it('recorded queries follow the folder scope as content does: only searches made inside the reader’s scope', async () => {
    const keyA = (await newApiKey(admin, { name: 'Log reader A', folder_scope: [folderA] })).key;
    const keyA1 = (await newApiKey(admin, { name: 'Log reader A1', folder_scope: [folderA1] })).key;
    const keyB = (await newApiKey(admin, { name: 'Log reader B', folder_scope: [folderB] })).key;
    const none = (await newApiKey(admin, { name: 'Log reader none', folder_scope: [] })).key;
    const search = async (key: string | undefined, query: string) => {
      const res = await t.api('POST', '/org/search', { ...(key && { key }), body: { query } });
      assert.equal(res.status, 200, res.text);
      return res.body.query_id as string;
    };
    const whole = await search(undefined, 'scoped logs vitamin everywhere');
    const inA1q = await search(keyA1, 'scoped logs vitamin trial');
    const inBq = await search(keyB, 'scoped logs vitamin budget');
    const listed = async (key?: string) => {
      const res = await t.api('GET', '/org/search/queries?limit=100', { ...(key && { key }) });
      assert.equal(res.status, 200, res.text);
      return (res.body as { query_id: string; query: string; source_ids: string[] }[]).filter((q) => q.query.startsWith('scoped logs'));
    };
    assert.deepEqual(
      (await listed(keyA)).map((q) => q.query_id),
      [inA1q],
      'A sees the search made inside A1, not the whole-KB one nor B’s',
    );
    assert.deepEqual(
      (await listed(keyA1)).map((q) => q.query_id),
      [inA1q],
    );
    assert.deepEqual(
      (await listed(keyB)).map((q) => q.query_id),
      [inBq],
    );
    assert.deepEqual((await listed()).map((q) => q.query_id).sort(), [whole, inA1q, inBq].sort(), 'an unrestricted key sees all');
    for (const source of (await listed(keyA))[0]!.source_ids) assert.equal(source, inA1.content_id);
    const page = await t.api('GET', '/org/search/queries?limit=1', { key: keyB });
    assert.equal(page.headers.get('x-total-count'), '1', 'the total counts only what the reader may see');

    assert.equal((await t.api('GET', `/org/search/queries/${inA1q}`, { key: keyA })).status, 200);
    for (const id of [whole, inBq]) assert.equal((await t.api('GET', `/org/search/queries/${id}`, { key: keyA })).status, 404, id);
    assert.equal((await t.api('GET', '/org/search/queries', { key: none })).status, 403);
    assert.equal((await t.api('GET', `/org/search/queries/${inA1q}`, { key: none })).status, 403);
  });

  it('a key with an empty scope gets 403 on search', async () => {
    const { key } = await newApiKey(admin, { name: 'No folders', folder_scope: [] });
    assert.equal((await t.api('POST', '/search', { key, body: { query: 'vitamin' } })).status, 403);
    assert.equal((await t.api('POST', '/org/search', { key, body: { query: 'vitamin' } })).status, 403);
  });

  it('another organization sees none of it, and its recorded queries are 404 here', async () => {
    const other = await newOrgAdmin(t, 'search-other');
    await other.call('POST', '/org/credits/grants', { amount: 10 });
    const res = await other.call('POST', '/org/search', { query: 'vitamin' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.total_results, 0);
    assert.equal((await other.call('POST', '/search', { query: 'vitamin', org_id: org })).status, 404);
    assert.equal((await t.api('GET', `/org/search/queries/${res.body.query_id}`)).status, 404);
  });

  it('is 402 when the organization is out of credits, on both surfaces', async () => {
    const broke = await newOrgAdmin(t, 'search-broke');
    assert.equal((await broke.call('POST', '/search', { query: 'vitamin' })).status, 402);
    assert.equal((await broke.call('POST', '/org/search', { query: 'vitamin' })).status, 402);
    const { key } = await newApiKey(broke, { name: 'Broke key' });
    assert.equal((await t.api('POST', '/search', { key, body: { query: 'vitamin' } })).status, 402);
  });

  it('follows folder moves: content moved into a key’s folders becomes visible to it', async () => {
    const x = await folder('Moving folder');
    const y = await folder('Destination');
    const moved = await feed.put(org, { title: 'Relocated memo', parent_id: x, chunks: ['The zeppelin hangar lease ends in June.'] });
    await eventually(async () =>
      assert.equal((await t.api('POST', '/search', { body: { query: 'zeppelin hangar' } })).body.total_results, 1),
    );
    const { key } = await newApiKey(admin, { name: 'Destination only', folder_scope: [y] });
    assert.equal((await t.api('POST', '/search', { key, body: { query: 'zeppelin hangar' } })).body.total_results, 0);
    const move = await t.api('PATCH', `/org/kb/nodes/${x}`, { body: { parent_id: y } });
    assert.equal(move.status, 200, move.text);
    await eventually(async () => {
      const res = await t.api('POST', '/search', { key, body: { query: 'zeppelin hangar' } });
      assert.deepEqual(
        res.body.results.map((r: { content_id: string }) => r.content_id),
        [moved.content_id],
      );
    });
  });
});
