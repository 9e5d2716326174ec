import { afterAll, beforeAll, it } from 'vitest';
import { describeOrSkip } from '@kb/testing';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { missingModelFiles } from '@kb/ai/local';
import { startTestSystem, type TestSystem } from './harness.js';
import { contentFeed, eventually, orgIdOf } from './search-fixtures.js';

/**
 * With EMBEDDINGS=local (the ONNX model scripts/fetch-embedding-model.sh unpacks,
 * run in-process): chunks are embedded when indexed and queries when asked, so a
 * chunk that shares no content word with the question is found by meaning.
 */
const modelDir = process.env.EMBEDDINGS_MODEL_DIR ?? join(import.meta.dirname, '../../.models/bge-small-en-v1.5-q');
const why = missingModelFiles(modelDir);
const skip = why ? `skipped: ${why}` : false;

let t: TestSystem | undefined;
let feed: ReturnType<typeof contentFeed> | undefined;
let cars = '';

describeOrSkip('search with local embeddings (EMBEDDINGS=local)', skip, () => {
  beforeAll(async () => {
    t = await startTestSystem({ EMBEDDINGS: 'local', EMBEDDINGS_MODEL_DIR: modelDir });
    feed = contentFeed(t);
    const org = await orgIdOf(t);
    cars = (
      await feed.put(org, {
        title: 'Fleet handbook',
        chunks: ['Automobile maintenance is due every twelve months or fifteen thousand kilometres.'],
      })
    ).content_id;
    await feed.put(org, { title: 'Office', chunks: ['The office kitchen is cleaned every evening.'] });
    await feed.put(org, { title: 'Travel', chunks: ['Train tickets are booked through the travel desk.'] });
    // Searchable by words first; the vectors follow in the background.
    await eventually(async () =>
      assert.equal((await t!.api('POST', '/search', { body: { query: 'kitchen' } })).body.results.length > 0, true),
    );
    // The last one's vectors are written with or after the others' (oldest first).
    await eventually(
      async () =>
        assert.equal(
          (await t!.api('POST', '/search', { body: { query: 'How do I arrange a rail journey?' } })).body.results[0]?.title,
          'Travel',
        ),
      30_000,
    );
  });
  afterAll(async () => {
    await feed?.close();
    await t?.stop();
  });

  it('finds by meaning what shares no word with the question', async () => {
    const res = await t!.api('POST', '/search', { body: { query: 'When does my car need servicing?' } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.results[0].content_id, cars, 'found through the vectors alone');
  });

  it('still ranks an exact lexical match first', async () => {
    const res = await t!.api('POST', '/search', { body: { query: 'travel desk train tickets' } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.results[0].title, 'Travel');
  });
});
