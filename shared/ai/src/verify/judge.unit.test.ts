import { describe, it, beforeAll, afterAll } from 'vitest';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOpenAiChat } from '../openai-chat.js';
import { createFactChecker } from './checker.js';
import { parseJudgeReply } from './judge.js';
import type { EvidencePassage } from './port.js';

/** A local stand-in for an OpenAI-compatible chat server: answers per sentence what the test says. */
let server: Server;
let baseUrl: string;
const seen: any[] = [];
let reply: (sentence: string) => { status: number; content?: string } = () => ({ status: 200, content: '{"verdict":"supported"}' });

const read = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => resolve(body));
  });

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const body = JSON.parse(await read(req));
    seen.push(body);
    if (req.url !== '/v1/chat/completions') return void res.writeHead(404).end();
    const user: string = body.messages.at(-1).content;
    const sentence = /Sentence: (.*)$/s.exec(user)?.[1] ?? '';
    const r = reply(sentence);
    if (r.status !== 200) return void res.writeHead(r.status).end('{"error":"secret provider detail"}');
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({ id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: r.content } }] }),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const SOURCE: EvidencePassage = {
  content_id: 'c1',
  version_id: 'v1',
  chunk_id: 'v1:0',
  text: 'Employees receive 25 days of paid vacation every year. Remote work did not reduce productivity.',
};
const retrieve = async () => [SOURCE];
const judged = () => createFactChecker({ judge: createOpenAiChat({ baseUrl, model: 'judge-model' }) });

describe('the LLM judge as a second opinion', () => {
  it('sends the sentence and the quoted spans over the chat wire format and records its verdict', async () => {
    seen.length = 0;
    reply = () => ({ status: 200, content: 'Sure: {"verdict": "supported", "reason": "The excerpt says so."}' });
    const [s] = await judged().check({ text: 'Employees receive 25 days of paid vacation every year.', retrieve });
    assert.equal(s!.verdict, 'supported');
    assert.deepEqual(s!.second_opinion, { model: 'judge-model', verdict: 'supported', reason: 'The excerpt says so.' });
    assert.equal(seen.length, 1);
    assert.equal(seen[0].model, 'judge-model');
    assert.equal(seen[0].temperature, 0);
    assert.equal(seen[0].messages[0].role, 'system');
    assert.match(seen[0].messages[1].content, /\[1\] Employees receive 25 days of paid vacation every year\./);
    assert.match(seen[0].messages[1].content, /Sentence: Employees receive 25 days of paid vacation every year\.$/);
  });

  it('can overrule supported: the stricter view wins', async () => {
    reply = () => ({ status: 200, content: '{"verdict":"contradicted","reason":"Wrong year."}' });
    const [s] = await judged().check({ text: 'Employees receive 25 days of paid vacation every year.', retrieve });
    assert.equal(s!.verdict, 'contradicted');
    assert.match(s!.reason!, /judge-model.*Wrong year/);
  });

  it('may accept a paraphrase the embedded check found only worded differently', async () => {
    reply = () => ({ status: 200, content: '{"verdict":"supported"}' });
    const text = 'Every year, staff members get 25 days of paid vacation time off.';
    const [alone] = await createFactChecker().check({ text, retrieve });
    assert.equal(alone!.verdict, 'unsupported');
    const [s] = await judged().check({ text, retrieve });
    assert.equal(s!.verdict, 'supported');
    assert.equal(s!.reason, undefined);
  });

  it('cannot rescue a contradicted number, and is not asked about not-factual sentences', async () => {
    seen.length = 0;
    reply = () => ({ status: 200, content: '{"verdict":"supported"}' });
    const out = await judged().check({ text: 'Employees receive 21 days of paid vacation every year. What else?', retrieve });
    assert.deepEqual(
      out.map((s) => s.verdict),
      ['contradicted', 'not_factual'],
    );
    assert.equal(out[0]!.second_opinion?.verdict, 'supported');
    assert.equal(seen.length, 1);
  });

  it('keeps the embedded verdict and says why when the judge fails or talks nonsense', async () => {
    reply = (s) => (s.startsWith('Employees') ? { status: 500 } : { status: 200, content: 'I think it is fine.' });
    const out = await judged().check({
      text: 'Employees receive 25 days of paid vacation every year. Remote work did not reduce productivity.',
      retrieve,
    });
    assert.deepEqual(
      out.map((s) => s.verdict),
      ['supported', 'supported'],
    );
    assert.match(out[0]!.second_opinion!.error!, /answered 500/);
    assert.ok(!out[0]!.second_opinion!.error!.includes('secret'));
    assert.equal(out[1]!.second_opinion!.error, 'the judge answered without a verdict');
  });

  it('reads only a JSON object with a known verdict', () => {
    assert.deepEqual(parseJudgeReply('```json\n{"verdict":"Unsupported","reason":" no "}\n```'), { verdict: 'unsupported', reason: 'no' });
    assert.equal(parseJudgeReply('{"verdict":"maybe"}'), undefined);
    assert.equal(parseJudgeReply('{broken'), undefined);
  });
});
