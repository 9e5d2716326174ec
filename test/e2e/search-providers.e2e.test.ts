import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestSystem, type TestSystem } from './harness.js';
import { contentFeed, eventually, orgIdOf } from './search-fixtures.js';

/**
 * With EMBEDDINGS_URL and LLM_URL set, against a local stand-in for an
 * OpenAI-compatible server on 127.0.0.1: dense retrieval finds a chunk that
 * shares no word with the question, and the model's answer keeps only the
 * sentences the chunks support.
 */
const SYNONYMS: Record<string, string> = { automobile: 'car', vehicle: 'car', cars: 'car', automobiles: 'car' };
const DIMS = 64;
const embed = (text: string): number[] => {
  const v = new Array<number>(DIMS).fill(0);
  for (const raw of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    const w = SYNONYMS[raw] ?? raw;
    let h = 0;
    for (const ch of w) h = (h * 31 + ch.charCodeAt(0)) % DIMS;
    v[h]! += 1;
  }
  return v;
};

let server: Server;
let chatCalls = 0;
/** When set, the stand-in answers every call with 503, as a provider in an outage would. */
let outage = false;
let t: TestSystem;
let feed: ReturnType<typeof contentFeed>;
let cars: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const json = JSON.parse(body);
      res.setHeader('content-type', 'application/json');
      if (outage) {
        res.writeHead(503).end(JSON.stringify({ error: { message: 'overloaded' } }));
      } else if (req.url === '/v1/embeddings') {
        res.end(JSON.stringify({ data: (json.input as string[]).map((text, index) => ({ index, embedding: embed(text) })) }));
      } else if (req.url === '/v1/chat/completions') {
        chatCalls++;
        const reply =
          'Automobile maintenance is due every twelve months or fifteen thousand kilometres [1]. ' +
          'Electric models never need any maintenance at all [1].';
        res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: reply } }] }));
      } else res.writeHead(404).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  t = await startTestSystem({ EMBEDDINGS_URL: base, EMBEDDINGS_MODEL: 'fake-embed', LLM_URL: base, LLM_MODEL: 'fake-chat' });
  feed = contentFeed(t);
  const org = await orgIdOf(t);
  cars = (
    await feed.put(org, {
      title: 'Fleet handbook',
      chunks: ['Automobile maintenance is due every twelve months or fifteen thousand kilometres.'],
    })
  ).content_id;
  await feed.put(org, { title: 'Office', chunks: ['The office kitchen is cleaned every evening.'] });
  // Searchable by words first; the vectors follow in the background.
  await eventually(async () =>
    assert.equal((await t.api('POST', '/search', { body: { query: 'kitchen' } })).body.results.length > 0, true),
  );
  await eventually(
    async () =>
      assert.equal(
        (await t.api('POST', '/search', { body: { query: 'When does my car need servicing?' } })).body.results[0]?.content_id,
        cars,
      ),
    30_000,
  );
});
afterAll(async () => {
  await feed?.close();
  await t?.stop();
  await new Promise<void>((r) => server.close(() => r()));
});

describe('search with an embeddings provider and a chat model', () => {
  it('finds by meaning what shares no word with the question, and drops unsupported generated sentences', async () => {
    const res = await t.api('POST', '/search', { body: { query: 'When does my car need servicing?' } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.results[0].content_id, cars, 'found through the vectors alone');
    assert.equal(res.body.answer, 'Automobile maintenance is due every twelve months or fifteen thousand kilometres. [1]');
    assert.deepEqual(
      res.body.citations.map((c: { n: number; content_id: string }) => [c.n, c.content_id]),
      [[1, cars]],
    );
    assert.ok(chatCalls > 0);
  });

  it('degrades to BM25 and the extractive answer while the providers are down, instead of failing the search', async () => {
    outage = true;
    try {
      const res = await t.api('POST', '/search', { body: { query: 'When is automobile maintenance due?' } });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.results[0].content_id, cars, 'found lexically');
      assert.match(res.body.answer, /^Automobile maintenance is due every twelve months or fifteen thousand kilometres\. \[1\]$/);
      assert.equal(res.body.citations[0].content_id, cars);
    } finally {
      outage = false;
    }
  });
});
