import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { startTestSystem, type TestSystem } from './harness.js';
import { SOURCES, addSource, waitForRun, waitIndexed } from './generation-helpers.js';
import { STUBBORN, startFakeChatModel, type FakeChatModel } from './fake-chat-model.js';

/**
 * With LLM_URL the draft is written by an OpenAI-compatible chat model (a local
 * fake speaking the wire format): the brand kit goes into the prompt, [n]
 * citations come back, and the fact checker still judges every sentence. One
 * altered number is repaired by one regeneration; a sentence that stays
 * unsupported is removed or blocks the draft, as the content type says.
 */

let t: TestSystem;
let model: FakeChatModel;

beforeAll(async () => {
  model = await startFakeChatModel();
  t = await startTestSystem({ LLM_URL: model.url, LLM_MODEL: 'fake-drafter' });
  const solar = await addSource(t, 'Solar panels', SOURCES.solar);
  await waitIndexed(t, 'monocrystalline solar panels sunlight', solar.id);
  const kit = await t.api('PUT', '/org/brand-kit', { body: { guidelines: { voice: 'plain and confident', banned_terms: ['cheap'] } } });
  assert.equal(kit.status, 200, kit.text);
});
afterAll(async () => {
  await t.stop();
  await model.stop();
});

async function runWith(unsupported: 'remove' | 'block') {
  const type = await t.api('POST', '/org/content-types', {
    body: {
      name: `Explainer ${unsupported}`,
      // A short explainer: a draft under the content type's minimum length would be needs_review on that account.
      config: {
        sections: [{ title: 'Solar panel efficiency' }],
        target_length: { min_words: 10, max_words: 300 },
        unsupported_sentences: unsupported,
      },
    },
  });
  assert.equal(type.status, 201, type.text);
  const run = await t.api('POST', '/org/generation/runs', {
    body: { content_type_id: type.body.content_type_id, instructions: 'solar panel efficiency' },
  });
  assert.equal(run.status, 202, run.text);
  const done = await waitForRun(t, run.body.run_id);
  assert.equal(done.state, 'completed', done.reason);
  return (await t.api('GET', `/org/generation/drafts/${done.draft_id}`)).body;
}

describe('drafting through an OpenAI-compatible chat model (LLM_URL)', () => {
  it('sends the brand kit and numbered sources asking for [n] citations; repairs the altered number; removes what stays unsupported', async () => {
    const before = model.requests.length;
    const draft = await runWith('remove');
    const drafting = model.requests.slice(before).find((r) => r.messages.at(-1)!.content.startsWith('Sources:'));
    assert.ok(drafting, 'the model was asked to draft');
    const system = drafting.messages[0]!.content;
    assert.match(system, /Voice: plain and confident/);
    assert.match(system, /Never use these terms: cheap/);
    assert.match(system, /like \[2\]/);
    assert.ok(
      model.requests.slice(before).some((r) => r.messages.at(-1)!.content.startsWith('Source passage:')),
      'one regeneration was asked for',
    );

    const texts = draft.sections[0].sentences.map((s: any) => s.text);
    assert.ok(
      texts.some((s: string) => s.includes('22 percent')),
      texts.join(' | '),
    );
    assert.ok(!texts.some((s: string) => s.includes('99')), 'the altered number never reaches the draft');
    assert.ok(!texts.includes(STUBBORN), 'the unrepairable sentence is removed');
    for (const s of draft.sections[0].sentences) {
      assert.equal(s.verdict, 'supported');
      assert.ok(s.citations.length > 0);
    }
    assert.equal(draft.verification, 'verified');
  });

  it('keeps a sentence that stays unsupported, with its verdict, and marks the draft needs_review when the content type blocks', async () => {
    const draft = await runWith('block');
    const stubborn = draft.sections[0].sentences.find((s: any) => s.text === STUBBORN);
    assert.ok(stubborn, JSON.stringify(draft.sections));
    assert.notEqual(stubborn.verdict, 'supported');
    assert.equal(draft.verification, 'needs_review');
    assert.ok(draft.totals.unsupported >= 1);
  });
});
