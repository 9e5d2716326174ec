import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { startTestSystem, type TestSystem } from './harness.js';
import { SOURCES, addSource, waitForRun, waitIndexed } from './generation-helpers.js';
import { newApiKey, logIn } from './identity-fixtures.js';
import { assertOutputSchemas, callTool, mcpClient, ok } from './mcp-fixtures.js';

/** The generation tools over MCP (the SDK client, real HTTP) against the generation service's REST routes. */
let t: TestSystem;
let key: string;
beforeAll(async () => {
  t = await startTestSystem();
  const solar = await addSource(t, 'Solar panels', SOURCES.solar);
  await waitIndexed(t, 'monocrystalline solar panels efficiency', solar.id);
  const admin = await logIn(t, 'admin@example.com', 'development-password');
  key = (await newApiKey(admin, { name: 'MCP generation' })).key;
  const type = await t.api('POST', '/org/content-types', {
    body: {
      name: 'Answer page',
      config: { sections: [{ title: 'Solar panel efficiency' }], target_length: { min_words: 10, max_words: 200 } },
    },
  });
  assert.equal(type.status, 201, type.text);
});
afterAll(() => t.stop());

describe('MCP: generation tools', () => {
  it('verify a text, start and follow a run, list and read drafts', async () => {
    const client = await mcpClient(t.url, { 'x-api-key': key });
    const verified = await ok(client, 'verify_text', {
      text: 'Monocrystalline solar panels convert about 22 percent of sunlight into electricity.',
    });
    const rest = await t.api('POST', '/org/content/verify', {
      key,
      body: { text: 'Monocrystalline solar panels convert about 22 percent of sunlight into electricity.' },
    });
    assert.deepEqual(Object.keys(verified).sort(), Object.keys(rest.body).sort());

    const types = await ok(client, 'list_content_types');
    const typeId = types.items[0].content_type_id;
    const run = await ok(client, 'start_generation', { content_type_id: typeId, instructions: 'How efficient are solar panels?' });
    assert.equal(run.state, 'queued');
    const done = await waitForRun(t, run.run_id);
    assert.equal(done.state, 'completed', done.reason);
    const followed = await ok(client, 'get_generation_run', { run_id: run.run_id });
    assert.equal(followed.draft_id, done.draft_id);
    assert.ok((await ok(client, 'list_generation_runs')).items.some((r: { run_id: string }) => r.run_id === run.run_id));
    assert.ok((await ok(client, 'list_drafts')).items.some((d: { draft_id: string }) => d.draft_id === done.draft_id));
    const { body_length: bodyLength, ...draft } = await ok(client, 'get_draft', { draft_id: done.draft_id, detail: 'full' });
    const restDraft = (await t.api('GET', `/org/generation/drafts/${done.draft_id}`, { key })).body;
    assert.deepEqual(draft, restDraft);
    assert.equal(bodyLength, restDraft.body.length);
    const brief = await ok(client, 'get_draft', { draft_id: done.draft_id });
    assert.equal(brief.sections[0].sentences, restDraft.sections[0].sentences.length, 'sentences as counts by default');

    const bad = await callTool(client, 'start_generation', { content_type_id: typeId, colour: 'red' });
    const restBad = await t.api('POST', '/org/generation/runs', { key, body: { content_type_id: typeId, colour: 'red' } });
    assert.equal(bad.structuredContent!.status, restBad.status);
    assert.deepEqual(bad.structuredContent!.error, restBad.body.error);
    await assertOutputSchemas(client, [
      ...['verify_text', 'list_content_types', 'start_generation', 'get_generation_run', 'list_generation_runs'],
      ...['list_drafts', 'get_draft'],
    ]);
    await client.close();
  });
});
