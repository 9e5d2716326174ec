import type { Embeddings, Llm } from '../ports.js';
import { analyze, type Analysis } from './analysis.js';
import { align, type Alignment } from './align.js';
import type { CheckedSentence, Equivalent, EvidencePassage, FactChecker, FactCheckRequest, SentenceSupport } from './port.js';
import { sentenceSpans, type SentenceSpan } from './text.js';
import { isCodeLike, proseRanges } from '../prose.js';
import { createFactJudge, type JudgeItem } from './judge.js';
import { contrastOf } from './contrast.js';
import { stripLeadIns } from './lead-in.js';
import {
  DEFAULT_SEMANTIC_WEIGHTS,
  dot,
  halvesOf,
  longestCommonRun,
  semanticVerdict,
  type PassageFeatures,
  type SemanticVerdict,
  type SemanticWeights,
} from './semantic.js';

export interface FactCheckerOptions {
  /**
   * A chat model as the judge: asked whether the best span entails, contradicts or does not address each factual
   * sentence (optional; the embedded check stands on its own, and its agreement checks veto the judge).
   */
  judge?: Llm;
  /** Most milliseconds one question to the judge may take (default 20000). */
  judgeTimeoutMs?: number;
  /** Share of a sentence's content words a source span must hold (besides agreeing on numbers, directions, negations and names). */
  threshold?: number;
  /** Passages asked of `retrieve` per sentence. */
  retrieveLimit?: number;
  /** Supporting passages kept per sentence. */
  maxSupport?: number;
  /** Sentences the judge is asked about at once. */
  judgeConcurrency?: number;
  /**
   * A sentence-embedding model: with it, a sentence that no span backs word for
   * word is still supported by a passage that states it in other words, and
   * contradicted by one that states the opposite (see semantic.ts). Without
   * it, the check is lexical only.
   */
  embeddings?: Embeddings;
  /** The semantic decision's weights (default: DEFAULT_SEMANTIC_WEIGHTS). */
  semanticWeights?: SemanticWeights;
  /** Candidate passages (cited first, then retrieved) the semantic check compares a sentence with. */
  semanticPassages?: number;
}

/** Chosen by cross-validation on the SciFact benchmark (npm run bench:factcheck). */
export const DEFAULT_FACT_THRESHOLD = 0.9;

/** Cosine similarity from which a sentence that lacks one of the claim's words still states it (bge-small; see semanticOutcome). */
const NEAR_COPY_SIMILARITY = 0.88;

/** Sentences of each candidate passage the semantic check embeds (those sharing most words with the claim). */
const SENTENCES_PER_PASSAGE = 4;

/** Below this share of shared words a passage is not shown as support at all. */
const CLOSE_ENOUGH = 0.4;

interface Window {
  passage: EvidencePassage;
  /** Order of the passage among the candidates (cited first, then retrieval order). */
  rank: number;
  quote: string;
  /** The text analysed: the quote, with equivalent words replaced when the request gives any. */
  text: string;
  analysis: Analysis;
}

interface Scored extends Window {
  alignment: Alignment;
}

// Imperative openers of marketing copy and instructions: no claim to check.
const IMPERATIVE =
  /^(?:contact|call|click|visit|join|sign|subscribe|learn|discover|explore|read|see|try|get|let's|let us|find out|download|register|book|order|buy|follow|share|check out|stay tuned|imagine|welcome|thank|thanks|please)\b/i;

/** Why a sentence has no checkable claim, or undefined when it has one. */
function notFactual(span: SentenceSpan, claim: string, a: Analysis): boolean {
  if (/\?\s*["'”’)]*$/.test(claim)) return true;
  if (/^\s*#/.test(span.text)) return true;
  if (IMPERATIVE.test(claim)) return true;
  const content = a.stems.size;
  return content < 2 || (content < 3 && a.numbers.length === 0 && !/[.!]$/.test(claim));
}

type Part = { quote: string; text: string; analysis: Analysis };

/** Replaces every alternative of an equivalent term (whole words, any case) by the term. */
function equate(text: string, equivalents: readonly Equivalent[]): string {
  let out = text;
  for (const { term, instead_of } of equivalents)
    for (const alt of instead_of) {
      if (!alt.trim() || alt.toLowerCase() === term.toLowerCase()) continue;
      const escaped = alt
        .trim()
        .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
        .replace(/\s+/g, '\\s+');
      out = out.replace(new RegExp(`(?<![\\p{L}\\p{N}])${escaped}(?![\\p{L}\\p{N}])`, 'giu'), () => term);
    }
  return out;
}

/** A passage's sentences, from its prose only: code blocks and code-like lines are never a source span. */
function proseSentences(text: string): SentenceSpan[] {
  return proseRanges(text).flatMap((r) =>
    sentenceSpans(text.slice(r.start, r.end))
      .filter((s) => !isCodeLike(s.text))
      .map((s) => ({ ...s, start: s.start + r.start, end: s.end + r.start })),
  );
}

/**
 * Passage sentences, analysed once per passage text (and set of equivalents).
 * A sentence is backed by one sentence of a source: a word taken from the
 * sentence before or after it backs nothing. The quote is the passage's own text.
 */
function windowsOf(
  passage: EvidencePassage,
  rank: number,
  cache: Map<string, Part[]>,
  equivalents: readonly Equivalent[],
  key: string,
): Window[] {
  const cacheKey = key ? `${key}\u0000${passage.text}` : passage.text;
  let parts = cache.get(cacheKey);
  if (!parts) {
    parts = proseSentences(passage.text).map((s) => {
      const text = equivalents.length > 0 ? equate(s.text, equivalents) : s.text;
      return { quote: s.text, text, analysis: analyze(text) };
    });
    if (cache.size > 20_000) cache.clear();
    cache.set(cacheKey, parts);
  }
  return parts.map((p) => ({ passage, rank, ...p }));
}

const round = (x: number) => Math.round(x * 1000) / 1000;

const supportOfWindow = (w: Scored, score = w.alignment.score): SentenceSupport => ({
  content_id: w.passage.content_id,
  version_id: w.passage.version_id,
  chunk_id: w.passage.chunk_id,
  quote: w.quote,
  score: round(score),
});

const better = (a: Scored, b: Scored) => b.alignment.score - a.alignment.score || a.rank - b.rank || a.quote.length - b.quote.length;

interface Outcome {
  verdict: CheckedSentence['verdict'];
  support: SentenceSupport[];
  reason?: string;
  /** Best score over passages that agree on everything checkable (0 when none): for tuning. */
  best: number;
}

/**
 * How closely a span says the claim: the longest run of the claim's content
 * stems it has in the same order (a word a contradiction is about counts as in
 * place when the span has its counterpart there), as a share of them, and how
 * many span words that run spreads over (fewer is closer).
 */
function closeness(a: Analysis, w: Scored): { share: number; spread: number } {
  const claim = [...new Set(a.tokens.flatMap((t) => (t.stem ? [t.stem] : [])))];
  if (claim.length === 0) return { share: 0, spread: Infinity };
  const swap = new Map<string, string>();
  for (const issue of w.alignment.issues)
    if (issue.contradiction && issue.counterpart && issue.stems[0])
      issue.counterpart.forEach((c, k) => swap.set(c, issue.stems[issue.counterpart!.length === issue.stems.length ? k : 0]!));
  const span = w.analysis.tokens.map((t) => (t.stem ? (swap.get(t.stem) ?? t.stem) : undefined));
  // Longest common subsequence, keeping for each cell the earliest start of a best run (for its spread).
  const n = span.length;
  let previous = Array.from({ length: n + 1 }, () => ({ length: 0, start: -1 }));
  for (let i = 1; i <= claim.length; i++) {
    const current = Array.from({ length: n + 1 }, () => ({ length: 0, start: -1 }));
    for (let j = 1; j <= n; j++) {
      if (span[j - 1] !== undefined && claim[i - 1] === span[j - 1]) {
        const p = previous[j - 1]!;
        current[j] = { length: p.length + 1, start: p.length > 0 ? p.start : j - 1 };
      } else {
        const [up, left] = [previous[j]!, current[j - 1]!];
        current[j] = up.length > left.length || (up.length === left.length && up.start > left.start) ? up : left;
      }
    }
    previous = current;
  }
  // The best run ending earliest: its spread is from its start to the first position reaching that length.
  const best = previous[n]!;
  const end = previous.findIndex((c) => c.length === best.length && c.start === best.start);
  return { share: best.length / claim.length, spread: best.length > 0 ? end - best.start : Infinity };
}

/** Share of the claim a contradicting span must say in the claim's order: the disagreement stands where the claim's word does. */
const IN_PLACE = 0.75;
const inPlace = (a: Analysis, w: Scored) => closeness(a, w).share >= IN_PLACE;

/**
 * A contradicting span that says the claim more closely than the best
 * supporting one (more of it in order, or as much in fewer words): "Logging is
 * disabled by default." against "the default log level ... when enabled" for
 * "Logging is enabled by default."
 */
function tighterContradiction(a: Analysis, scored: Scored[], support: Scored, threshold: number): Scored | undefined {
  const mine = closeness(a, support);
  let best: Scored | undefined;
  let bar = mine;
  for (const w of scored) {
    // The supporting span names every code token and name the claim names: another one elsewhere does not outweigh it.
    const against = w.alignment.issues.filter((i) => i.contradiction && i.kind !== 'identifier' && i.kind !== 'entity');
    if (against.length === 0 || w.alignment.rest < threshold || !inPlace(a, w)) continue;
    const c = closeness(a, w);
    if (c.share > bar.share + 1e-9 || (Math.abs(c.share - bar.share) <= 1e-9 && c.spread < bar.spread)) [best, bar] = [w, c];
  }
  return best;
}

function judgeAgainst(claim: string, a: Analysis, candidates: Window[], threshold: number, maxSupport: number): Outcome {
  const scored: Scored[] = candidates.map((w) => ({ ...w, alignment: align(a, claim, w.analysis, w.text) }));
  const clean = scored.filter((w) => w.alignment.issues.length === 0).sort(better);
  const best = clean[0]?.alignment.score ?? 0;
  const passing = clean.filter((w) => w.alignment.score >= threshold);
  // A span that says the claim's words in the claim's order, bar one that disagrees, outweighs one that holds the
  // words scattered ("the default log level ... when enabled" does not back "logging is enabled by default" against
  // "Logging is disabled by default").
  const rival = passing.length > 0 ? tighterContradiction(a, scored, passing[0]!, threshold) : undefined;
  if (rival) {
    const issue = rival.alignment.issues.find((i) => i.contradiction)!;
    return { verdict: 'contradicted', support: [supportOfWindow(rival)], reason: issue.reason, best };
  }
  if (passing.length > 0) {
    // One support per chunk: its best span.
    const seen = new Set<string>();
    const support: SentenceSupport[] = [];
    for (const w of passing) {
      if (seen.has(w.passage.chunk_id)) continue;
      seen.add(w.passage.chunk_id);
      support.push(supportOfWindow(w));
      if (support.length >= maxSupport) break;
    }
    return { verdict: 'supported', support, best };
  }
  // A span that matches everything else, in the claim's order, but disagrees on a number, direction, negation or name contradicts it.
  const contradicting = scored
    .filter((w) => w.alignment.rest >= threshold && w.alignment.issues.some((i) => i.contradiction) && inPlace(a, w))
    .sort((x, y) => y.alignment.rest - x.alignment.rest || x.rank - y.rank);
  const c = contradicting[0];
  if (c) {
    const issue = c.alignment.issues.find((i) => i.contradiction)!;
    return { verdict: 'contradicted', support: [supportOfWindow(c)], reason: issue.reason, best };
  }
  const all = [...scored].sort((x, y) => y.alignment.coverage - x.alignment.coverage || better(x, y));
  const closest = all[0];
  if (!closest || closest.alignment.coverage < CLOSE_ENOUGH)
    return { verdict: 'unsupported', support: [], reason: 'no source says this', best };
  const withIssue = all.find((w) => w.alignment.rest >= threshold && w.alignment.issues.length > 0);
  return {
    verdict: 'unsupported',
    support: [supportOfWindow(withIssue ?? closest)],
    reason: withIssue
      ? withIssue.alignment.issues[0]!.reason
      : closest.alignment.coverage < 1
        ? `only ${Math.round(closest.alignment.coverage * 100)}% of its words are in the closest source`
        : 'no single source span backs all of it',
    best,
  };
}

/** What the semantic check saw of one candidate passage (for tuning). */
export interface PassageInspection {
  content_id: string;
  chunk_id: string;
  features: PassageFeatures;
}

/** A sentence checked, with what the benchmark tunes on. */
export interface CheckedSentenceDetail extends CheckedSentence {
  /** Best share of words held by a source span that agrees on everything else (0 when none). */
  best_score: number;
  /** The verdict of the word-for-word check alone. */
  lexical_verdict: CheckedSentence['verdict'];
  /** The candidates the semantic check compared the sentence with, when it ran. */
  passages?: PassageInspection[];
}

/** The claim without its names, code tokens and numbers (for a second search), when it has any and three words remain. */
function skeletonOf(claim: string, a: Analysis): string | undefined {
  const out = a.tokens.filter((t) => !t.entity && !t.identifier && !t.number);
  if (out.length === a.tokens.length || out.filter((t) => t.stem).length < 3) return undefined;
  return out.map((t) => t.raw).join(' ');
}

/** The copied_run and rest_words features of a span (see semantic.ts). */
function copiedRun(claimStems: string[], span: Analysis): { copied_run: number; rest_words: number } {
  if (claimStems.length === 0) return { copied_run: 0, rest_words: 0 };
  const spanStems = span.tokens.flatMap((t) => (t.stem ? [t.stem] : []));
  const run = longestCommonRun(claimStems, spanStems);
  const rest = [...claimStems.slice(0, run.start), ...claimStems.slice(run.start + run.length)];
  return {
    copied_run: run.length / claimStems.length,
    rest_words: rest.length === 0 ? 1 : rest.filter((x) => span.stems.has(x)).length / rest.length,
  };
}

/** A window of a passage with its sentence vector. */
interface Placed extends Window {
  vector: Float32Array;
}

/**
 * Agreement checks no judge overrules: a code token, a number or unit, a negation, an antonym or direction word, a
 * quantifier or modal, a name. (A word replaced in place by a non-synonym is left to the judge: it may be a rewording.)
 */
const JUDGE_VETO = new Set(['identifier', 'number', 'unit', 'negation', 'antonym', 'direction', 'quantifier', 'entity']);

/**
 * Disagreements that make a span the model takes as evidence contradict a claim in other words: the opposite word, a
 * negation, another value or code token. (A name or quantifier the span lacks in a paraphrase keeps it from backing
 * the claim, but the span may simply be about something else.)
 */
const SHOWS_CONTRADICTION = new Set(['antonym', 'direction', 'negation', 'number', 'unit', 'identifier']);

/** Agreement checks that keep a span from backing a paraphrase even when they find no contradiction (a code token or a number the span lacks). */
const VETOING = new Set(['substitution']);

/** The reason of a contradiction the decision found without a failing agreement check. */
const SAYS_OTHERWISE = 'the closest source says otherwise';

/**
 * The fact checker. Every sentence is split out with its offsets; a sentence
 * with a claim is compared with the passages it cites ([n]), then, when those
 * do not back it, with what `retrieve` finds.
 *
 * Word for word first: a passage backs the sentence when one or two
 * consecutive sentences of it hold enough of its content words and agree on
 * every number and unit, every direction word, every negation and every name;
 * a span that agrees on the rest but not on one of those contradicts it.
 *
 * Then, with an embedding model, in other words: a sentence no span backs word
 * for word is supported by a passage that states the same claim (its closest
 * span is near in meaning, every part of the sentence is, and it stands out
 * among the candidates), and contradicted when that passage goes against it
 * (see semantic.ts). With a judge, a chat model gives a second opinion.
 */
export function createFactChecker(options: FactCheckerOptions = {}): FactChecker & {
  /** The same check with what each verdict rests on. */
  checkDetailed(request: FactCheckRequest): Promise<CheckedSentenceDetail[]>;
  /** Whether sentences worded differently from their sources can be supported (an embedding model is set). */
  readonly semantic: boolean;
} {
  const threshold = options.threshold ?? DEFAULT_FACT_THRESHOLD;
  if (!(threshold >= 0 && threshold <= 1)) throw new RangeError(`threshold must be between 0 and 1, not ${threshold}`);
  if (options.retrieveLimit !== undefined && !(Number.isInteger(options.retrieveLimit) && options.retrieveLimit >= 1))
    throw new RangeError('retrieveLimit must be a positive integer');
  const retrieveLimit = options.retrieveLimit ?? 8;
  const maxSupport = options.maxSupport ?? 3;
  const semanticPassages = options.semanticPassages ?? 5;
  const weights = options.semanticWeights ?? DEFAULT_SEMANTIC_WEIGHTS;
  const embeddings = options.embeddings;
  const cache = new Map<string, Part[]>();
  const judge = options.judge
    ? createFactJudge(options.judge, {
        ...(options.judgeConcurrency !== undefined && { concurrency: options.judgeConcurrency }),
        ...(options.judgeTimeoutMs !== undefined && { timeoutMs: options.judgeTimeoutMs }),
      })
    : undefined;
  // Sentence vectors by text: passages recur across the sentences of a draft and across drafts.
  const vectors = new Map<string, Float32Array>();

  async function vectorsOf(texts: string[]): Promise<Float32Array[]> {
    const missing = [...new Set(texts.filter((t) => !vectors.has(t)))];
    if (missing.length > 0) {
      const got = await embeddings!.embed(missing, 'document');
      if (vectors.size + missing.length > 50_000) vectors.clear();
      missing.forEach((t, i) => vectors.set(t, Float32Array.from(got[i]!)));
    }
    return texts.map((t) => vectors.get(t)!);
  }

  /** The semantic check over the candidate passages, best-ranked first. */
  async function semantically(claim: string, a: Analysis, candidates: Window[]) {
    const passages: EvidencePassage[] = [];
    const ranks = new Map<string, number>();
    for (const w of candidates)
      if (!ranks.has(w.passage.chunk_id) && passages.length < semanticPassages) {
        ranks.set(w.passage.chunk_id, w.rank);
        passages.push(w.passage);
      }
    // Per passage, the sentences sharing most of the claim's words: the one that states the claim is among them, and
    // embedding only those keeps a check well under a second on a slow machine.
    const shared = (w: Window) => [...a.stems].filter((x) => w.analysis.stems.has(x)).length;
    const kept = passages.flatMap((p) =>
      candidates
        .filter((w) => w.passage.chunk_id === p.chunk_id)
        .map((w) => ({ w, n: shared(w) }))
        .sort((x, y) => y.n - x.n)
        .slice(0, SENTENCES_PER_PASSAGE)
        .map(({ w }) => w),
    );
    const singles = kept;
    const halves = halvesOf(claim);
    const [claimVector, contrastVector, ...rest] = await vectorsOf([
      claim,
      contrastOf(claim),
      ...(halves ?? []),
      ...singles.map((w) => w.text),
    ]);
    const halfVectors = halves ? rest.slice(0, 2) : [];
    const singleVectors = rest.slice(halfVectors.length);
    const byText = new Map(singles.map((w, i) => [`${w.passage.chunk_id}\u0000${w.text}`, singleVectors[i]!]));
    const placed: Placed[] = kept.map((w) => ({ ...w, vector: byText.get(`${w.passage.chunk_id}\u0000${w.text}`)! }));
    const best = passages.map((p) => {
      let top: Placed | undefined;
      let topSimilarity = -Infinity;
      for (const w of placed)
        if (w.passage.chunk_id === p.chunk_id) {
          const s = dot(claimVector!, w.vector);
          if (s > topSimilarity) [top, topSimilarity] = [w, s];
        }
      return { window: top!, similarity: topSimilarity };
    });
    const claimStems = a.tokens.flatMap((t) => (t.stem ? [t.stem] : []));
    const stems = [...new Set(claimStems)];
    const passageNumbers = (chunk: string) => kept.filter((w) => w.passage.chunk_id === chunk).flatMap((w) => w.analysis.numbers);
    const stemHalves = [stems.slice(0, Math.ceil(stems.length / 2)), stems.slice(Math.ceil(stems.length / 2))];
    const scores = passages.map((p) => p.score).filter((s): s is number => typeof s === 'number' && s > 0);
    const topScore = Math.max(0, ...scores);
    const features: PassageFeatures[] = passages.map((p, i) => {
      const { window: w, similarity } = best[i]!;
      const alignment = align(a, claim, w.analysis, w.text);
      const others = best.filter((_, j) => j !== i).map((b) => b.similarity);
      const contradicting = (kind: string) => (alignment.issues.some((x) => x.kind === kind && x.contradiction) ? 1 : 0);
      const rank = ranks.get(p.chunk_id)!;
      // The claim's numbers the passage has nowhere, and whether it gives another number in their unit instead.
      const numbers = passageNumbers(p.chunk_id);
      const missing = a.numbers.filter((n) => !numbers.some((m) => m.value === n.value));
      const otherNumber = missing.some((n) => n.unit !== undefined && numbers.some((m) => m.unit === n.unit));
      const halfSimilarity = halfVectors.map((h) => dot(h, w.vector));
      const halfWords = stemHalves.map((xs: string[]) =>
        xs.length === 0 ? 1 : xs.filter((x) => w.analysis.stems.has(x)).length / xs.length,
      );
      return {
        ...(missing.length > 0 && { lacks_number: true }),
        evidence: {
          similarity,
          halves: halfSimilarity.length === 2 ? Math.min(...halfSimilarity) : similarity,
          half_gap: halfSimilarity.length === 2 ? Math.abs(halfSimilarity[0]! - halfSimilarity[1]!) : 0,
          shared_words: alignment.score,
          word_gap: Math.abs(halfWords[0]! - halfWords[1]!),
          ...copiedRun(claimStems, w.analysis),
          first: rank === 0 ? 1 : 0,
          retrieval: p.score !== undefined && topScore > 0 ? Math.max(0, p.score) / topScore : 1 / (1 + rank),
          lead: others.length > 0 ? similarity - Math.max(...others) : 0,
        },
        contradiction: {
          contrast: dot(contrastVector!, w.vector) - similarity,
          direction: contradicting('direction'),
          negation: contradicting('negation'),
          // A number at odds counts only when the claim's number is nowhere in the passage (the closest span may just be another sentence of it).
          number: (contradicting('number') || contradicting('unit') || otherNumber) && missing.length > 0 ? 1 : 0,
          name: contradicting('entity'),
          negative_claim: a.negations.length > 0 ? 1 : 0,
        },
      };
    });
    return { passages, best, features, verdict: semanticVerdict(weights, features) };
  }

  function semanticOutcome(lexical: Outcome, s: Awaited<ReturnType<typeof semantically>>, claim: string, a: Analysis): Outcome {
    const v: SemanticVerdict = s.verdict;
    const quoteOf = (i: number, score: number): SentenceSupport => {
      const w = s.best[i]!.window;
      return {
        content_id: w.passage.content_id,
        version_id: w.passage.version_id,
        chunk_id: w.passage.chunk_id,
        quote: w.quote,
        score: round(score),
      };
    };
    if (v.verdict === 'supported') {
      // The agreement checks veto a paraphrase: a span that disagrees on a code token, a number or unit, a negation
      // or an antonym, or that says the claim in its order with another name or quantifier, or lacks its code token,
      // backs nothing, whatever the model says; the first such span contradicts.
      const vetoes = v.passages.map((i) => {
        const w = s.best[i]!.window;
        const alignment = align(a, claim, w.analysis, w.text);
        const placed = () => closeness(a, { ...w, alignment }).share >= IN_PLACE;
        const isPlaced = placed();
        const found = alignment.issues.find((x) => (x.contradiction ? isPlaced || x.kind === 'identifier' : VETOING.has(x.kind)));
        return found && { issue: found, placed: found.contradiction && isPlaced };
      });
      // Code tokens are compared exactly: a passage that never names the claim's code token backs nothing.
      const lacks = (i: number) => {
        const text = s.passages[i]!.text.toLowerCase();
        return a.identifiers.find((id) => !text.includes(id.text.split('.').at(-1)!.toLowerCase()));
      };
      const backing = v.passages.filter((i, k) => !vetoes[k] && !lacks(i));
      if (backing.length > 0)
        return {
          verdict: 'supported',
          support: backing.slice(0, maxSupport).map((i) => quoteOf(i, v.decisions[i]!.evidence)),
          best: lexical.best,
        };
      // It contradicts the claim when it says the claim in its order but for the disagreement; a paraphrase the model
      // merely senses close is left unsupported.
      const first = vetoes[0];
      if (!first) return { ...lexical, reason: `names \`${lacks(v.passages[0]!)!.text}\`, which the closest source does not` };
      return first.placed
        ? {
            verdict: 'contradicted',
            support: [quoteOf(v.passages[0]!, v.decisions[v.passages[0]!]!.evidence)],
            reason: first.issue.reason,
            best: lexical.best,
          }
        : { ...lexical, reason: first.issue.reason };
    }
    if (v.verdict === 'contradicted') {
      const w = s.best[v.passage]!.window;
      const issue = align(a, claim, w.analysis, w.text).issues.find((x) => x.contradiction && SHOWS_CONTRADICTION.has(x.kind));
      // A contradiction is shown with the disagreement it rests on; the model's sense of one alone proves nothing
      // (a sentence embedding barely tells a claim from its negation), so without one the claim stays unsupported.
      if (issue)
        return {
          verdict: 'contradicted',
          support: [quoteOf(v.passage, v.decisions[v.passage]!.contradiction)],
          reason: issue.reason,
          best: lexical.best,
        };
    }
    // Near copy: one sentence of the closest passage holds every content word of the claim but one, agrees on
    // everything checkable and means the same to the model: the missing word is a rewording ("additional" for "more").
    const near = s.best.findIndex(({ window: w, similarity }) => {
      if (similarity < NEAR_COPY_SIMILARITY) return false;
      const al = align(a, claim, w.analysis, w.text);
      const missing = a.stems.size - Math.round(al.coverage * a.stems.size);
      return al.issues.length === 0 && missing <= 1 && a.stems.size >= 4;
    });
    if (near >= 0) return { verdict: 'supported', support: [quoteOf(near, s.best[near]!.similarity)], best: lexical.best };
    if (v.verdict === 'contradicted')
      return {
        verdict: 'contradicted',
        support: [quoteOf(v.passage, v.decisions[v.passage]!.contradiction)],
        reason: SAYS_OTHERWISE,
        best: lexical.best,
      };
    return lexical;
  }

  async function checkOne(
    span: SentenceSpan,
    index: number,
    request: FactCheckRequest,
  ): Promise<JudgeItem & { sentence: CheckedSentenceDetail }> {
    const base = { index, text: span.text, start: span.start, end: span.end, ...(span.cited.length > 0 && { cited: span.cited }) };
    const equivalents = (request.equivalents ?? []).filter((e) => e.term.trim() && e.instead_of.length > 0);
    const key = equivalents.length > 0 ? JSON.stringify(equivalents) : '';
    // Lead-ins and hedges ("Please note that ...") are no way out of the check: what follows them is judged.
    const core = stripLeadIns(span.claim);
    const claim = equivalents.length > 0 ? equate(core, equivalents) : core;
    const a = analyze(claim);
    if (notFactual(span, claim, a))
      return {
        claim: core,
        sentence: { ...base, verdict: 'not_factual', support: [], best_score: 0, lexical_verdict: 'not_factual' },
      };
    const cited = request.cited ?? [];
    const citedHere = span.cited.filter((n) => n >= 1 && n <= cited.length).map((n) => cited[n - 1]!);
    const badMarkers = span.cited.filter((n) => n < 1 || n > cited.length);
    let outcome: Outcome | undefined;
    let candidates: Window[] = citedHere.flatMap((p, i) => windowsOf(p, i, cache, equivalents, key));
    if (candidates.length > 0) outcome = judgeAgainst(claim, a, candidates, threshold, maxSupport);
    if ((!outcome || outcome.verdict !== 'supported') && request.retrieve) {
      const found = await request.retrieve(core, retrieveLimit);
      const have = new Set(citedHere.map((p) => p.chunk_id));
      const more = found.filter((p) => !have.has(p.chunk_id));
      candidates = [...candidates, ...more.flatMap((p, i) => windowsOf(p, citedHere.length + i, cache, equivalents, key))];
      outcome = judgeAgainst(claim, a, candidates, threshold, maxSupport);
      // A swapped name, code token or number steers the search away from the sentence it was taken from: search
      // again without them, so that the sentence saying otherwise is among the candidates.
      const skeleton = outcome.verdict === 'unsupported' ? skeletonOf(core, a) : undefined;
      if (skeleton) {
        const seen = new Set(candidates.map((w) => w.passage.chunk_id));
        const extra = (await request.retrieve(skeleton, retrieveLimit)).filter((p) => !seen.has(p.chunk_id));
        if (extra.length > 0) {
          const from = seen.size;
          candidates = [...candidates, ...extra.flatMap((p, i) => windowsOf(p, from + i, cache, equivalents, key))];
          outcome = judgeAgainst(claim, a, candidates, threshold, maxSupport);
        }
      }
    }
    if (!outcome) outcome = { verdict: 'unsupported', support: [], reason: 'no source to check it against', best: 0 };
    const lexicalVerdict = outcome.verdict;
    let inspected: PassageInspection[] | undefined;
    // Word for word settles it when a span backs it or disagrees on a number, direction, negation or name.
    if (embeddings && outcome.verdict === 'unsupported' && candidates.length > 0) {
      // A model that fails leaves the word-for-word verdict standing: the check never fails for want of it.
      const s = await semantically(claim, a, candidates).catch(() => undefined);
      if (s) {
        inspected = s.passages.map((p, i) => ({ content_id: p.content_id, chunk_id: p.chunk_id, features: s.features[i]! }));
        const lexical: Outcome = outcome;
        outcome = semanticOutcome(lexical, s, claim, a);
      }
    }
    const reason =
      badMarkers.length > 0 && outcome.verdict !== 'supported'
        ? [outcome.reason, `cites [${badMarkers.join(', ')}], which is not among the ${cited.length} sources`].filter(Boolean).join('; ')
        : outcome.reason;
    // What the judge is asked about: the best span, with any disagreement the agreement checks hold against it.
    const asked = outcome.support[0];
    const window = asked && candidates.find((w) => w.passage.chunk_id === asked.chunk_id && w.quote === asked.quote);
    const veto =
      window &&
      align(a, claim, window.analysis, window.text).issues.find((x) => JUDGE_VETO.has(x.kind) && (x.contradiction || VETOING.has(x.kind)));
    return {
      claim: core,
      ...(asked && { span: asked }),
      ...(veto && { veto: veto.reason, vetoContradicts: veto.contradiction }),
      sentence: {
        ...base,
        verdict: outcome.verdict,
        support: outcome.support,
        ...(reason && { reason }),
        best_score: round(outcome.best),
        lexical_verdict: lexicalVerdict,
        ...(inspected && { passages: inspected }),
      },
    };
  }

  async function checkDetailed(request: FactCheckRequest): Promise<CheckedSentenceDetail[]> {
    const spans = sentenceSpans(request.text);
    const items: (JudgeItem & { sentence: CheckedSentenceDetail })[] = [];
    for (const [i, span] of spans.entries()) items.push(await checkOne(span, i, request));
    if (judge) await judge.judge(items);
    return items.map((it) => it.sentence);
  }

  return {
    checkDetailed,
    semantic: embeddings !== undefined,
    async check(request) {
      return (await checkDetailed(request)).map(({ best_score: _, lexical_verdict: _l, passages: _p, ...s }) => s);
    },
  };
}
