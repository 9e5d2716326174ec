import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { startTestSystem, type TestSystem } from './harness.js';
import { SOURCES, addSource, waitForRun, waitIndexed } from './generation-helpers.js';
import { STUBBORN, startFakeChatModel, type FakeChatModel } from './fake-chat-model.js';

/**
 * The fact checker with a chat model as its judge (LLM_URL, an OpenAI-compatible
 * fake that agrees with everything): POST /org/content/verify and a generation
 * run ask it about each sentence's best span, and a flipped fact (an antonym, a
 * code token, a number, a negation, even behind "Please note that") is never
 * supported, whatever the judge says.
 */

let t: TestSystem;
let model: FakeChatModel;

const LOGGING = [
  '# Logging',
  '',
  'Logging is disabled by default. Hooks are registered with the `fastify.addHook` method.',
  '',
  'Calling `close` makes the server answer every new incoming request with a `503` error.',
].join('\n');

beforeAll(async () => {
  model = await startFakeChatModel();
  t = await startTestSystem({ LLM_URL: model.url, LLM_MODEL: 'fake-judge' });
  const logging = await addSource(t, 'Logging', LOGGING);
  await waitIndexed(t, 'logging disabled default', logging.id);
  const solar = await addSource(t, 'Solar panels', SOURCES.solar);
  await waitIndexed(t, 'monocrystalline solar panels sunlight', solar.id);
});
afterAll(async () => {
  await t.stop();
  await model.stop();
});

const judgeQuestions = () => model.requests.filter((r) => r.messages.at(-1)!.content.startsWith('Source span:'));

describe('the fact checker with a chat model as its judge', () => {
  it('POST /org/content/verify: a yes-man judge cannot make a flipped fact supported; the copied one is; questions are cached', async () => {
    const text = [
      'Logging is disabled by default.',
      'Logging is enabled by default.',
      'Please note that logging is enabled by default.',
      'Hooks are registered with the `fastify.useHook` method.',
      'Calling `close` makes the server answer every new incoming request with a `502` error.',
      'Logging is not disabled by default.',
    ].join(' ');
    const before = judgeQuestions().length;
    const res = await t.api('POST', '/org/content/verify', { body: { text } });
    assert.equal(res.status, 200, res.text);
    const verdicts = res.body.sentences.map((s: any) => s.verdict);
    assert.deepEqual(verdicts, ['supported', 'contradicted', 'contradicted', 'contradicted', 'contradicted', 'contradicted'], res.text);
    for (const s of res.body.sentences.slice(1)) {
      assert.ok(s.reason, `says why: ${s.text}`);
      assert.ok(s.support[0].quote.length > 0);
    }
    assert.equal(res.body.sentences[1].support[0].quote, 'Logging is disabled by default.');
    const asked = judgeQuestions().length - before;
    assert.ok(asked >= 5, `the judge was asked about each sentence with a span (${asked})`);
    const question = judgeQuestions().at(-1)!;
    assert.match(question.messages[1]!.content, /^Source span:\n.+\n\nSentence: /s);
    // The same sentences again: answered from the cache.
    const again = await t.api('POST', '/org/content/verify', { body: { text } });
    assert.deepEqual(
      again.body.sentences.map((s: any) => s.verdict),
      verdicts,
    );
    assert.equal(judgeQuestions().length - before, asked, 'no second question for the same sentence and span');
  });

  it('a generation run never publishes a flipped fact as supported', async () => {
    const type = await t.api('POST', '/org/content-types', {
      body: { name: 'Judged explainer', config: { sections: [{ title: 'Solar panel efficiency' }], unsupported_sentences: 'block' } },
    });
    assert.equal(type.status, 201, type.text);
    const before = judgeQuestions().length;
    const run = await t.api('POST', '/org/generation/runs', {
      body: { content_type_id: type.body.content_type_id, instructions: 'solar panel efficiency' },
    });
    assert.equal(run.status, 202, run.text);
    const done = await waitForRun(t, run.body.run_id);
    assert.equal(done.state, 'completed', done.reason);
    const draft = (await t.api('GET', `/org/generation/drafts/${done.draft_id}`)).body;
    assert.ok(judgeQuestions().length > before, 'the judge was asked during the run');
    const sentences = draft.sections.flatMap((s: any) => s.sentences);
    const stubborn = sentences.find((s: any) => s.text === STUBBORN);
    assert.ok(stubborn, JSON.stringify(draft.sections));
    assert.notEqual(stubborn.verdict, 'supported', 'the 90-year warranty (the source says 25) is not supported, whatever the judge says');
    for (const s of sentences) if (/\b99\b|\b90 years\b/.test(s.text)) assert.notEqual(s.verdict, 'supported', s.text);
    assert.equal(draft.verification, 'needs_review');
  });
});
