import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestSystem, type TestSystem } from './harness.js';
import { newOrgAdmin } from './identity-fixtures.js';

let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem();
});
afterAll(async () => t?.stop());

const create = async (body: Record<string, unknown>) => {
  const res = await t.api('POST', '/org/prompts', { body });
  assert.equal(res.status, 201, res.text);
  return res.body;
};

describe('POST /org/prompts and /org/prompts/{prompt_id}', () => {
  it('creates a prompt with {{variables}} kept verbatim and listed, and tags applied on creation', async () => {
    const text = 'Compare {{product}} with {{ competitor }} for {{product}} buyers in {{region}}.';
    const p = await create({ name: '  Product comparison  ', text, tags: ['comparisons', 'Q3'] });
    assert.match(p.prompt_id, /^[0-9a-f-]{36}$/);
    assert.equal(p.name, 'Product comparison');
    assert.equal(p.text, text);
    assert.deepEqual(p.variables, ['product', 'competitor', 'region']);
    assert.deepEqual(p.tags.map((x: { name: string }) => x.name).sort(), ['Q3', 'comparisons']);
    assert.equal(p.deleted_at, null);
    assert.ok(Date.parse(p.created_at) && p.created_at === p.updated_at);
    // The tags exist in the organization now, and tag ids work as references.
    const byId = await create({ name: 'Tagged by id', text: 'Why {{x}}?', tags: [p.tags[0].tag_id] });
    assert.deepEqual(byId.tags, [p.tags[0]]);
    const got = await t.api('GET', `/org/prompts/${p.prompt_id}`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, p);
  });

  it('names are 2 to 255 characters and unique per organization, case-insensitively (409)', async () => {
    await create({ name: 'Unique name', text: 'a' });
    assert.equal((await t.api('POST', '/org/prompts', { body: { name: 'UNIQUE NAME', text: 'b' } })).status, 409);
    for (const body of [
      { name: 'x', text: 'a' },
      { name: 'y'.repeat(256), text: 'a' },
      { name: '   ', text: 'a' },
      { name: 'Ok name' },
      { text: 'a' },
      { name: 'Ok name', text: '' },
      { name: 'Ok name', text: 'a', extra: 1 },
    ]) {
      assert.equal((await t.api('POST', '/org/prompts', { body })).status, 400, JSON.stringify(body));
    }
    assert.equal((await t.api('POST', '/org/prompts', { body: { name: 'Unknown tag id', text: 'a', tags: [randomUUID()] } })).status, 404);
  });

  it('lists live prompts oldest first with limit, offset and X-Total-Count', async () => {
    const admin = await newOrgAdmin(t, 'prompts-list');
    for (const n of ['First prompt', 'Second prompt', 'Third prompt'])
      assert.equal((await admin.call('POST', '/org/prompts', { name: n, text: n })).status, 201);
    const page = await admin.call('GET', '/org/prompts?limit=2&offset=1');
    assert.equal(page.status, 200);
    assert.deepEqual(
      page.body.map((p: { name: string }) => p.name),
      ['Second prompt', 'Third prompt'],
    );
    assert.equal(page.headers.get('x-total-count'), '3');
    assert.equal((await admin.call('GET', '/org/prompts')).body.length, 3);
    for (const q of ['limit=0', 'limit=101', 'offset=-1', 'sort=name'])
      assert.equal((await admin.call('GET', `/org/prompts?${q}`)).status, 400, q);
  });

  it('PUT replaces name, text and tags; PATCH changes only what is sent', async () => {
    const p = await create({ name: 'Editable', text: 'Old {{a}}', tags: ['keep'] });
    const patched = await t.api('PATCH', `/org/prompts/${p.prompt_id}`, { body: { text: 'New {{b}}' } });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.name, 'Editable');
    assert.deepEqual(patched.body.variables, ['b']);
    assert.deepEqual(
      patched.body.tags.map((x: { name: string }) => x.name),
      ['keep'],
    );
    assert.ok(patched.body.updated_at >= p.updated_at);
    const put = await t.api('PUT', `/org/prompts/${p.prompt_id}`, { body: { name: 'Replaced', text: 'Whole {{c}}' } });
    assert.equal(put.status, 200);
    assert.deepEqual([put.body.name, put.body.text, put.body.tags], ['Replaced', 'Whole {{c}}', []]);
    await create({ name: 'Taken', text: 'x' });
    assert.equal((await t.api('PATCH', `/org/prompts/${p.prompt_id}`, { body: { name: 'taken' } })).status, 409);
    assert.equal((await t.api('PUT', `/org/prompts/${p.prompt_id}`, { body: { name: 'Taken', text: 'x' } })).status, 409);
    // Renaming to its own name in another case is fine.
    assert.equal((await t.api('PATCH', `/org/prompts/${p.prompt_id}`, { body: { name: 'REPLACED' } })).status, 200);
    assert.equal((await t.api('PATCH', `/org/prompts/${p.prompt_id}`, { body: {} })).status, 400);
    assert.equal((await t.api('PUT', `/org/prompts/${p.prompt_id}`, { body: { name: 'Only name' } })).status, 400);
    assert.equal((await t.api('PATCH', `/org/prompts/${randomUUID()}`, { body: { text: 'x' } })).status, 404);
    assert.equal((await t.api('PUT', `/org/prompts/${randomUUID()}`, { body: { name: 'Nope', text: 'x' } })).status, 404);
  });

  it('DELETE sets deleted_at (204), frees the name, and the prompt is gone (404)', async () => {
    const p = await create({ name: 'Short lived', text: 'x' });
    assert.equal((await t.api('DELETE', `/org/prompts/${p.prompt_id}`)).status, 204);
    assert.equal((await t.api('GET', `/org/prompts/${p.prompt_id}`)).status, 404);
    assert.equal((await t.api('DELETE', `/org/prompts/${p.prompt_id}`)).status, 404);
    assert.equal((await t.api('PATCH', `/org/prompts/${p.prompt_id}`, { body: { text: 'y' } })).status, 404);
    await create({ name: 'Short lived', text: 'again' });
  });

  it('another organization’s prompts are 404; bad ids 400; no key 401', async () => {
    const p = await create({ name: 'Private prompt', text: 'x' });
    const other = await newOrgAdmin(t, 'prompts-other');
    assert.equal((await other.call('GET', `/org/prompts/${p.prompt_id}`)).status, 404);
    assert.equal((await other.call('PATCH', `/org/prompts/${p.prompt_id}`, { text: 'stolen' })).status, 404);
    assert.equal((await other.call('DELETE', `/org/prompts/${p.prompt_id}`)).status, 404);
    assert.equal((await other.call('PUT', `/prompts/${p.prompt_id}`, { name: 'Stolen', text: 'x' })).status, 404);
    assert.ok(!(await other.call('GET', '/org/prompts')).body.some((x: { prompt_id: string }) => x.prompt_id === p.prompt_id));
    // The same name is free in another organization.
    assert.equal((await other.call('POST', '/org/prompts', { name: 'Private prompt', text: 'y' })).status, 201);
    assert.equal((await t.api('GET', '/org/prompts/not-a-uuid')).status, 400);
    assert.equal((await t.api('GET', '/org/prompts', { key: null })).status, 401);
    assert.equal((await t.api('POST', '/org/prompts', { key: null, body: { name: 'No key', text: 'x' } })).status, 401);
  });
});

describe('GET /prompts and PUT /prompts/{prompt_id} (category/topic API)', () => {
  it('lists prompts with the spec 2.4 fields and replaces name and text, keeping tags', async () => {
    const admin = await newOrgAdmin(t, 'sdk-prompts');
    const created = await admin.call('POST', '/org/prompts', { name: 'Sdk prompt', text: 'Hello {{name}}', tags: ['sdk'] });
    const list = await admin.call('GET', '/prompts?limit=1');
    assert.equal(list.status, 200);
    assert.equal(list.headers.get('x-total-count'), '1');
    const p = list.body[0];
    for (const f of ['prompt_id', 'name', 'text', 'created_at', 'updated_at', 'deleted_at']) assert.ok(f in p, f);
    assert.equal(p.deleted_at, null);
    const put = await admin.call('PUT', `/prompts/${p.prompt_id}`, { name: 'Sdk renamed', text: 'Bye {{name}}' });
    assert.equal(put.status, 200);
    assert.equal(put.body.name, 'Sdk renamed');
    assert.equal(put.body.text, 'Bye {{name}}');
    const org = await admin.call('GET', `/org/prompts/${created.body.prompt_id}`);
    assert.deepEqual(
      org.body.tags.map((x: { name: string }) => x.name),
      ['sdk'],
    );
    for (const body of [{ name: 'Only name' }, { text: 'only text' }, { name: 'x', text: 'y' }, { name: 'Ok', text: 'y', tags: [] }]) {
      assert.equal((await admin.call('PUT', `/prompts/${p.prompt_id}`, body)).status, 400, JSON.stringify(body));
    }
    await admin.call('POST', '/org/prompts', { name: 'Other sdk', text: 'z' });
    assert.equal((await admin.call('PUT', `/prompts/${p.prompt_id}`, { name: 'other SDK', text: 'y' })).status, 409);
    assert.equal((await admin.call('PUT', `/prompts/${randomUUID()}`, { name: 'Missing', text: 'y' })).status, 404);
    for (const q of ['limit=0', 'limit=101', 'offset=-1']) assert.equal((await admin.call('GET', `/prompts?${q}`)).status, 400, q);
    assert.equal((await t.api('GET', '/prompts', { key: null })).status, 401);
  });
});

describe('/org/questions (tag Questions)', () => {
  it('is a create/read/update/delete view of the same prompts', async () => {
    const admin = await newOrgAdmin(t, 'questions');
    const q = await admin.call('POST', '/org/questions', { question: 'What is   our refund policy for {{plan}}?' });
    assert.equal(q.status, 201, q.text);
    assert.equal(q.body.name, 'What is our refund policy for {{plan}}?');
    assert.equal(q.body.question, 'What is   our refund policy for {{plan}}?');
    assert.deepEqual(q.body.variables, ['plan']);
    const asPrompt = await admin.call('GET', `/org/prompts/${q.body.question_id}`);
    assert.equal(asPrompt.body.text, q.body.question);
    const named = await admin.call('POST', '/org/questions', { question: 'Who are we?', name: 'Identity' });
    assert.equal(named.body.name, 'Identity');
    assert.equal((await admin.call('POST', '/org/questions', { question: 'Another', name: 'identity' })).status, 409);
    const patched = await admin.call('PATCH', `/org/questions/${named.body.question_id}`, { question: 'Who are we, really?' });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.question, 'Who are we, really?');
    assert.equal(patched.body.name, 'Identity');
    const list = await admin.call('GET', '/org/questions');
    assert.equal(list.headers.get('x-total-count'), '2');
    assert.equal((await admin.call('DELETE', `/org/questions/${named.body.question_id}`)).status, 204);
    assert.equal((await admin.call('GET', `/org/questions/${named.body.question_id}`)).status, 404);
    assert.equal((await admin.call('PATCH', `/org/questions/${named.body.question_id}`, { name: 'Gone' })).status, 404);
    assert.equal((await admin.call('DELETE', `/org/questions/${named.body.question_id}`)).status, 404);
    for (const body of [{}, { question: '' }, { question: 'ok', name: 'x' }, { question: 'ok', extra: 1 }]) {
      assert.equal((await admin.call('POST', '/org/questions', body)).status, 400, JSON.stringify(body));
    }
    assert.equal((await admin.call('PATCH', `/org/questions/${q.body.question_id}`, {})).status, 400);
    assert.equal((await admin.call('GET', '/org/questions?limit=101')).status, 400);
    assert.equal((await t.api('GET', '/org/questions', { key: null })).status, 401);
    assert.equal((await t.api('GET', `/org/questions/${q.body.question_id}`)).status, 404, 'another organization');
  });
});
