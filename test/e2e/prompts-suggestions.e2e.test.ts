import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { startTestSystem, type TestSystem } from './harness.js';
import { logIn, newApiKey, newOrgAdmin } from './identity-fixtures.js';
import { contentFeed, eventually, orgIdOf } from './search-fixtures.js';

const PER_MINUTE = 4;
let t: TestSystem;
let feed: ReturnType<typeof contentFeed>;
let leave: string;

beforeAll(async () => {
  t = await startTestSystem({ PROMPT_SUGGESTIONS_PER_MINUTE: String(PER_MINUTE) });
  feed = contentFeed(t);
  const org = await orgIdOf(t);
  const cat = await t.api('POST', '/categories', { body: { name: 'Benefits' } });
  await t.api('POST', `/categories/${cat.body.category_id}/topics`, { body: { name: 'Parental leave' } });
  await t.api('POST', '/categories', { body: { name: 'Astronomy' } }); // nothing in the KB about it
  leave = (
    await feed.put(org, {
      title: 'Leave handbook',
      chunks: ['Parental leave lasts sixteen weeks at full pay. Benefits start on the first day of employment.'],
    })
  ).content_id;
  await eventually(async () => assert.equal((await t.api('POST', '/search', { body: { query: 'parental leave' } })).body.total_results, 1));
});
/** A new organization whose admin can search (50 credits). */
async function orgWithCredits(name: string) {
  const admin = await newOrgAdmin(t, name);
  assert.equal((await admin.call('POST', '/org/credits/grants', { amount: 50 })).status < 300, true);
  return admin;
}

afterAll(async () => {
  await feed?.close();
  await t?.stop();
});

describe('POST /org/prompts/suggestions', () => {
  it('proposes questions the knowledge base answers, with their sources, and not existing prompts', async () => {
    const res = await t.api('POST', '/org/prompts/suggestions', { body: { count: 10 } });
    assert.equal(res.status, 200, res.text);
    const s = res.body.suggestions as {
      name: string;
      text: string;
      source: { type: string; name: string };
      supporting_content_ids: string[];
      confidence: number;
    }[];
    const texts = s.map((x) => x.text);
    assert.ok(texts.includes('What should we know about Parental leave in Benefits?'), texts.join(' | '));
    assert.ok(texts.includes('What does Leave handbook say?'), texts.join(' | '));
    assert.ok(!texts.some((x) => x.includes('Astronomy')), 'nothing in the KB answers it');
    for (const x of s) {
      assert.deepEqual(x.supporting_content_ids, [leave]);
      assert.ok(x.confidence > 0 && x.confidence <= 1);
      assert.equal(x.name, x.text);
    }
    // Once a suggestion is a prompt, it is not proposed again.
    assert.equal(
      (await t.api('POST', '/org/prompts', { body: { name: 'Leave', text: 'What should we know about Parental leave in Benefits?' } }))
        .status,
      201,
    );
    const again = await t.api('POST', '/org/prompts/suggestions', { body: {} });
    assert.equal(again.status, 200);
    assert.ok(!again.body.suggestions.some((x: { text: string }) => x.text === 'What should we know about Parental leave in Benefits?'));
    assert.ok(again.body.suggestions.length <= 5, 'default count 5');
  });

  it('answers 400 for a bad count, 401 without a key, 403 for a key with no folders, and an empty list for an empty KB', async () => {
    for (const body of [{ count: 0 }, { count: 21 }, { count: 'x' }, { other: 1 }]) {
      assert.equal((await t.api('POST', '/org/prompts/suggestions', { body })).status, 400, JSON.stringify(body));
    }
    assert.equal((await t.api('POST', '/org/prompts/suggestions', { key: null, body: {} })).status, 401);
    const admin = await logIn(t, 'admin@example.com', 'development-password');
    const { key } = await newApiKey(admin, { name: 'Nothing', folder_scope: [] });
    assert.equal((await t.api('POST', '/org/prompts/suggestions', { key, body: {} })).status, 403);
    const other = await newOrgAdmin(t, 'suggest-empty');
    const empty = await other.call('POST', '/org/prompts/suggestions', {});
    assert.equal(empty.status, 200);
    assert.deepEqual(empty.body.suggestions, []);
  });

  it('never proposes the same question twice in one answer (two items with one title)', async () => {
    const admin = await orgWithCredits('suggest-twins');
    const a = await feed.put(admin.org_id, {
      title: 'Greenhouse guide',
      chunks: ['Tomatoes in the greenhouse need watering twice a day.'],
    });
    const b = await feed.put(admin.org_id, {
      title: 'Greenhouse guide',
      chunks: ['Greenhouse vents open automatically above thirty degrees.'],
    });
    await eventually(async () => assert.equal((await admin.call('POST', '/search', { query: 'greenhouse' })).body.total_results, 2));
    const res = await admin.call('POST', '/org/prompts/suggestions', { count: 20 });
    assert.equal(res.status, 200, res.text);
    const texts = (res.body.suggestions as { text: string; supporting_content_ids: string[] }[]).map((x) => x.text);
    assert.deepEqual(texts, ['What does Greenhouse guide say?']);
    assert.ok([a.content_id, b.content_id].includes(res.body.suggestions[0].supporting_content_ids[0]));
  });

  it('names an uploaded file by its top heading, not its file name', async () => {
    const admin = await orgWithCredits('suggest-files');
    const file = await feed.put(admin.org_id, {
      title: 'panel-care.pdf',
      chunks: ['Solar Panel Maintenance Guide\nClean the panels every three months with soft water.'],
      headings: [['Solar Panel Maintenance Guide']],
    });
    const plain = await feed.put(admin.org_id, { title: 'prices.csv', chunks: ['product: Inverter 5kW; price: 899; currency: EUR'] });
    await eventually(async () => assert.equal((await admin.call('POST', '/search', { query: 'panels inverter' })).body.total_results, 2));
    const res = await admin.call('POST', '/org/prompts/suggestions', { count: 20 });
    assert.equal(res.status, 200, res.text);
    const s = res.body.suggestions as { name: string; text: string; source: { type: string; id: string; name: string } }[];
    const byContent = new Map(s.map((x) => [x.source.id, x]));
    assert.equal(byContent.get(file.content_id)?.text, 'What should we know about Solar Panel Maintenance Guide?', JSON.stringify(s));
    assert.equal(byContent.get(file.content_id)?.name, 'What should we know about Solar Panel Maintenance Guide?');
    assert.deepEqual(byContent.get(file.content_id)?.source, { type: 'content', id: file.content_id, name: 'panel-care.pdf' });
    // A file without headings keeps its name.
    assert.equal(byContent.get(plain.content_id)?.text, 'What does prices.csv say?', JSON.stringify(s));
  });

  it('has its own rate limit per organization: 429 with Retry-After, other organizations unaffected', async () => {
    const admin = await newOrgAdmin(t, 'suggest-limit');
    for (let i = 0; i < PER_MINUTE; i++) assert.equal((await admin.call('POST', '/org/prompts/suggestions', {})).status, 200);
    const limited = await admin.call('POST', '/org/prompts/suggestions', {});
    assert.equal(limited.status, 429);
    const retry = Number(limited.headers.get('retry-after'));
    assert.ok(retry >= 1 && retry <= 60, String(retry));
    const other = await newOrgAdmin(t, 'suggest-limit-other');
    assert.equal((await other.call('POST', '/org/prompts/suggestions', {})).status, 200);
    // The rest of the API is not limited.
    assert.equal((await admin.call('GET', '/org/prompts')).status, 200);
  });
});
