import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestSystem, type TestSystem } from './harness.js';
import { newMember, newOrgAdmin } from './identity-fixtures.js';
import { SOURCES, addSource, waitIndexed } from './generation-helpers.js';

/** The builder (issue 9 item 6): outline, generate a section, edit by hand (re-verified), reorder, history. */

let t: TestSystem;
let contentTypeId: string;

beforeAll(async () => {
  t = await startTestSystem();
  const solar = await addSource(t, 'Solar panels', SOURCES.solar);
  const battery = await addSource(t, 'Home batteries', SOURCES.battery);
  await waitIndexed(t, 'monocrystalline solar panels sunlight', solar.id);
  await waitIndexed(t, 'home battery lithium charge cycles', battery.id);
  const type = await t.api('POST', '/org/content-types', {
    body: {
      name: 'Guide',
      config: { sections: [{ title: 'Solar panel efficiency' }, { title: 'Home battery storage' }], target_length: { max_words: 200 } },
    },
  });
  assert.equal(type.status, 201, type.text);
  contentTypeId = type.body.content_type_id;
});
afterAll(() => t.stop());

describe('builder', () => {
  it('outlines, generates a section, takes a hand edit (re-verified), reorders, and keeps every step in the history', async () => {
    const created = await t.api('POST', '/org/builder/pieces', { body: { content_type_id: contentTypeId, title: 'Solar at home' } });
    assert.equal(created.status, 201, created.text);
    const id = created.body.draft_id;
    assert.deepEqual(
      created.body.sections.map((s: any) => [s.section_id, s.title, s.sentences.length]),
      [
        ['s1', 'Solar panel efficiency', 0],
        ['s2', 'Home battery storage', 0],
      ],
    );

    const generated = await t.api('POST', `/org/builder/pieces/${id}/sections/s2/generate`, { body: {} });
    assert.equal(generated.status, 200, generated.text);
    const s2 = generated.body.sections[1];
    assert.ok(s2.sentences.length > 0);
    assert.ok(s2.sentences.every((s: any) => s.verdict === 'supported' && s.citations.length > 0));
    assert.match(generated.body.body, /## Home battery storage/);

    const edited = await t.api('PUT', `/org/builder/pieces/${id}/sections/s1`, {
      body: {
        text: 'Monocrystalline solar panels convert about 22 percent of sunlight into electricity. Monocrystalline solar panels convert about 40 percent of sunlight into electricity.',
      },
    });
    assert.equal(edited.status, 200, edited.text);
    const [kept, altered] = edited.body.sections[0].sentences;
    assert.equal(kept.verdict, 'supported');
    assert.ok(kept.citations[0].quote.includes('22 percent'));
    assert.notEqual(altered.verdict, 'supported');
    assert.equal(edited.body.verification, 'needs_review');
    assert.equal(edited.body.totals.unsupported, 1);

    const reordered = await t.api('POST', `/org/builder/pieces/${id}/reorder`, { body: { section_ids: ['s2', 's1'] } });
    assert.equal(reordered.status, 200, reordered.text);
    assert.deepEqual(
      reordered.body.sections.map((s: any) => s.section_id),
      ['s2', 's1'],
    );
    assert.ok(reordered.body.body.indexOf('Home battery') < reordered.body.body.indexOf('Solar panel efficiency'));
    assert.equal(reordered.body.revision, 4);

    const history = await t.api('GET', `/org/builder/pieces/${id}/history`);
    assert.equal(history.status, 200, history.text);
    assert.deepEqual(
      history.body.map((h: any) => [h.revision, h.change.kind, h.change.section_id ?? null]),
      [
        [1, 'outlined', null],
        [2, 'section_generated', 's2'],
        [3, 'section_edited', 's1'],
        [4, 'sections_reordered', null],
      ],
    );
    assert.ok(history.body.every((h: any) => h.actor));
  });

  it('400 on a bad reorder or edit; 404 for an unknown piece or section; 401; 403 for a viewer', async () => {
    const created = await t.api('POST', '/org/builder/pieces', { body: { content_type_id: contentTypeId } });
    const id = created.body.draft_id;
    assert.equal(created.body.title, 'Guide');
    assert.equal((await t.api('POST', `/org/builder/pieces/${id}/reorder`, { body: { section_ids: ['s1'] } })).status, 400);
    assert.equal((await t.api('POST', `/org/builder/pieces/${id}/reorder`, { body: { section_ids: ['s1', 's1'] } })).status, 400);
    assert.equal((await t.api('PUT', `/org/builder/pieces/${id}/sections/s1`, { body: {} })).status, 400);
    assert.equal((await t.api('PUT', `/org/builder/pieces/${id}/sections/s9`, { body: { text: 'x' } })).status, 404);
    assert.equal((await t.api('POST', `/org/builder/pieces/${randomUUID()}/sections/s1/generate`, { body: {} })).status, 404);
    assert.equal((await t.api('GET', `/org/builder/pieces/${randomUUID()}/history`)).status, 404);
    assert.equal((await t.api('POST', '/org/builder/pieces', { body: { content_type_id: randomUUID() } })).status, 404);
    assert.equal((await t.api('POST', '/org/builder/pieces', { body: {} })).status, 400);
    assert.equal((await t.api('POST', '/org/builder/pieces', { key: null, body: { content_type_id: contentTypeId } })).status, 401);
    const other = await newOrgAdmin(t, 'builder-other');
    assert.equal((await other.call('GET', `/org/builder/pieces/${id}/history`)).status, 404);
    const viewer = await newMember(t, other, 'viewer');
    assert.equal((await viewer.call('POST', '/org/builder/pieces', { content_type_id: contentTypeId })).status, 403);
    assert.equal(
      (await other.call('POST', `/org/builder/pieces/${id}/sections/s1/generate`, {})).status,
      402,
      'metered: no credits, no work',
    );
    await other.call('POST', '/org/credits/grants', { amount: 20 });
    assert.equal((await other.call('POST', `/org/builder/pieces/${id}/sections/s1/generate`, {})).status, 404);
  });
});
