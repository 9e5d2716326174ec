import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import {
  DEFAULT_SEMANTIC_WEIGHTS,
  longestCommonRun,
  halvesOf,
  semanticVerdict,
  type PassageFeatures,
  type SemanticWeights,
} from './semantic.js';
import { contrastOf } from './contrast.js';

const features = (
  evidence: Partial<PassageFeatures['evidence']> = {},
  contradiction: Partial<PassageFeatures['contradiction']> = {},
): PassageFeatures => ({
  evidence: {
    similarity: 0.6,
    halves: 0.55,
    half_gap: 0.05,
    shared_words: 0.1,
    word_gap: 0.1,
    copied_run: 0.1,
    rest_words: 0.1,
    first: 0,
    retrieval: 0.5,
    lead: -0.1,
    ...evidence,
  },
  contradiction: { contrast: 0, direction: 0, negation: 0, number: 0, name: 0, negative_claim: 0, ...contradiction },
});

/** A passage that states the claim in other words: close in meaning, in every part, ahead of the others. */
const paraphrase = (contradiction: Partial<PassageFeatures['contradiction']> = {}) =>
  features(
    { similarity: 0.9, halves: 0.85, half_gap: 0.02, shared_words: 0.4, rest_words: 0.5, first: 1, retrieval: 1, lead: 0.12 },
    contradiction,
  );

describe('the semantic verdict', () => {
  it('supports a claim by the passage that states it in other words, and lists only passages above the threshold', () => {
    const v = semanticVerdict(DEFAULT_SEMANTIC_WEIGHTS, [features(), paraphrase(), features()]);
    assert.equal(v.verdict, 'supported');
    assert.deepEqual(v.verdict === 'supported' && v.passages, [1]);
  });

  it('leaves a claim unsupported when no passage is close enough in meaning', () => {
    assert.equal(semanticVerdict(DEFAULT_SEMANTIC_WEIGHTS, [features(), features({ similarity: 0.7 })]).verdict, 'unsupported');
    assert.equal(semanticVerdict(DEFAULT_SEMANTIC_WEIGHTS, []).verdict, 'unsupported');
  });

  it('does not take half a sentence copied from a passage, the rest from elsewhere, as a paraphrase', () => {
    const glued = features({
      similarity: 0.88,
      halves: 0.6,
      half_gap: 0.25,
      shared_words: 0.3,
      word_gap: 0.9,
      copied_run: 0.5,
      rest_words: 0.1,
      first: 1,
      retrieval: 1,
      lead: 0.1,
    });
    assert.notEqual(semanticVerdict(DEFAULT_SEMANTIC_WEIGHTS, [glued, features()]).verdict, 'supported');
  });

  it('contradicts when the passage sits closer to the claim turned around', () => {
    const v = semanticVerdict(DEFAULT_SEMANTIC_WEIGHTS, [paraphrase({ contrast: 0.08, direction: 1 }), features()]);
    assert.equal(v.verdict, 'contradicted');
  });

  it('never supports by a passage whose number is at odds with the claim (the number veto)', () => {
    assert.equal(semanticVerdict(DEFAULT_SEMANTIC_WEIGHTS, [paraphrase({ number: 1 }), features()]).verdict, 'contradicted');
    const noVeto: SemanticWeights = { ...DEFAULT_SEMANTIC_WEIGHTS, veto: [] };
    assert.equal(semanticVerdict(noVeto, [paraphrase({ number: 1 }), features()]).verdict, 'supported');
  });
});

describe('claim helpers', () => {
  it('finds the longest run of the same words in order', () => {
    assert.deepEqual(longestCommonRun(['a', 'b', 'c', 'd'], ['x', 'b', 'c', 'y', 'd']), { start: 1, length: 2 });
    assert.deepEqual(longestCommonRun(['a'], []), { start: 0, length: 0 });
  });

  it('halves a claim of eight words or more by words', () => {
    assert.equal(halvesOf('too short to halve'), undefined);
    assert.deepEqual(halvesOf('one two three four five six seven eight nine'), ['one two three four five', 'six seven eight nine']);
  });

  it('turns a claim around: a direction word flipped, else a negation dropped or added', () => {
    assert.equal(contrastOf('Exercise increases bone density.'), 'Exercise decreases bone density.');
    assert.equal(contrastOf('Higher doses work better.'), 'Lower doses work better.');
    assert.equal(contrastOf('The drug does not cause nausea.'), 'The drug does cause nausea.');
    assert.equal(contrastOf('The warranty is transferable.'), 'The warranty is not transferable.');
    assert.equal(contrastOf('Panels need cleaning.'), 'It is not true that panels need cleaning.');
  });
});

describe('numbers in the semantic verdict', () => {
  it('never supports by a passage that lacks a number the claim states', () => {
    const v = semanticVerdict(DEFAULT_SEMANTIC_WEIGHTS, [{ ...paraphrase(), lacks_number: true }, features()]);
    assert.equal(v.verdict, 'unsupported');
  });
});
