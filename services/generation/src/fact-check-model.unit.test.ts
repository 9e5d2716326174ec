import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Llm } from '@kb/ai';
import { factCheckJudge } from './fact-check-model.js';

/** Which chat model judges the fact checker's sentences, and which key it is sent. */

let server: Server;
let url: string;
const headers: (string | undefined)[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    headers.push(req.headers.authorization);
    req
      .resume()
      .on('end', () =>
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: '{"verdict":"unrelated","reason":"x"}' } }] })),
      );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const base = { FACT_CHECK_LLM_JUDGE: true, LLM_MODEL: 'drafter', FACT_CHECK_LLM_TIMEOUT_MS: 5000 } as const;
const drafting: Llm = { model: 'drafter', complete: async () => '' };

describe('the fact-check judge', () => {
  it('is the drafting model of LLM_URL unless FACT_CHECK_LLM_URL names another; none when turned off', () => {
    assert.equal(factCheckJudge(base, drafting), drafting);
    assert.equal(factCheckJudge(base, undefined), undefined);
    assert.equal(factCheckJudge({ ...base, FACT_CHECK_LLM_JUDGE: false }, drafting), undefined);
    const own = factCheckJudge({ ...base, FACT_CHECK_LLM_URL: url, FACT_CHECK_LLM_MODEL: 'judge' }, drafting);
    assert.equal(own?.model, 'judge');
  });

  it("never sends LLM_API_KEY to FACT_CHECK_LLM_URL: only the judge's own key", async () => {
    // The drafting key is in the configuration; a judge at another address must not receive it.
    const config = { ...base, LLM_API_KEY: 'drafting-secret', FACT_CHECK_LLM_URL: url };
    headers.length = 0;
    await factCheckJudge(config, drafting)!.complete([{ role: 'user', content: 'x' }]);
    await factCheckJudge({ ...config, FACT_CHECK_LLM_API_KEY: 'judge-key' }, drafting)!.complete([{ role: 'user', content: 'x' }]);
    assert.deepEqual(headers, [undefined, 'Bearer judge-key']);
  });
});
