import { describe, it, beforeAll, afterAll } from 'vitest';
import { describeOrSkip } from '@kb/testing';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { createLocalEmbeddings, missingModelFiles, type LocalEmbeddings } from './onnx-embeddings.js';
import { createWordPieceTokenizer, wordPieceSpecOf } from './wordpiece.js';

/** The model scripts/fetch-embedding-model.sh unpacks (EMBEDDINGS_MODEL_DIR to test another). */
const modelDir = process.env.EMBEDDINGS_MODEL_DIR ?? join(import.meta.dirname, '../../../../.models/bge-small-en-v1.5-q');
const why = missingModelFiles(modelDir);
const skip = why ? `skipped: ${why}` : false;

const dot = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0);

describeOrSkip('local embeddings (ONNX model from scripts/fetch-embedding-model.sh)', skip, () => {
  let e: LocalEmbeddings;
  beforeAll(async () => {
    e = await createLocalEmbeddings({ modelDir });
  });
  afterAll(async () => {
    await e?.close();
  });

  it('tokenizes like BERT uncased (known ids of the shared vocabulary)', () => {
    const tok = createWordPieceTokenizer(wordPieceSpecOf(JSON.parse(readFileSync(join(modelDir, 'tokenizer.json'), 'utf8'))));
    assert.deepEqual(tok.encode('Hello, world!').ids, [101, 7592, 1010, 2088, 999, 102]);
  });

  it('gives one unit vector per text, in order, of the model dimension', async () => {
    const texts = ['short', 'a somewhat longer text about protein folding in cells', ''];
    const vs = await e.embed(texts);
    assert.equal(vs.length, 3);
    for (const v of vs) {
      assert.equal(v.length, e.dimensions);
      assert.ok(Math.abs(Math.sqrt(dot(v, v)) - 1) < 1e-4);
    }
    // Batching and sorting by length keep a text's vector (up to the int8 model's dynamic quantization,
    // whose activation ranges are taken over the whole batch: measured 0.996 here).
    const [alone] = await e.embed([texts[1]!]);
    assert.ok(dot(alone!, vs[1]!) > 0.99, `cosine ${dot(alone!, vs[1]!)}`);
    assert.deepEqual(await e.embed([]), []);
  });

  it('puts a paraphrase closer than an unrelated sentence, and a query near its answer', async () => {
    const [cat, kitten, tax] = await e.embed([
      'The cat sits on the mat.',
      'A kitten is resting on a rug.',
      'Quarterly tax revenue rose sharply.',
    ]);
    assert.ok(dot(cat!, kitten!) > dot(cat!, tax!) + 0.1);
    const [q] = await e.embed(['does aspirin lower the risk of heart attack'], 'query');
    const [yes, no] = await e.embed(
      ['Daily low-dose aspirin reduced myocardial infarction in the trial.', 'Soil bacteria fix nitrogen for legumes.'],
      'document',
    );
    assert.ok(dot(q!, yes!) > dot(q!, no!));
  });

  it('truncates long texts instead of failing', async () => {
    const [v] = await e.embed(['word '.repeat(3000)]);
    assert.equal(v!.length, e.dimensions);
  });
});

describe('local embeddings without model files', () => {
  it('refuses a folder without the model, saying how to get it', async () => {
    await assert.rejects(
      createLocalEmbeddings({ modelDir: '/nonexistent-model-dir' }),
      /model\.onnx, tokenizer\.json not in .*fetch-embedding-model/,
    );
  });
});
