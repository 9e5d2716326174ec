/**
 * The semantic part of the fact checker: whether a passage states the claim in
 * other words, and whether what it states goes against the claim. Each
 * passage is described by a few features (sentence-embedding similarity of its
 * closest span, how much of every part of the claim that span backs, shared
 * words, its retrieval rank and its lead over the other passages, the
 * agreement checks on numbers, directions, negations and names, and how much
 * closer the span sits to the claim turned around); two small logistic
 * decisions over them, with weights chosen by cross-validation
 * (npm run bench:factcheck), give the verdict. Pure: vectors in, verdict out.
 */

/** What says whether a passage is evidence for the claim at all (supporting or contradicting it). */
export const EVIDENCE_FEATURES = [
  /** Cosine similarity of the claim and the passage's closest span (one or two sentences). */
  'similarity',
  /** The lower similarity of the claim's two halves to that span: a sentence glued from two sources is low here. */
  'halves',
  /** How much closer one half of the claim is to that span than the other half. */
  'half_gap',
  /** Share of the claim's content words that span holds, in its less-backed half. */
  'shared_words',
  /** How many more of one half's content words the span holds than of the other's: half copied, half from elsewhere. */
  'word_gap',
  /** The longest run of the claim's content words the span has in the same order, as a share of them. */
  'copied_run',
  /** Share of the claim's content words outside that run that the span holds. */
  'rest_words',
  /** 1 for the first passage among the candidates (cited first, then the search's order). */
  'first',
  /** Retrieval score relative to the best candidate's (1 for cited passages). */
  'retrieval',
  /** Similarity lead of this passage over the best other candidate. */
  'lead',
] as const;

/** What says, of a passage that is evidence, whether it contradicts the claim. */
export const CONTRADICTION_FEATURES = [
  /** How much closer the span is to the claim turned around than to the claim (see contrastOf). */
  'contrast',
  /** The span has the opposite direction word (more / less, increase / decrease) among the same words. */
  'direction',
  /** The span lacks the claim's negation or has one the claim lacks. */
  'negation',
  /** The span gives another number where the claim has one. */
  'number',
  /** The span names someone or something else where the claim names one. */
  'name',
  /** The claim itself is negative (not, no, never, without ...). */
  'negative_claim',
] as const;

export type EvidenceFeature = (typeof EVIDENCE_FEATURES)[number];
export type ContradictionFeature = (typeof CONTRADICTION_FEATURES)[number];

export interface PassageFeatures {
  evidence: Record<EvidenceFeature, number>;
  contradiction: Record<ContradictionFeature, number>;
  /** The passage lacks a number the claim states: it can back nothing, whatever the decision says. */
  lacks_number?: boolean;
}

export interface LogisticWeights<F extends string> {
  bias: number;
  weights: Record<F, number>;
}

export interface SemanticWeights {
  evidence: LogisticWeights<EvidenceFeature>;
  contradiction: LogisticWeights<ContradictionFeature>;
  /** Evidence probability from which a passage backs (or contradicts) the claim. */
  threshold: number;
  /** Agreement checks that, failing on a passage that is evidence, make it contradict the claim whatever the decision says. */
  veto: readonly ContradictionFeature[];
}

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

export function logistic<F extends string>(w: LogisticWeights<F>, features: Record<F, number>): number {
  let z = w.bias;
  for (const k of Object.keys(w.weights) as F[]) z += w.weights[k] * (features[k] ?? 0);
  return sigmoid(z);
}

export interface PassageDecision {
  /** Probability that the passage is evidence for or against the claim. */
  evidence: number;
  /** Probability that, being evidence, it contradicts the claim. */
  contradiction: number;
}

export function decidePassage(weights: SemanticWeights, f: PassageFeatures): PassageDecision {
  return { evidence: logistic(weights.evidence, f.evidence), contradiction: logistic(weights.contradiction, f.contradiction) };
}

export type SemanticVerdict =
  | { verdict: 'supported'; passages: number[]; decisions: PassageDecision[] }
  | { verdict: 'contradicted'; passage: number; decisions: PassageDecision[] }
  | { verdict: 'unsupported'; decisions: PassageDecision[] };

/**
 * The verdict over every candidate passage: the one most likely to be evidence
 * decides. Below the threshold nothing backs the claim; above it, the claim is
 * contradicted when that passage goes against it (by the decision, or by a
 * vetoing agreement check: a number at odds is never a paraphrase), and
 * otherwise supported by every passage above the threshold that does not go
 * against it (best first).
 */
export function semanticVerdict(weights: SemanticWeights, passages: PassageFeatures[]): SemanticVerdict {
  const decisions = passages.map((p) => decidePassage(weights, p));
  if (decisions.length === 0) return { verdict: 'unsupported', decisions };
  const order = decisions.map((_, i) => i).sort((a, b) => decisions[b]!.evidence - decisions[a]!.evidence || a - b);
  const top = order[0]!;
  if (decisions[top]!.evidence < weights.threshold) return { verdict: 'unsupported', decisions };
  const against = (i: number) => decisions[i]!.contradiction >= 0.5 || weights.veto.some((f) => passages[i]!.contradiction[f] > 0);
  if (against(top)) return { verdict: 'contradicted', passage: top, decisions };
  // A number is never a paraphrase: a passage without the claim's number backs nothing.
  if (passages[top]!.lacks_number) return { verdict: 'unsupported', decisions };
  const backing = order.filter((i) => decisions[i]!.evidence >= weights.threshold && !against(i) && !passages[i]!.lacks_number);
  return { verdict: 'supported', passages: backing, decisions };
}

/** Chosen by 5-fold cross-validation on SciFact and the fact-check benchmark's own sentences (npm run bench:factcheck). */
export const DEFAULT_SEMANTIC_WEIGHTS: SemanticWeights = {
  evidence: {
    bias: -11.03,
    weights: {
      similarity: 7.927,
      halves: 0.16,
      half_gap: -5.581,
      shared_words: 1.272,
      word_gap: -0.187,
      copied_run: -6.266,
      rest_words: 2.093,
      first: 2.256,
      retrieval: 2.724,
      lead: 12.567,
    },
  },
  contradiction: {
    bias: -0.642,
    weights: { contrast: 14.159, direction: 1.203, negation: 0.695, number: 0.489, name: -0.585, negative_claim: 0.869 },
  },
  threshold: 0.6,
  veto: ['number'],
};

// ---------------------------------------------------------------------------
// Vectors

export const dot = (a: ArrayLike<number>, b: ArrayLike<number>): number => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
};

/** The normalised sum of unit vectors: a two-sentence window's vector from its sentences'. */
export function meanDirection(vectors: ArrayLike<number>[]): Float32Array {
  const out = new Float32Array(vectors[0]!.length);
  for (const v of vectors) for (let i = 0; i < out.length; i++) out[i]! += v[i]!;
  const norm = Math.sqrt(dot(out, out)) || 1;
  for (let i = 0; i < out.length; i++) out[i]! /= norm;
  return out;
}

/**
 * The longest run of `claim` found, in the same order and without gaps, in
 * `span` (both sequences of content-word stems): its start and length.
 */
export function longestCommonRun(claim: readonly string[], span: readonly string[]): { start: number; length: number } {
  let best = { start: 0, length: 0 };
  let previous = new Array<number>(span.length + 1).fill(0);
  for (let i = 1; i <= claim.length; i++) {
    const current = new Array<number>(span.length + 1).fill(0);
    for (let j = 1; j <= span.length; j++)
      if (claim[i - 1] === span[j - 1]) {
        current[j] = previous[j - 1]! + 1;
        if (current[j]! > best.length) best = { start: i - current[j]!, length: current[j]! };
      }
    previous = current;
  }
  return best;
}

/** Halves of a claim for the "halves" feature: by words, when it has eight or more; otherwise none. */
export function halvesOf(claim: string): [string, string] | undefined {
  const words = claim.split(/\s+/).filter(Boolean);
  if (words.length < 8) return undefined;
  const mid = Math.ceil(words.length / 2);
  return [words.slice(0, mid).join(' '), words.slice(mid).join(' ')];
}
