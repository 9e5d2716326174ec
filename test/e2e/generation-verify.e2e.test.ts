import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestSystem, type TestSystem } from './harness.js';
import { logIn, newApiKey, newOrgAdmin, type SignedIn } from './identity-fixtures.js';
import { SOURCES, addSource, waitForRun, waitIndexed } from './generation-helpers.js';

/**
 * POST /org/content/verify (issue 9 item 4) and the credit and folder-scope
 * rules of generation: a pasted paragraph with one altered number is flagged,
 * a folder-scoped key checks only against its folders, 402 before any work.
 */

let t: TestSystem;
let admin: SignedIn;
let folderA: string;
let folderB: string;
let contentTypeId: string;
let solarId: string;

beforeAll(async () => {
  t = await startTestSystem();
  admin = await logIn(t, 'admin@example.com', 'development-password');
  const mk = async (name: string) => {
    const res = await t.api('POST', '/org/kb/folders', { body: { name } });
    assert.equal(res.status, 201, res.text);
    return res.body.kb_node_id as string;
  };
  folderA = await mk('Energy');
  folderB = await mk('Elsewhere');
  const solar = await addSource(t, 'Solar panels', SOURCES.solar, { parent_id: folderA });
  await waitIndexed(t, 'monocrystalline solar panels sunlight', solar.id);
  solarId = solar.id;
  const type = await t.api('POST', '/org/content-types', { body: { name: 'Note', config: { sections: [{ title: 'Solar panels' }] } } });
  assert.equal(type.status, 201, type.text);
  contentTypeId = type.body.content_type_id;
});
afterAll(() => t.stop());

const PARAGRAPH =
  'Monocrystalline solar panels convert about 22 percent of sunlight into electricity. ' +
  'Polycrystalline panels reach about 71 percent efficiency at a lower price. ' +
  'Panel output increases as the cell temperature rises above 25 degrees Celsius. ' +
  'Read on.';

describe('POST /org/content/verify', () => {
  it('keeps the copied sentence, flags the altered number and the flipped direction, with offsets and support', async () => {
    const res = await t.api('POST', '/org/content/verify', { body: { text: PARAGRAPH } });
    assert.equal(res.status, 200, res.text);
    const [copied, number, direction, filler] = res.body.sentences;
    assert.equal(res.body.sentences.length, 4);
    for (const s of res.body.sentences) assert.equal(PARAGRAPH.slice(s.start, s.end).trim().startsWith(s.text.slice(0, 10)), true, s.text);
    assert.equal(copied.verdict, 'supported');
    assert.ok(copied.support[0].quote.includes('22 percent'));
    assert.match(copied.support[0].chunk_id, new RegExp(`^${copied.support[0].version_id}:\\d+$`));
    assert.notEqual(number.verdict, 'supported');
    assert.ok(number.reason, 'says why');
    assert.notEqual(direction.verdict, 'supported');
    assert.equal(filler.verdict, 'not_factual');
    assert.deepEqual(res.body.totals, { sentences: 4, factual: 3, supported: 1, unsupported: 2 });
    assert.equal(res.body.supported_ratio.display, '33.3%');
  });

  it('checks only against the folders asked for and the key’s folder scope', async () => {
    const inB = await t.api('POST', '/org/content/verify', { body: { text: PARAGRAPH.split('. ')[0] + '.', folder_ids: [folderB] } });
    assert.equal(inB.status, 200, inB.text);
    assert.equal(inB.body.sentences[0].verdict, 'unsupported');
    const { key } = await newApiKey(admin, { name: 'B only', folder_scope: [folderB] });
    const scoped = await t.api('POST', '/org/content/verify', { key, body: { text: PARAGRAPH.split('. ')[0] + '.' } });
    assert.equal(scoped.status, 200, scoped.text);
    assert.equal(scoped.body.sentences[0].verdict, 'unsupported', 'the source outside the key’s folders does not count');
    assert.equal((await t.api('POST', '/org/content/verify', { key, body: { text: 'x y z.', folder_ids: [folderA] } })).status, 403);
    const none = await newApiKey(admin, { name: 'No KB', folder_scope: [] });
    assert.equal((await t.api('POST', '/org/content/verify', { key: none.key, body: { text: 'Something.' } })).status, 403);
  });

  it('400 on an empty or oversized text and unknown fields; 404 for an unknown folder; 401 without a key', async () => {
    assert.equal((await t.api('POST', '/org/content/verify', { body: { text: '   ' } })).status, 400);
    assert.equal((await t.api('POST', '/org/content/verify', { body: {} })).status, 400);
    assert.equal((await t.api('POST', '/org/content/verify', { body: { text: 'x'.repeat(20001) } })).status, 400);
    assert.equal((await t.api('POST', '/org/content/verify', { body: { text: 'A.', strict: true } })).status, 400);
    assert.equal((await t.api('POST', '/org/content/verify', { body: { text: 'A b c.', folder_ids: [randomUUID()] } })).status, 404);
    assert.equal((await t.api('POST', '/org/content/verify', { key: null, body: { text: 'A.' } })).status, 401);
  });

  it('costs one query credit: 402 with no credits', async () => {
    const other = await newOrgAdmin(t, 'verify-poor');
    const res = await other.call('POST', '/org/content/verify', { text: 'Solar panels last 25 years.' });
    assert.equal(res.status, 402, res.text);
    await other.call('POST', '/org/credits/grants', { amount: 1 });
    assert.equal((await other.call('POST', '/org/content/verify', { text: 'Solar panels last 25 years.' })).status, 200);
    const usage = (await other.call('GET', '/org/credits/usage')).body;
    assert.deepEqual(
      usage.map((e: { operation: string; amount: number }) => [e.operation, e.amount]),
      [
        ['query', -1],
        ['grant', 1],
      ],
    );
  });
});

describe('generation runs: credits and folder scope', () => {
  it('402 before any work when credits do not cover the run; charged once it runs', async () => {
    const other = await newOrgAdmin(t, 'gen-poor');
    const type = await other.call('POST', '/org/content-types', { name: 'Note' });
    assert.equal(type.status, 201);
    const denied = await other.call('POST', '/org/generation/runs', { content_type_id: type.body.content_type_id });
    assert.equal(denied.status, 402, denied.text);
    assert.equal((await other.call('GET', '/org/generation/runs')).headers.get('x-total-count'), '0', 'no run was started');
    await other.call('POST', '/org/credits/grants', { amount: 10 });
    const ok = await other.call('POST', '/org/generation/runs', { content_type_id: type.body.content_type_id });
    assert.equal(ok.status, 202, ok.text);
    const balance = (await other.call('GET', '/org/credits/balance')).body;
    assert.equal(balance.balance, 0);
  });

  it('a folder-scoped key draws only on its folders: 403 on another folder, and its runs never cite outside', async () => {
    const { key } = await newApiKey(admin, { name: 'B writer', folder_scope: [folderB] });
    const outside = await t.api('POST', '/org/generation/runs', {
      key,
      body: { content_type_id: contentTypeId, scope: { folder_ids: [folderA] } },
    });
    assert.equal(outside.status, 403, outside.text);
    const run = await t.api('POST', '/org/generation/runs', {
      key,
      body: { content_type_id: contentTypeId, instructions: 'solar panels efficiency' },
    });
    assert.equal(run.status, 202, run.text);
    const done = await waitForRun(t, run.body.run_id);
    assert.equal(done.state, 'failed', 'the only source is outside the key’s folders');
    const unscoped = await t.api('POST', '/org/generation/runs', {
      body: { content_type_id: contentTypeId, instructions: 'solar panels efficiency', scope: { folder_ids: [folderA] } },
    });
    assert.equal(unscoped.status, 202);
    const completed = await waitForRun(t, unscoped.body.run_id);
    assert.equal(completed.state, 'completed', completed.reason);
    const draft = (await t.api('GET', `/org/generation/drafts/${completed.draft_id}`)).body;
    assert.deepEqual(draft.source_folder_ids, [folderA]);
  });
});

describe('POST /generate (category/topic API)', () => {
  it('summarises content items: lead sentences, each supported and cited to its chunk', async () => {
    const res = await t.api('POST', '/generate', { body: { type: 'summary', content_ids: [solarId], max_sentences: 2 } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.grounded, true);
    assert.equal(res.body.sentences.length, 2);
    assert.match(res.body.sentences[0].text, /22 percent/);
    for (const s of res.body.sentences) {
      assert.equal(s.verdict, 'supported');
      assert.equal(s.citations[0].content_id, solarId);
    }
    assert.match(res.body.text, /\[1\]/);
    assert.equal(res.body.citations[0].n, 1);
  });

  it('replies to a question from the knowledge base with citations, or says it has nothing', async () => {
    const res = await t.api('POST', '/generate', { body: { type: 'reply', question: 'How long are solar panels warranted?' } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.grounded, true);
    assert.ok(
      res.body.sentences.some((s: any) => /25 years/.test(s.text)),
      res.body.text,
    );
    assert.ok(res.body.sentences.every((s: any) => s.verdict === 'supported' && s.citations.length > 0));
    const none = await t.api('POST', '/generate', { body: { type: 'reply', question: 'Who painted the Sistine chapel ceiling?' } });
    assert.equal(none.status, 200);
    assert.equal(none.body.grounded, false);
    assert.deepEqual(none.body.sentences, []);
  });

  it('400 on a missing question or content_ids and unknown fields; 404 for an unknown item; 401; 402 without credits', async () => {
    assert.equal((await t.api('POST', '/generate', { body: { type: 'reply' } })).status, 400);
    assert.equal((await t.api('POST', '/generate', { body: { type: 'summary' } })).status, 400);
    assert.equal((await t.api('POST', '/generate', { body: { type: 'poem', question: 'x' } })).status, 400);
    assert.equal((await t.api('POST', '/generate', { body: { type: 'reply', question: 'x', tone: 'warm' } })).status, 400);
    assert.equal((await t.api('POST', '/generate', { body: { type: 'summary', content_ids: [randomUUID()] } })).status, 404);
    assert.equal((await t.api('POST', '/generate', { key: null, body: { type: 'reply', question: 'x' } })).status, 401);
    const poor = await newOrgAdmin(t, 'generate-poor');
    assert.equal((await poor.call('POST', '/generate', { type: 'reply', question: 'solar panels?' })).status, 402);
  });

  it('a folder-scoped key cannot summarise an item outside its folders (403)', async () => {
    const { key } = await newApiKey(admin, { name: 'B reader', folder_scope: [folderB] });
    assert.equal((await t.api('POST', '/generate', { key, body: { type: 'summary', content_ids: [solarId] } })).status, 403);
  });
});
