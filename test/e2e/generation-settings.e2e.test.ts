import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestSystem, type TestSystem } from './harness.js';
import { newMember, newOrgAdmin } from './identity-fixtures.js';

/** Brand kit, content types and product lines (spec 2.8, 4.1; issue 9 item 1): closed key sets, CRUD, organization scope. */

let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem();
});
afterAll(() => t.stop());

describe('brand kit', () => {
  it('404 before it is set; PUT creates and replaces, GET reads, PATCH merges (null removes a key)', async () => {
    const admin = await newOrgAdmin(t, 'brand');
    assert.equal((await admin.call('GET', '/org/brand-kit')).status, 404);
    assert.equal((await admin.call('PATCH', '/org/brand-kit', { guidelines: { tone: 'warm' } })).status, 404);
    const guidelines = {
      voice: 'plain',
      tone: 'warm',
      persona: 'an engineer who explains',
      audience: 'homeowners',
      reading_level: 'grade 8',
      do_rules: ['use short sentences'],
      dont_rules: ['promise savings'],
      preferred_terms: [{ term: 'PV modules', instead_of: ['solar panels'] }],
      banned_terms: ['cheap'],
      formatting: { max_sentence_words: 30, heading_case: 'sentence', bullet_lists: false },
      example_passages: ['Our modules last.'],
    };
    const put = await admin.call('PUT', '/org/brand-kit', { name: 'House', guidelines });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.body.name, 'House');
    assert.deepEqual(put.body.guidelines, guidelines);
    assert.ok(put.body.created_at && put.body.updated_at);
    assert.deepEqual((await admin.call('GET', '/org/brand-kit')).body, put.body);

    const patched = await admin.call('PATCH', '/org/brand-kit', { guidelines: { tone: 'crisp', persona: null } });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.guidelines.tone, 'crisp');
    assert.equal(patched.body.guidelines.persona, undefined);
    assert.equal(patched.body.guidelines.voice, 'plain');
    assert.equal(patched.body.name, 'House');
    assert.equal(patched.body.created_at, put.body.created_at);

    const replaced = await admin.call('PUT', '/org/brand-kit', { guidelines: { voice: 'bold' } });
    assert.equal(replaced.status, 200);
    assert.deepEqual(replaced.body.guidelines, { voice: 'bold' });
  });

  it('400 naming an unknown key (top level, nested, in a PATCH) and on a wrong type; nothing changes', async () => {
    const admin = await newOrgAdmin(t, 'brand-bad');
    await admin.call('PUT', '/org/brand-kit', { guidelines: { voice: 'plain' } });
    for (const [method, body, key] of [
      ['PUT', { guidelines: { voice: 'x', colour: 'red' } }, 'colour'],
      ['PUT', { guidelines: { formatting: { font: 'serif' } } }, 'font'],
      ['PUT', { guidelines: { preferred_terms: [{ term: 'a', instead_of: [], note: 'n' }] } }, 'note'],
      ['PATCH', { guidelines: { mood: 'happy' } }, 'mood'],
      ['PUT', { guidelines: {}, extra: 1 }, 'extra'],
    ] as const) {
      const res = await admin.call(method, '/org/brand-kit', body);
      assert.equal(res.status, 400, `${method} ${JSON.stringify(body)}`);
      assert.match(res.body.error.message, new RegExp(key));
    }
    assert.equal((await admin.call('PUT', '/org/brand-kit', { guidelines: { banned_terms: 'cheap' } })).status, 400);
    assert.equal((await admin.call('PUT', '/org/brand-kit', { guidelines: { formatting: { max_sentence_words: 1 } } })).status, 400);
    assert.equal((await admin.call('PUT', '/org/brand-kit', {})).status, 400);
    assert.deepEqual((await admin.call('GET', '/org/brand-kit')).body.guidelines, { voice: 'plain' });
  });

  it('401 without a credential; 403 for a viewer writing (who may read)', async () => {
    assert.equal((await t.api('GET', '/org/brand-kit', { key: null })).status, 401);
    assert.equal((await t.api('PUT', '/org/brand-kit', { key: null, body: { guidelines: {} } })).status, 401);
    const admin = await newOrgAdmin(t, 'brand-roles');
    await admin.call('PUT', '/org/brand-kit', { guidelines: { voice: 'plain' } });
    const viewer = await newMember(t, admin, 'viewer');
    assert.equal((await viewer.call('GET', '/org/brand-kit')).status, 200);
    assert.equal((await viewer.call('PUT', '/org/brand-kit', { guidelines: {} })).status, 403);
    assert.equal((await viewer.call('PATCH', '/org/brand-kit', { guidelines: {} })).status, 403);
  });
});

describe('content types', () => {
  it('create (201, defaults filled), list (X-Total-Count), get, replace, delete (204, then 404)', async () => {
    const admin = await newOrgAdmin(t, 'types');
    const created = await admin.call('POST', '/org/content-types', { name: 'Blog post' });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.name, 'Blog post');
    assert.equal(created.body.description, '');
    assert.deepEqual(created.body.config, {
      kind: 'article',
      format: 'markdown',
      sections: [{ title: 'Overview' }],
      target_length: { min_words: 50, max_words: 600 },
      citation_style: 'numeric',
      unsupported_sentences: 'remove',
      auto_publish: false,
      publish_destination_ids: [],
    });
    const id = created.body.content_type_id;
    const hosted = (await admin.call('GET', '/org/destinations')).body.find((d: { type: string }) => d.type === 'hosted');
    const config = {
      kind: 'qa',
      format: 'html',
      sections: [{ title: 'Question', instructions: 'Restate it' }, { title: 'Answer' }],
      target_length: { min_words: 10, max_words: 120 },
      citation_style: 'none',
      unsupported_sentences: 'block',
      auto_publish: true,
      publish_destination_ids: [hosted.destination_id],
    };
    const second = await admin.call('POST', '/org/content-types', { name: 'FAQ', description: 'Q and A', config });
    assert.equal(second.status, 201, second.text);
    assert.deepEqual(second.body.config, config);

    const list = await admin.call('GET', '/org/content-types?limit=1');
    assert.equal(list.status, 200);
    assert.equal(list.headers.get('x-total-count'), '2');
    assert.deepEqual(
      list.body.map((c: any) => c.content_type_id),
      [id],
    );
    assert.deepEqual((await admin.call('GET', `/org/content-types/${id}`)).body, created.body);

    const replaced = await admin.call('PUT', `/org/content-types/${id}`, { name: 'Long read', config: { format: 'html' } });
    assert.equal(replaced.status, 200, replaced.text);
    assert.equal(replaced.body.name, 'Long read');
    assert.equal(replaced.body.config.format, 'html');
    assert.equal(replaced.body.created_at, created.body.created_at);

    assert.equal((await admin.call('DELETE', `/org/content-types/${id}`)).status, 204);
    assert.equal((await admin.call('GET', `/org/content-types/${id}`)).status, 404);
    assert.equal((await admin.call('DELETE', `/org/content-types/${id}`)).status, 404);
    assert.equal((await admin.call('PUT', `/org/content-types/${id}`, { name: 'x' })).status, 404);
  });

  it('400 naming an unknown config key, and on bad values; nothing is created', async () => {
    const admin = await newOrgAdmin(t, 'types-bad');
    for (const [config, key] of [
      [{ layout: 'grid' }, 'layout'],
      [{ sections: [{ title: 'A', words: 3 }] }, 'words'],
      [{ target_length: { max_words: 100, pages: 2 } }, 'pages'],
    ] as const) {
      const res = await admin.call('POST', '/org/content-types', { name: 'T', config });
      assert.equal(res.status, 400, JSON.stringify(config));
      assert.match(res.body.error.message, new RegExp(key));
    }
    for (const config of [
      { format: 'pdf' },
      { sections: [] },
      { unsupported_sentences: 'ignore' },
      { target_length: { min_words: 500, max_words: 100 } },
      { auto_publish: 'yes' },
    ]) {
      const res = await admin.call('POST', '/org/content-types', { name: 'T', config });
      assert.equal(res.status, 400, JSON.stringify(config));
    }
    assert.equal((await admin.call('POST', '/org/content-types', { name: '' })).status, 400);
    assert.equal((await admin.call('GET', '/org/content-types/not-a-uuid')).status, 400);
    assert.equal((await admin.call('GET', '/org/content-types')).headers.get('x-total-count'), '0');
  });

  it('auto-publish with nobody to publish to is 422 (no_publisher) on the content type, the run and the engine rule', async () => {
    const admin = await newOrgAdmin(t, 'auto-publish');
    const hosted = (await admin.call('GET', '/org/destinations')).body.find((d: { type: string }) => d.type === 'hosted');
    const auto = { auto_publish: true };
    const withDefault = await admin.call('POST', '/org/content-types', { name: 'Auto', config: auto });
    assert.equal(withDefault.status, 201, 'the default shared set publishes');
    const unknown = await admin.call('POST', '/org/content-types', {
      name: 'Unknown destination',
      config: { ...auto, publish_destination_ids: [randomUUID()] },
    });
    assert.equal(unknown.status, 404, unknown.text);

    assert.equal((await admin.call('PATCH', `/org/destinations/${hosted.destination_id}`, { enabled: false })).status, 200);
    const none = await admin.call('POST', '/org/content-types', { name: 'Nobody', config: auto });
    assert.equal(none.status, 422, none.text);
    assert.equal(none.body.error.code, 'no_publisher');
    const named = await admin.call('POST', '/org/content-types', {
      name: 'Named but off',
      config: { ...auto, publish_destination_ids: [hosted.destination_id] },
    });
    assert.equal(named.status, 422, 'a switched-off destination is not a publisher');
    assert.equal(named.body.error.code, 'destination_disabled');
    const replaced = await admin.call('PUT', `/org/content-types/${withDefault.body.content_type_id}`, { name: 'Auto', config: auto });
    assert.equal(replaced.status, 422, replaced.text);
    const manual = await admin.call('POST', '/org/content-types', { name: 'Manual', config: { auto_publish: false } });
    assert.equal(manual.status, 201, 'without auto-publish nothing is checked');

    const typeId = withDefault.body.content_type_id;
    await admin.call('POST', '/org/credits/grants', { amount: 100 });
    const run = await admin.call('POST', '/org/generation/runs', { content_type_id: typeId, instructions: 'Heat pumps in winter' });
    assert.equal(run.status, 422, run.text);
    assert.equal(run.body.error.code, 'no_publisher');
    const rule = await admin.call('POST', '/org/content-engine/rules', { name: 'Daily', content_type_id: typeId });
    assert.equal(rule.status, 422, rule.text);
    assert.equal((await admin.call('GET', '/org/generation/runs')).headers.get('x-total-count'), '0', 'no run was started');
    assert.equal((await admin.call('GET', '/org/credits/balance')).body.balance, 100, 'and nothing was charged');
    assert.equal((await admin.call('GET', '/org/content-engine/rules')).body.length, 0, 'no rule was created');

    assert.equal((await admin.call('PATCH', `/org/destinations/${hosted.destination_id}`, { enabled: true })).status, 200);
    const ok = await admin.call('POST', '/org/content-engine/rules', { name: 'Daily', content_type_id: typeId, enabled: false });
    assert.equal(ok.status, 201, ok.text);
  });

  it('another organization’s content type is 404; 401 without a credential; 403 for a viewer writing', async () => {
    const created = await t.api('POST', '/org/content-types', { body: { name: 'Mine' } });
    const other = await newOrgAdmin(t, 'types-other');
    assert.equal((await other.call('GET', `/org/content-types/${created.body.content_type_id}`)).status, 404);
    assert.equal((await other.call('DELETE', `/org/content-types/${created.body.content_type_id}`)).status, 404);
    assert.equal((await t.api('GET', '/org/content-types', { key: null })).status, 401);
    const viewer = await newMember(t, other, 'viewer');
    assert.equal((await viewer.call('GET', '/org/content-types')).status, 200);
    assert.equal((await viewer.call('POST', '/org/content-types', { name: 'V' })).status, 403);
  });
});

describe('product lines', () => {
  it('CRUD with an open details object', async () => {
    const admin = await newOrgAdmin(t, 'lines');
    const details = { sku_prefix: 'SOL', models: [{ name: 'S1', watts: 400 }], launched: true };
    const created = await admin.call('POST', '/org/product-lines', { name: 'Solar', details });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.body.details, details);
    const id = created.body.product_line_id;
    assert.deepEqual((await admin.call('GET', `/org/product-lines/${id}`)).body, created.body);
    const list = await admin.call('GET', '/org/product-lines');
    assert.equal(list.headers.get('x-total-count'), '1');
    const replaced = await admin.call('PUT', `/org/product-lines/${id}`, { name: 'Solar+', details: { tier: 'pro' } });
    assert.equal(replaced.status, 200);
    assert.deepEqual(replaced.body.details, { tier: 'pro' });
    assert.equal((await admin.call('DELETE', `/org/product-lines/${id}`)).status, 204);
    assert.equal((await admin.call('GET', `/org/product-lines/${id}`)).status, 404);
  });

  it('400 on bad bodies; 404 across organizations; 401; 403 for a viewer writing', async () => {
    const admin = await newOrgAdmin(t, 'lines-bad');
    assert.equal((await admin.call('POST', '/org/product-lines', { details: {} })).status, 400);
    assert.equal((await admin.call('POST', '/org/product-lines', { name: 'X', details: [1, 2] })).status, 400);
    assert.equal((await admin.call('POST', '/org/product-lines', { name: 'X', colour: 'red' })).status, 400);
    const created = await t.api('POST', '/org/product-lines', { body: { name: 'Mine' } });
    assert.equal((await admin.call('GET', `/org/product-lines/${created.body.product_line_id}`)).status, 404);
    assert.equal((await t.api('POST', '/org/product-lines', { key: null, body: { name: 'X' } })).status, 401);
    const viewer = await newMember(t, admin, 'viewer');
    assert.equal((await viewer.call('POST', '/org/product-lines', { name: 'V' })).status, 403);
  });
});
