import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestSystem, type TestSystem } from './harness.js';
import { logIn, newMember, newOrgAdmin } from './identity-fixtures.js';
import { SOURCES, addSource, eventually, waitForRun, waitIndexed } from './generation-helpers.js';

/** The content engine (issue 9 item 6): rules start runs by themselves, once per slot, honouring the runs switch. */

let t: TestSystem;
let contentTypeId: string;
let taggedPrompt: string;
let otherPrompt: string;
let tagId: string;

beforeAll(async () => {
  t = await startTestSystem({ CONTENT_ENGINE_TICK_MS: '200' });
  const solar = await addSource(t, 'Solar panels', SOURCES.solar);
  await waitIndexed(t, 'monocrystalline solar panels sunlight', solar.id);
  const type = await t.api('POST', '/org/content-types', { body: { name: 'Answer page', config: { sections: [{ title: 'Answer' }] } } });
  contentTypeId = type.body.content_type_id;
  const p1 = await t.api('POST', '/org/prompts', {
    body: { name: 'Efficiency', text: 'How efficient are solar panels?', tags: ['engine'] },
  });
  assert.equal(p1.status, 201, p1.text);
  taggedPrompt = p1.body.prompt_id;
  tagId = p1.body.tags[0].tag_id;
  const p2 = await t.api('POST', '/org/prompts', { body: { name: 'Other', text: 'How long do solar panels last?' } });
  otherPrompt = p2.body.prompt_id;
});
afterAll(() => t.stop());

describe('content engine rules', () => {
  it('a rule for a tag starts one run per tagged prompt for the current slot, never twice, and the runs complete', async () => {
    // The prompts reach generation through the bus.
    await new Promise((r) => setTimeout(r, 500));
    const created = await t.api('POST', '/org/content-engine/rules', {
      body: { name: 'Tagged answers', content_type_id: contentTypeId, prompt_tag_id: tagId, cadence: 'weekly' },
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.enabled, true);
    const ruleId = created.body.rule_id;
    const fired = await eventually(async () => {
      const r = (await t.api('GET', `/org/content-engine/rules/${ruleId}`)).body;
      return r.last_slot ? r : undefined;
    }, 'the rule to fire');
    assert.equal(fired.last_run_ids.length, 1);
    const run = await waitForRun(t, fired.last_run_ids[0]);
    assert.equal(run.rule_id, ruleId);
    assert.equal(run.geo_question_id, taggedPrompt);
    assert.equal(run.state, 'completed', run.reason);
    // More ticks in the same slot start nothing more.
    await new Promise((r) => setTimeout(r, 800));
    const runs = (await t.api('GET', '/org/generation/runs?limit=100')).body.filter((r: any) => r.rule_id === ruleId);
    assert.equal(runs.length, 1);
    assert.equal((await t.api('GET', `/org/prompts/${otherPrompt}/generation-runs`)).body.length, 0);
  });

  it('while the runs switch is off, a rule’s slot passes with nothing started', async () => {
    const admin = await logIn(t, 'admin@example.com', 'development-password');
    assert.equal((await admin.call('PATCH', '/org/me/runs-enabled', { runs_enabled: false })).status, 200);
    // Wait until generation has seen the switch (runs are refused).
    await eventually(
      async () => (await t.api('POST', '/org/generation/runs', { body: { content_type_id: contentTypeId } })).status === 422,
      'the switch',
    );
    const created = await t.api('POST', '/org/content-engine/rules', {
      body: { name: 'All prompts', content_type_id: contentTypeId, cadence: 'daily' },
    });
    const skipped = await eventually(async () => {
      const r = (await t.api('GET', `/org/content-engine/rules/${created.body.rule_id}`)).body;
      return r.last_slot ? r : undefined;
    }, 'the slot to pass');
    assert.deepEqual(skipped.last_run_ids, []);
    assert.match(skipped.last_skipped, /switched off/);
    assert.equal((await admin.call('PATCH', '/org/me/runs-enabled', { runs_enabled: true })).status, 200);
  });

  it('CRUD and errors: 400 unknown field or cadence, 404 unknown content type or rule, 401, 403 for a viewer', async () => {
    const created = await t.api('POST', '/org/content-engine/rules', {
      body: { name: 'Off', content_type_id: contentTypeId, cadence: 'hourly', enabled: false },
    });
    assert.equal(created.status, 201);
    const id = created.body.rule_id;
    const list = await t.api('GET', '/org/content-engine/rules');
    assert.ok(list.body.some((r: any) => r.rule_id === id));
    const put = await t.api('PUT', `/org/content-engine/rules/${id}`, {
      body: { name: 'Renamed', content_type_id: contentTypeId, enabled: false },
    });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.body.name, 'Renamed');
    assert.equal(put.body.last_slot, null, 'a disabled rule never fires');
    assert.equal(
      (await t.api('POST', '/org/content-engine/rules', { body: { name: 'x', content_type_id: contentTypeId, when: 'now' } })).status,
      400,
    );
    assert.equal(
      (await t.api('POST', '/org/content-engine/rules', { body: { name: 'x', content_type_id: contentTypeId, cadence: 'yearly' } })).status,
      400,
    );
    assert.equal((await t.api('POST', '/org/content-engine/rules', { body: { name: 'x', content_type_id: randomUUID() } })).status, 404);
    assert.equal((await t.api('DELETE', `/org/content-engine/rules/${id}`)).status, 204);
    assert.equal((await t.api('GET', `/org/content-engine/rules/${id}`)).status, 404);
    assert.equal((await t.api('GET', '/org/content-engine/rules', { key: null })).status, 401);
    const other = await newOrgAdmin(t, 'engine-other');
    const viewer = await newMember(t, other, 'viewer');
    assert.equal((await viewer.call('POST', '/org/content-engine/rules', { name: 'v', content_type_id: contentTypeId })).status, 403);
  });
});
