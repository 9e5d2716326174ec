import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { createOpenAiChatEngine, parseChatResponse, urlsInText } from './openai-chat.js';

/** The adapter against a local server speaking the chat completions wire format. */
let server: Server;
let base: string;
const seen: { url: string; auth: string | undefined; body: { model: string; messages: { role: string; content: string }[] } }[] = [];
let reply: { status: number; body: string } = { status: 200, body: '{}' };

beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      seen.push({ url: req.url!, auth: req.headers.authorization, body: JSON.parse(raw) });
      res.writeHead(reply.status, { 'content-type': 'application/json' }).end(reply.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const completion = (content: string, extra: object = {}, message: object = {}) =>
  JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content, ...message } }], ...extra });

describe('OpenAI-compatible chat adapter', () => {
  it('posts the prompt (and the location as a system message) to /v1/chat/completions with the key', async () => {
    reply = { status: 200, body: completion('Hi', { citations: ['https://a.com/1', { url: 'https://b.com/2' }] }) };
    const engine = createOpenAiChatEngine({ baseUrl: `${base}/v1/`, apiKey: 'k-1' });
    const out = await engine.ask({ model: 'sonar', prompt: 'Best CRM?', location: 'Germany' });
    assert.deepEqual(out, { text: 'Hi', citations: ['https://a.com/1', 'https://b.com/2'] });
    const req = seen.at(-1)!;
    assert.equal(req.url, '/v1/chat/completions');
    assert.equal(req.auth, 'Bearer k-1');
    assert.deepEqual(req.body, {
      model: 'sonar',
      messages: [
        { role: 'system', content: 'The user asking is located in Germany.' },
        { role: 'user', content: 'Best CRM?' },
      ],
    });
    await createOpenAiChatEngine({ baseUrl: base }).ask({ model: 'x', prompt: 'q', location: 'global' });
    assert.equal(seen.at(-1)!.url, '/v1/chat/completions');
    assert.equal(seen.at(-1)!.auth, undefined);
    assert.deepEqual(seen.at(-1)!.body.messages, [{ role: 'user', content: 'q' }]);
  });

  it('reads citations from annotations, else from the text', () => {
    const annotated = parseChatResponse(
      JSON.parse(
        completion('See x', {}, { annotations: [{ type: 'url_citation', url_citation: { url: 'https://c.com/3' } }, { type: 'other' }] }),
      ),
    );
    assert.deepEqual(annotated.citations, ['https://c.com/3']);
    assert.deepEqual(parseChatResponse(JSON.parse(completion('Go to https://d.com/4, then (https://e.com/5).'))).citations, [
      'https://d.com/4',
      'https://e.com/5',
    ]);
    assert.deepEqual(urlsInText('none'), []);
  });

  it('fails with the status on an error answer, and on a body without content', async () => {
    const engine = createOpenAiChatEngine({ baseUrl: base });
    reply = { status: 429, body: '{"error":"slow down"}' };
    await assert.rejects(engine.ask({ model: 'm', prompt: 'q', location: 'global' }), /answered 429/);
    reply = { status: 200, body: '{"choices":[]}' };
    await assert.rejects(engine.ask({ model: 'm', prompt: 'q', location: 'global' }), /no message content/);
    reply = { status: 200, body: 'not json' };
    await assert.rejects(engine.ask({ model: 'm', prompt: 'q', location: 'global' }), /not JSON/);
  });
});
