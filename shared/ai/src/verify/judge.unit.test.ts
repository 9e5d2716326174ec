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
let reply: (sentence: string) => { status: number; content?: string; delayMs?: number } = () => ({
  status: 200,
  content: '{"verdict":"entails","reason":"ok"}',
});
let refuseSchema = false;

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
    if (refuseSchema && body.response_format) return void res.writeHead(400).end('{"error":"response_format not supported"}');
    const r = reply(sentence);
    if (r.delayMs) await new Promise((done) => setTimeout(done, r.delayMs));
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
  text: 'Employees receive 25 days of paid vacation every year. Remote work did not reduce productivity. Logging is disabled by default.',
};
const retrieve = async () => [SOURCE];
const judged = (timeoutMs?: number) =>
  createFactChecker({ judge: createOpenAiChat({ baseUrl, model: 'judge-model' }), ...(timeoutMs && { judgeTimeoutMs: timeoutMs }) });

describe('the chat model as the judge', () => {
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
    assert.equal(seen[0].response_format.type, 'json_schema');
    assert.deepEqual(seen[0].response_format.json_schema.schema.properties.verdict.enum, ['entails', 'contradicts', 'unrelated']);
    assert.match(seen[0].messages[1].content, /^Source span:\nEmployees receive 25 days of paid vacation every year\.\n/);
    assert.match(seen[0].messages[1].content, /Sentence: Employees receive 25 days of paid vacation every year\.$/);
  });

  it('asks once per sentence and span (cached), and plainly when the server refuses structured output', async () => {
    seen.length = 0;
    reply = () => ({ status: 200, content: '{"verdict":"entails","reason":"Same."}' });
    const checker = judged();
    const text = 'Employees receive 25 days of paid vacation every year.';
    await checker.check({ text, retrieve });
    await checker.check({ text: `${text} ${text}`, retrieve });
    assert.equal(seen.length, 1, 'one question for one sentence and span');
    seen.length = 0;
    refuseSchema = true;
    try {
      const [s] = await judged().check({ text, retrieve });
      assert.equal(s!.second_opinion?.verdict, 'supported');
      assert.deepEqual(
        seen.map((b) => b.response_format !== undefined),
        [true, false],
      );
    } finally {
      refuseSchema = false;
    }
  });

  it('gives up on a judge that takes too long, keeping the embedded verdict', async () => {
    reply = () => ({ status: 200, content: '{"verdict":"contradicts","reason":"late"}', delayMs: 400 });
    const [s] = await judged(100).check({ text: 'Employees receive 25 days of paid vacation every year.', retrieve });
    assert.equal(s!.verdict, 'supported');
    assert.match(s!.second_opinion!.error!, /longer than 100 ms/);
  });

  it('a judge that agrees with everything cannot rescue a flipped antonym, number or negation', async () => {
    reply = () => ({ status: 200, content: '{"verdict":"entails","reason":"Looks right."}' });
    const out = await judged().check({
      text: 'Logging is enabled by default. Employees receive 21 days of paid vacation every year. Remote work did reduce productivity.',
      retrieve,
    });
    assert.deepEqual(
      out.map((s) => s.verdict),
      ['contradicted', 'contradicted', 'contradicted'],
    );
    assert.equal(out[0]!.support[0]!.quote, 'Logging is disabled by default.');
  });

  it('accepts a faithful paraphrase the agreement checks cannot prove (the Fastify validation example)', async () => {
    reply = () => ({ status: 200, content: '{"verdict":"entails","reason":"400 is the status of the response."}' });
    const validation: EvidencePassage = {
      content_id: 'c2',
      version_id: 'v2',
      chunk_id: 'v2:0',
      text:
        'Error Handling\nWhen schema validation fails for a request, Fastify will automatically return a status 400 response ' +
        'including the result from the validator in the payload.',
    };
    const text = 'Fastify answers a request that fails schema validation with HTTP 400.';
    const [alone] = await createFactChecker().check({ text, retrieve: async () => [validation] });
    assert.notEqual(alone!.verdict, 'supported');
    const [s] = await judged().check({ text, retrieve: async () => [validation] });
    assert.equal(s!.verdict, 'supported');
    assert.match(s!.support[0]!.quote, /^When schema validation fails/);
    // The same sentence with another status code stays contradicted, whatever the judge says.
    const [flipped] = await judged().check({ text: text.replace('400', '422'), retrieve: async () => [validation] });
    assert.equal(flipped!.verdict, 'contradicted');
  });

  it('says a sentence the span does not address is unsupported, even when the embedded check backed it', async () => {
    reply = () => ({ status: 200, content: '{"verdict":"unrelated","reason":"Not about that."}' });
    const [s] = await judged().check({ text: 'Employees receive 25 days of paid vacation every year.', retrieve });
    assert.equal(s!.verdict, 'unsupported');
    assert.match(s!.reason!, /does not say this: Not about that/);
  });

  it('can overrule supported: the stricter view wins', async () => {
    reply = () => ({ status: 200, content: '{"verdict":"contradicts","reason":"Wrong year."}' });
    const [s] = await judged().check({ text: 'Employees receive 25 days of paid vacation every year.', retrieve });
    assert.equal(s!.verdict, 'contradicted');
    assert.match(s!.reason!, /judge-model.*Wrong year/);
  });

  it('may accept a paraphrase the embedded check found only worded differently', async () => {
    reply = () => ({ status: 200, content: '{"verdict":"entails"}' });
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
    assert.deepEqual(parseJudgeReply('{"verdict":"entails","reason":"yes"}'), { verdict: 'supported', reason: 'yes' });
    assert.deepEqual(parseJudgeReply('{"verdict":"contradicts"}'), { verdict: 'contradicted' });
    assert.equal(parseJudgeReply('{"verdict":"maybe"}'), undefined);
    assert.equal(parseJudgeReply('{broken'), undefined);
  });
});
