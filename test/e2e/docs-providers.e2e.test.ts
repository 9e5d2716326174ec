import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fencedBlocks, readDoc } from '../docs/markdown.js';
import { startFakeChatModel, type FakeChatModel } from './fake-chat-model.js';
import { addSource, waitForRun, waitIndexed } from './generation-helpers.js';
import { startTestSystem, type TestSystem } from './harness.js';

/**
 * docs/providers.md, step by step: each `env` block (OpenAI, Ollama, vLLM, llama.cpp) starts
 * the service as the page says, with its provider URLs pointed at local stand-ins speaking the
 * OpenAI wire format: the chat model drafts a generation run and writes answers, and the
 * embeddings endpoint is asked for vectors.
 */
const PAGE = 'docs/providers.md';

/** The settings of one `env` block, under the heading it belongs to. */
function envBlocks(): { heading: string; env: Record<string, string> }[] {
  const text = readDoc(PAGE);
  const lines = text.split('\n');
  return fencedBlocks(text)
    .filter((b) => b.info === 'env')
    .map((b) => {
      const heading = lines
        .slice(0, b.line)
        .reverse()
        .find((l) => l.startsWith('## '))!
        .slice(3);
      const env = Object.fromEntries(
        b.code
          .split('\n')
          .map((l) => l.trim())
          .filter((l) => /^[A-Z_]+=/.test(l))
          .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
      );
      return { heading, env };
    });
}

/** An OpenAI-compatible embeddings endpoint: word-hash vectors, and a count of what it was asked. */
async function startFakeEmbeddings(): Promise<{ url: string; inputs: () => number; stop(): Promise<void> }> {
  let inputs = 0;
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') return void res.writeHead(404).end();
      const body = JSON.parse(raw) as { input: string | string[] };
      const texts = [body.input].flat();
      inputs += texts.length;
      const embed = (text: string) => {
        const v = new Array<number>(64).fill(0);
        for (const w of text.toLowerCase().split(/\W+/).filter(Boolean))
          v[[...w].reduce((h, c) => (h * 31 + c.charCodeAt(0)) % 64, 0)]! += 1;
        return v;
      };
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ object: 'list', data: texts.map((t, index) => ({ object: 'embedding', index, embedding: embed(t) })) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1`, inputs: () => inputs, stop: () => new Promise((r) => server.close(() => r())) };
}

const blocks = envBlocks();

describe(`${PAGE}: every provider's settings, against local stand-ins`, () => {
  it('has a block for OpenAI, Ollama, vLLM and llama.cpp, each naming a chat model, the judge and embeddings', () => {
    assert.deepEqual(
      blocks.map((b) => b.heading),
      ['OpenAI', 'Ollama', 'vLLM', 'llama.cpp'],
    );
    for (const { heading, env } of blocks) {
      for (const key of ['LLM_URL', 'LLM_MODEL', 'EMBEDDINGS_URL', 'EMBEDDINGS_MODEL'])
        assert.match(env[key] ?? '', /\S/, `${heading} sets ${key}`);
      assert.equal(env.FACT_CHECK_LLM_JUDGE, 'true', `${heading} turns the judge on`);
      assert.match(env.LLM_URL!, /\/v1$/, `${heading}: LLM_URL is a base URL ending in /v1`);
      assert.match(env.EMBEDDINGS_URL!, /\/v1$/, `${heading}: EMBEDDINGS_URL is a base URL ending in /v1`);
    }
  });

  for (const { heading, env } of blocks) {
    describe(heading, () => {
      let chat: FakeChatModel;
      let embeddings: Awaited<ReturnType<typeof startFakeEmbeddings>>;
      let t: TestSystem;

      beforeAll(async () => {
        [chat, embeddings] = await Promise.all([startFakeChatModel(), startFakeEmbeddings()]);
        t = await startTestSystem({ ...env, LLM_URL: chat.url, EMBEDDINGS_URL: embeddings.url });
      });
      afterAll(async () => {
        await t?.stop();
        await chat?.stop();
        await embeddings?.stop();
      });

      it('indexes with the embeddings endpoint, and the chat model drafts a run the fact checker judges', async () => {
        const source = await addSource(t, 'Panel care', 'Clean the solar panels every 3 months with soft water.');
        await waitIndexed(t, 'cleaning solar panels', source.id);
        assert.ok(embeddings.inputs() > 0, 'the knowledge base asked the embeddings endpoint for vectors');
        const type = await t.api('POST', '/org/content-types', {
          body: { name: 'Care note', config: { sections: [{ title: 'Cleaning' }] } },
        });
        assert.equal(type.status, 201, type.text);
        const before = chat.requests.length;
        const run = await t.api('POST', '/org/generation/runs', {
          body: { content_type_id: type.body.content_type_id, instructions: 'cleaning solar panels' },
        });
        assert.equal(run.status, 202, run.text);
        const done = await waitForRun(t, run.body.run_id);
        assert.equal(done.state, 'completed', done.reason);
        assert.ok(
          chat.requests.slice(before).some((r) => r.messages.at(-1)!.content.startsWith('Sources:')),
          'the chat model was asked to draft',
        );
        const draft = (await t.api('GET', `/org/generation/drafts/${done.draft_id}`)).body;
        assert.ok(draft.sections[0].sentences.length > 0);
        for (const s of draft.sections[0].sentences)
          assert.ok(['supported', 'unsupported', 'contradicted', 'not_factual'].includes(s.verdict));
      });
    });
  }
});
