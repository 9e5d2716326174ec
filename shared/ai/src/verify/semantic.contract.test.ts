import { describe, it, beforeAll, afterAll } from 'vitest';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describeOrSkip } from '@kb/testing';
import { createLocalEmbeddings, missingModelFiles, type LocalEmbeddings } from '../local/onnx-embeddings.js';
import { createFactChecker } from './checker.js';
import type { EvidencePassage } from './port.js';

/**
 * The fact checker with the sentence-embedding model it ships with
 * (scripts/fetch-embedding-model.sh): sentences written in other words than
 * their sources. Skipped, and says so, when the model is not there.
 */
const modelDir = process.env.EMBEDDINGS_MODEL_DIR ?? join(import.meta.dirname, '../../../../.models/bge-small-en-v1.5-q');
const why = missingModelFiles(modelDir);

const passage = (id: string, text: string): EvidencePassage => ({ content_id: id, version_id: `${id}-v1`, chunk_id: `${id}-v1:0`, text });

/** A small stand-in for the knowledge base's search: passages by the number of words they share with the claim. */
const words = (s: string) => new Set(s.toLowerCase().match(/\p{L}{3,}/gu) ?? []);
function search(claim: string): EvidencePassage[] {
  const mine = words(claim);
  return ALL.map((p) => ({ ...p, score: [...words(p.text)].filter((w) => mine.has(w)).length }))
    .filter((p) => p.score > 0)
    .sort((a, b) => b.score - a.score);
}

const SOLAR = passage(
  'solar',
  'Solar panels lose output when dust and pollen settle on them. Cleaning the panels twice a year restores most of the lost output. ' +
    'The inverter converts direct current from the panels into alternating current for the home. Most inverters last ten to fifteen years.',
);
const HEAT = passage(
  'heat-pump',
  'A heat pump moves heat from the outside air into the house. Its efficiency drops when the outside temperature falls below freezing. ' +
    'An annual service by a certified technician keeps the heat pump running efficiently.',
);
const BILLING = passage(
  'billing',
  'Invoices are sent on the first day of every month. Customers who pay annually get two months free. ' +
    'Late payments incur a fee after a grace period of fourteen days.',
);
const WARRANTY = passage(
  'warranty',
  'The panels carry a 25-year performance warranty. The warranty does not cover damage caused by improper installation.',
);
const ALL = [SOLAR, HEAT, BILLING, WARRANTY];

describeOrSkip('the fact checker with its embedding model', why ? `skipped: ${why}` : false, () => {
  let model: LocalEmbeddings;
  let checker: ReturnType<typeof createFactChecker>;
  beforeAll(async () => {
    model = await createLocalEmbeddings({ modelDir });
    checker = createFactChecker({ embeddings: model });
  });
  afterAll(async () => {
    await model?.close();
  });

  const check = async (text: string) => {
    const [s] = await checker.checkDetailed({ text, retrieve: async (claim) => search(claim) });
    return s!;
  };

  it('supports a sentence that states a source sentence in other words, quoting that span', async () => {
    const s = await check('Dust and pollen that collect on solar panels reduce how much power they produce.');
    assert.equal(s.lexical_verdict, 'unsupported', 'worded differently: no span backs it word for word');
    assert.equal(s.verdict, 'supported');
    assert.equal(s.support[0]!.content_id, 'solar');
    assert.equal(s.support[0]!.quote, 'Solar panels lose output when dust and pollen settle on them.');
  });

  it('supports another paraphrase, from the passage that states it', async () => {
    const s = await check('Heat pumps become less efficient when it is freezing outside.');
    assert.equal(s.verdict, 'supported');
    assert.equal(s.support[0]!.content_id, 'heat-pump');
  });

  it('leaves a sentence no passage states unsupported, even on the same subject', async () => {
    const s = await check('Solar panels produce more electricity in winter than in summer because of the snow.');
    assert.notEqual(s.verdict, 'supported');
  });

  it('leaves an unrelated sentence unsupported, with nothing quoted as support', async () => {
    const s = await check('The company opened a new office in Singapore last spring.');
    assert.equal(s.verdict, 'unsupported');
  });

  it('contradicts a reworded sentence whose number is at odds with its source', async () => {
    const s = await check('The performance warranty on the panels lasts 10 years.');
    assert.equal(s.verdict, 'contradicted');
    assert.equal(s.support[0]!.content_id, 'warranty');
    assert.match(s.reason ?? '', /10/);
  });

  it('never supports a reworded sentence whose number the source does not have', async () => {
    // The sample PDF's wording: the number in words, the heading on a line of its own.
    const pdf = passage(
      'pdf',
      'Warranty Terms\nThe panels carry a twenty five year performance warranty. Claims need the serial number printed on the frame.',
    );
    for (const text of ['The warranty lasts 10 years.', 'Most inverters keep working for about thirty years.']) {
      const [s] = await checker.checkDetailed({ text, retrieve: async () => [{ ...pdf, score: 3 }, ...search(text)] });
      assert.notEqual(s!.verdict, 'supported', text);
    }
  });

  it('never supports half of one source sentence glued to half of another', async () => {
    const s = await check('Cleaning the panels twice a year restores a grace period of fourteen days.');
    assert.notEqual(s.verdict, 'supported');
  });

  it('keeps exact quotes supported without asking the model', async () => {
    const s = await check('Most inverters last ten to fifteen years.');
    assert.equal(s.lexical_verdict, 'supported');
    assert.equal(s.verdict, 'supported');
    assert.equal(s.passages, undefined);
  });
});

describe('the fact checker without a model', () => {
  it('says it is lexical and judges a paraphrase unsupported', async () => {
    const checker = createFactChecker();
    assert.equal(checker.semantic, false);
    const [s] = await checker.check({
      text: 'Dust and pollen that collect on solar panels reduce how much power they produce.',
      retrieve: async () => ALL,
    });
    assert.equal(s!.verdict, 'unsupported');
  });
});

describe('the fact checker whose model fails', () => {
  it('keeps the word-for-word verdict instead of failing the check', async () => {
    const broken = { model: 'broken', embed: async () => Promise.reject(new Error('onnx session closed')) };
    const checker = createFactChecker({ embeddings: broken });
    const [paraphrase, copied] = await checker.check({
      text: 'Dust and pollen that collect on solar panels reduce how much power they produce. Most inverters last ten to fifteen years.',
      retrieve: async () => ALL,
    });
    assert.equal(paraphrase!.verdict, 'unsupported');
    assert.equal(copied!.verdict, 'supported');
  });
});
