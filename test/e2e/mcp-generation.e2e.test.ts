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

describe('MCP: consistent names and hints', () => {
  it('start_generation and list_generation_runs take prompt_id; metered tools are not read-only; tracked prompts are named so', async () => {
    const client = await mcpClient(t.url, { 'x-api-key': key });
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    for (const name of ['start_generation', 'list_generation_runs']) {
      const props = Object.keys(byName.get(name)!.inputSchema.properties ?? {});
      assert.ok(props.includes('prompt_id') && !props.includes('geo_question_id'), `${name}: ${props.join(', ')}`);
    }
    // Spending a credit and being recorded is not read-only; reading is.
    for (const name of ['search', 'ask', 'verify_text']) assert.equal(byName.get(name)!.annotations?.readOnlyHint, false, name);
    for (const name of ['kb_tree', 'get_piece', 'list_drafts', 'analytics_overview'])
      assert.equal(byName.get(name)!.annotations?.readOnlyHint, true, name);
    // MCP's own prompts are prompts/list; the analytics questions are tracked prompts.
    for (const old of ['list_prompts', 'get_prompt', 'create_prompt', 'update_prompt', 'prompt_suggestions'])
      assert.ok(!byName.has(old), old);
    for (const name of [
      'list_tracked_prompts',
      'get_tracked_prompt',
      'create_tracked_prompt',
      'update_tracked_prompt',
      'suggest_tracked_prompts',
    ])
      assert.ok(byName.has(name), name);

    const prompt = await ok(client, 'create_tracked_prompt', { name: 'Solar efficiency', text: 'How efficient are solar panels?' });
    const typeId = (await ok(client, 'list_content_types')).items[0].content_type_id;
    const run = await ok(client, 'start_generation', { content_type_id: typeId, prompt_id: prompt.prompt_id });
    assert.equal(run.prompt_id, prompt.prompt_id);
    assert.equal(run.geo_question_id, undefined);
    assert.equal((await t.api('GET', `/org/generation/runs/${run.run_id}`, { key })).body.geo_question_id, prompt.prompt_id, 'REST got it');
    const listed = await ok(client, 'list_generation_runs', { prompt_id: prompt.prompt_id });
    assert.deepEqual(
      listed.items.map((r: { run_id: string }) => r.run_id),
      [run.run_id],
    );
    assert.equal(listed.items[0].prompt_id, prompt.prompt_id);
    await waitForRun(t, run.run_id);
    await client.close();
  });
});
