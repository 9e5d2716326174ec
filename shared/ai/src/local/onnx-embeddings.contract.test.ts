import { describe, it, beforeAll, afterAll } from 'vitest';
import { describeOrSkip } from '@kb/testing';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFileSync, readdirSync } from 'node:fs';
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

/** CPU seconds of each thread of this process with its nice value (Linux /proc; undefined elsewhere). */
function threadCpu(): Map<number, { nice: number; seconds: number }> | undefined {
  if (process.platform !== 'linux') return undefined;
  const out = new Map<number, { nice: number; seconds: number }>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(tid), { nice: Number(fields[16]), seconds: (Number(fields[11]) + Number(fields[12])) / 100 });
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out;
}

describeOrSkip('local embeddings with documents on a worker thread', skip, () => {
  const NICE = 7;
  let inThread: LocalEmbeddings;
  let worker: LocalEmbeddings;
  beforeAll(async () => {
    inThread = await createLocalEmbeddings({ modelDir });
    worker = await createLocalEmbeddings({ modelDir, threads: 2, documentWorker: { nice: NICE } });
  });
  afterAll(async () => {
    await inThread?.close();
    await worker?.close();
  });

  it('gives the vectors the calling thread gives, for documents and queries', async () => {
    const texts = ['Clean the panels every three months with soft water.', 'Hooks run in the order they were added.', ''];
    const [a, b] = [await inThread.embed(texts), await worker.embed(texts)];
    assert.equal(b.length, 3);
    for (const [i, v] of b.entries()) assert.ok(dot(v, a[i]!) > 0.9999, `cosine ${dot(v, a[i]!)}`);
    const [q1] = await inThread.embed(['how often are panels cleaned'], 'query');
    const [q2] = await worker.embed(['how often are panels cleaned'], 'query');
    assert.ok(dot(q1!, q2!) > 0.9999);
    assert.equal(worker.dimensions, inThread.dimensions);
    assert.deepEqual(await worker.embed([]), []);
    // Calls in flight together each get their own texts' vectors (each alone: the int8 model's
    // activation ranges are the batch's, so a text alone and in a batch differ slightly).
    const [x, y] = await Promise.all([worker.embed([texts[0]!]), worker.embed([texts[1]!])]);
    const [x0, y0] = [await inThread.embed([texts[0]!]), await inThread.embed([texts[1]!])];
    assert.ok(dot(x[0]!, x0[0]!) > 0.9999 && dot(y[0]!, y0[0]!) > 0.9999);
  });

  it.skipIf(process.platform !== 'linux')('does the work on threads at the lower priority, not on the calling thread', async () => {
    const texts = Array.from({ length: 16 }, (_, i) => `Document ${i} about ${'solar panel maintenance and warranty terms '.repeat(40)}`);
    const before = threadCpu()!;
    await worker.embed(texts);
    const after = threadCpu()!;
    let niced = 0;
    for (const [tid, t] of after) if (t.nice === NICE) niced += t.seconds - (before.get(tid)?.seconds ?? 0);
    const main = after.get(process.pid)!.seconds - before.get(process.pid)!.seconds;
    assert.ok(niced > 0.2, `the niced threads took ${niced} CPU-seconds`);
    assert.ok(main < niced / 4, `the calling thread took ${main} CPU-seconds against ${niced} on the niced threads`);
  });

  it('refuses calls once closed, and a folder without the model at start', async () => {
    const e = await createLocalEmbeddings({ modelDir, documentWorker: { nice: NICE } });
    await e.close();
    await assert.rejects(e.embed(['after close']), /closed/);
    await assert.rejects(createLocalEmbeddings({ modelDir: '/nonexistent-model-dir', documentWorker: { nice: 0 } }), /model\.onnx/);
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
