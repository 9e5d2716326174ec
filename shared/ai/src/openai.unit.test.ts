import { describe, it, beforeAll, afterAll } from 'vitest';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isAppError } from '@kb/platform';
import { createOpenAiChat } from './openai-chat.js';
import { createOpenAiEmbeddings } from './openai-embeddings.js';
import { composeGroundedAnswer } from './grounded.js';
import { NOTHING_FOUND } from './answer.js';

/** A local stand-in for an OpenAI-compatible server on 127.0.0.1: records requests, answers what the test says. */
let server: Server;
let baseUrl: string;
const seen: { path: string; auth: string | undefined; body: any }[] = [];
let chatReply = '';
let failWith = 0;

const read = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => resolve(body));
  });

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const body = JSON.parse(await read(req));
    seen.push({ path: req.url!, auth: req.headers.authorization, body });
    if (failWith) {
      res.writeHead(failWith).end('{"error":"provider secret detail"}');
      return;
    }
    res.setHeader('content-type', 'application/json');
    if (req.url === '/v1/embeddings') {
      // Vectors out of order on purpose: the adapter must sort by index.
      const data = (body.input as string[]).map((t, index) => ({ index, embedding: [t.length, index] })).reverse();
      res.end(JSON.stringify({ data }));
    } else if (req.url === '/v1/chat/completions') {
      res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: chatReply } }] }));
    } else res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('OpenAI-compatible embeddings', () => {
  it('posts model and inputs in batches and returns vectors in input order', async () => {
    seen.length = 0;
    const emb = createOpenAiEmbeddings({ baseUrl, apiKey: 'sk-test', model: 'text-embed', batchSize: 2 });
    const vectors = await emb.embed(['a', 'bb', 'ccc']);
    assert.deepEqual(vectors, [
      [1, 0],
      [2, 1],
      [3, 0],
    ]);
    assert.equal(seen.length, 2);
    assert.deepEqual(seen[0]!.body, { model: 'text-embed', input: ['a', 'bb'] });
    assert.equal(seen[0]!.auth, 'Bearer sk-test');
  });

  it('turns a provider failure into a downstream error without its text', async () => {
    failWith = 500;
    try {
      await assert.rejects(createOpenAiEmbeddings({ baseUrl, model: 'm' }).embed(['x']), (e) => {
        return isAppError(e) && e.kind === 'downstream' && !e.message.includes('secret');
      });
    } finally {
      failWith = 0;
    }
  });
});

describe('grounded answers from a chat model', () => {
  const chunks = [
    { title: 'Leave', text: 'Employees receive 25 days of paid vacation every year.' },
    { title: 'Expenses', text: 'Travel expenses are reimbursed within 30 days.' },
  ];
  const llm = () => createOpenAiChat({ baseUrl, model: 'chat-model' });

  it('keeps supported sentences with their citations and drops invented ones', async () => {
    seen.length = 0;
    chatReply = 'Employees receive 25 days of paid vacation every year [1]. The company also offers free unicorn rides on Fridays [2].';
    const a = await composeGroundedAnswer(llm(), 'How much vacation?', chunks);
    assert.equal(a.answer, 'Employees receive 25 days of paid vacation every year. [1]');
    assert.deepEqual(a.citations, [{ n: 1, chunk: 0 }]);
    const body = seen[0]!.body;
    assert.equal(body.model, 'chat-model');
    assert.equal(body.temperature, 0);
    assert.match(body.messages[1].content, /\[1\] Leave: Employees receive 25 days/);
    assert.match(body.messages[1].content, /Question: How much vacation\?/);
  });

  it('cites the chunk that really supports a sentence, whatever number the model wrote', async () => {
    chatReply = 'Travel expenses are reimbursed within 30 days [1].';
    const a = await composeGroundedAnswer(llm(), 'When are travel expenses reimbursed?', chunks);
    assert.equal(a.answer, 'Travel expenses are reimbursed within 30 days. [2]');
  });

  it('says nothing relevant was found when every generated sentence is unsupported', async () => {
    chatReply = 'Ulaanbaatar is the capital of Mongolia [1]. It hosts the national parliament [2].';
    const a = await composeGroundedAnswer(llm(), 'What is the capital of Mongolia?', chunks);
    assert.deepEqual(a, { answer: NOTHING_FOUND, citations: [], grounded: false });
  });

  it('falls back to the extractive answer when the model says it cannot answer', async () => {
    chatReply = 'NOT_FOUND';
    const a = await composeGroundedAnswer(llm(), 'What is the capital of Mongolia?', chunks);
    assert.equal(a.answer, NOTHING_FOUND);
    assert.equal(a.grounded, false);
  });
});
