import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestSystem, type TestSystem } from './harness.js';
import { eventually } from './search-fixtures.js';

/**
 * Vectors in the background, through the public API: a document is found by its
 * words as soon as it is extracted, while its vectors are still pending; they are
 * computed later (here: once the embeddings provider, a stand-in on 127.0.0.1,
 * stops failing for documents), survive a restart as pending work, and then the
 * document is found by meaning. A replaced version never keeps its vectors.
 */
const SYNONYMS: Record<string, string> = { automobile: 'car', vehicle: 'car', servicing: 'maintenance', serviced: 'maintenance' };
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
/** While false, the stand-in fails every call that embeds documents (queries are one line; documents carry their title on a line of its own). */
let documentsOpen = false;
let documentCalls = 0;
let t: TestSystem;

const MEANING = 'When does my car need servicing?';
const search = async (query: string) => {
  const res = await t.api('POST', '/search', { body: { query } });
  assert.equal(res.status, 200, res.text);
  return res.body.results as { content_id: string; chunk_text: string }[];
};
const readiness = async (id: string) => {
  const res = await t.api('GET', `/org/kb/content/${id}`);
  assert.equal(res.status, 200, res.text);
  return res.body.search as { keyword: string; semantic: string };
};

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const input = JSON.parse(body).input as string[];
      res.setHeader('content-type', 'application/json');
      const documents = input.some((text) => text.includes('\n'));
      if (documents) documentCalls++;
      if (documents && !documentsOpen) res.writeHead(503).end(JSON.stringify({ error: { message: 'overloaded' } }));
      else res.end(JSON.stringify({ data: input.map((text, index) => ({ index, embedding: embed(text) })) }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  t = await startTestSystem({ EMBEDDINGS_URL: base, EMBEDDINGS_MODEL: 'fake-embed' });
});
afterAll(async () => {
  await t?.stop();
  await new Promise<void>((r) => server.close(() => r()));
});

describe('vectors computed in the background', () => {
  let fleet = '';

  it('finds a document by its words before its vectors exist, and keeps them pending across a restart', async () => {
    const created = await t.api('POST', '/org/kb/raw', {
      body: { title: 'Fleet handbook', text: 'Automobile maintenance is due every twelve months or fifteen thousand kilometres.' },
    });
    assert.equal(created.status, 202, created.text);
    fleet = created.body.id;
    await eventually(async () => assert.equal((await readiness(fleet)).keyword, 'ready'), 30_000);
    // The provider has been asked for the vectors and failed: they are still pending.
    await eventually(async () => assert.ok(documentCalls > 0));
    assert.deepEqual(await readiness(fleet), { keyword: 'ready', semantic: 'pending' });
    assert.equal((await search('automobile maintenance twelve months'))[0]?.content_id, fleet, 'found by its words');
    assert.deepEqual(await search(MEANING), [], 'not by meaning: no shared word and no vector yet');

    await t.restart();
    assert.deepEqual(await readiness(fleet), { keyword: 'ready', semantic: 'pending' }, 'pending work outlives the process');
  });

  it('finds it by meaning once its vectors are written', async () => {
    documentsOpen = true;
    await eventually(async () => assert.equal((await readiness(fleet)).semantic, 'ready'), 30_000);
    const hits = await search(MEANING);
    assert.equal(hits[0]?.content_id, fleet, 'found through its vector alone');
  });

  it('content deleted while its vectors are pending never gets them', async () => {
    documentsOpen = false;
    const calls = documentCalls;
    const tyres = (
      await t.api('POST', '/org/kb/raw', { body: { title: 'Tyres', text: 'Vehicle tyres are replaced every forty thousand kilometres.' } })
    ).body.id as string;
    await eventually(async () => assert.equal((await readiness(tyres)).keyword, 'ready'), 30_000);
    await eventually(async () => assert.ok(documentCalls > calls));
    assert.equal((await t.api('DELETE', `/content/${tyres}`)).status, 204);
    documentsOpen = true;
    // A later document's vectors are written: the worker has run since the deletion.
    const later = (
      await t.api('POST', '/org/kb/raw', { body: { title: 'Parking', text: 'Visitors park their automobile behind the building.' } })
    ).body.id as string;
    await eventually(async () => assert.equal((await readiness(later)).semantic, 'ready'), 30_000);
    const hits = await search('car tyre wear');
    assert.ok(hits.length > 0);
    assert.ok(!hits.some((h) => h.content_id === tyres), 'the deleted content is found neither by words nor by meaning');
  });
});
