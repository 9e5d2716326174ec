import {
  prefixNegationOf,
  sameQuantity,
  type Analysis,
  type AnalyzedToken,
  type IdentifierMention,
  type NumberMention,
} from './analysis.js';
import { areAntonyms, areSynonyms } from './lexicon.js';

/**
 * One claim against one span of a passage: the share of the claim's content
 * words the span holds, and every way the span disagrees with the claim
 * beyond missing words (a number, a unit, a direction, a negation, a name).
 */

export type IssueKind = 'number' | 'unit' | 'direction' | 'negation' | 'entity' | 'identifier' | 'antonym' | 'quantifier' | 'substitution';

export interface Issue {
  kind: IssueKind;
  /** The span says the opposite or a different value (rather than nothing). */
  contradiction: boolean;
  reason: string;
  /** Claim stems this issue is about (left out when judging how well the rest matches). */
  stems: string[];
  /** The span's stems that stand where the claim's `stems` stand (the other identifier, the antonym, the other word). */
  counterpart?: string[];
}

export interface Alignment {
  /** How well the span backs the claim (0..1): see `backing`. */
  score: number;
  /** Plain share of the claim's distinct content stems found in the span (0..1). */
  coverage: number;
  /** The same share over the stems no issue is about: "everything else matches". */
  rest: number;
  issues: Issue[];
}

const NEGATION_REACH = 5;

/** Content stems governed by the negation cue at `at`: up to three content words in the next few tokens, within the clause. */
/** Cues that exclude one thing ("other than Pino", "except onClose") rather than negate a phrase. */
const EXCLUSIONS = new Set(['other', 'rather', 'except', 'excluding', 'unless']);
/** Cues that are verbs or nouns ("validation fails", "lacks"): their argument may stand before or after them. */
const VERBAL = /^(?:fail|fails|failed|failing|lack|lacks|lacked|lacking|absent|absence|unable|without)$/;

function scopeOf(a: Analysis, at: number, text: Gap): string[] {
  const out: string[] = [];
  const most = EXCLUSIONS.has(a.tokens[at]!.lower) ? 1 : 3;
  for (let i = at + 1; i < a.tokens.length && i <= at + NEGATION_REACH && out.length < most; i++) {
    if (CLAUSE.test(text(a.tokens[i - 1]!.end, a.tokens[i]!.start))) break;
    const s = a.tokens[i]!.stem;
    if (s && !a.tokens[i]!.number) out.push(s);
  }
  // "not all", "not only": a function word is all the cue governs.
  const next = a.tokens[at + 1];
  if (out.length === 0 && next && !next.negation && !CLAUSE.test(text(a.tokens[at]!.end, next.start))) out.push(next.stem ?? next.lower);
  return out;
}

type Gap = (from: number, to: number) => string;
const CLAUSE = /[,;:()[\].!?]/;

/** Whether a negation cue precedes position `i` closely, in the same clause. */
const negatedAt = (a: Analysis, i: number, text: Gap): boolean =>
  a.negations.some(
    (n) =>
      n < i &&
      i - n <= NEGATION_REACH &&
      !CLAUSE.test(text(a.tokens[n]!.end, a.tokens[i]!.start)) &&
      (!EXCLUSIONS.has(a.tokens[n]!.lower) || scopeOf(a, n, text).includes(a.tokens[i]!.stem ?? a.tokens[i]!.lower)),
  );

/**
 * A negation one side has over the other: for each cue of `from`, the words it
 * governs; if `to` holds those words (the same phrase) without a cue before
 * them, `to` lacks that negation.
 */
function unmatchedNegation(from: Analysis, fromText: Gap, to: Analysis, toText: Gap): { cue: AnalyzedToken; scope: string[] } | undefined {
  for (const at of from.negations) {
    // The same verbal cue on both sides ("fails schema validation", "schema validation fails") is the same negation.
    if (VERBAL.test(from.tokens[at]!.lower) && to.negations.some((n) => to.tokens[n]!.stem === from.tokens[at]!.stem)) continue;
    const scope = scopeOf(from, at, fromText);
    if (scope.length === 0) continue;
    const need = Math.min(2, scope.length);
    // Occurrences in `to` of the governed phrase: its first scope word with the others close by.
    const key = (t: AnalyzedToken) => t.stem ?? t.lower;
    // The phrase is found by the first of its words `to` has ("does not get passed a callback" against "are passed a callback").
    const has = new Set(to.tokens.map(key));
    const anchor = scope.find((s) => has.has(s));
    const positions = to.tokens.flatMap((t, i) => (anchor !== undefined && key(t) === anchor ? [i] : []));
    const phrase = positions.filter((i) => {
      const near = new Set(to.tokens.slice(i, i + NEGATION_REACH + 2).map(key));
      return scope.filter((s) => near.has(s)).length >= need;
    });
    if (phrase.length > 0 && phrase.every((i) => !negatedAt(to, i, toText))) return { cue: from.tokens[at]!, scope };
  }
  return undefined;
}

/**
 * How alike the surroundings of a claim's number and a span's number are: the
 * content stems within three tokens of both, plus those at the same place
 * ("enrolled 55 patients" against "enrolled 40 patients").
 */
function contextMatch(claim: Analysis, n: NumberMention, span: Analysis, m: NumberMention): number {
  const at = (a: Analysis, i: number) => {
    const t = a.tokens[i];
    return t && !t.number ? t.stem : undefined;
  };
  const around = (a: Analysis, i: number) => new Set([-3, -2, -1, 1, 2, 3].map((d) => at(a, i + d)).filter((s): s is string => !!s));
  const theirs = around(span, m.at);
  let score = [...around(claim, n.at)].filter((s) => theirs.has(s)).length;
  for (const d of [-2, -1, 1, 2]) {
    const s = at(claim, n.at + d);
    if (s && s === at(span, m.at + d)) score += 2;
  }
  return score;
}

/** The span's number a claim number most likely stands for: same neighbours, then same unit, then the first. */
function counterpart(
  claim: Analysis,
  n: NumberMention,
  span: Analysis,
  candidates = span.numbers,
): (NumberMention & { context: number }) | undefined {
  let best: (NumberMention & { context: number }) | undefined;
  let bestScore = -1;
  for (const m of candidates) {
    const context = contextMatch(claim, n, span, m);
    let score = context * 2;
    if (m.unit && m.unit === n.unit) score += 1;
    if (m.value === n.value) score += 0.5;
    if (score > bestScore) {
      best = { ...m, context };
      bestScore = score;
    }
  }
  return best;
}

/** The claim's content stems in order, each once. */
function orderedStems(a: Analysis): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const t of a.tokens)
    if (t.stem && !seen.has(t.stem)) {
      seen.add(t.stem);
      out.push(t.stem);
    }
  return out;
}

/**
 * How well a span backs the claim: the share of its content stems the span
 * holds; for a claim of six stems or more, the share in its less-backed half,
 * so that half a sentence glued to another source's half is not backed.
 */
function backing(order: string[], have: Set<string>, excluded: Set<string>): number {
  const list = order.filter((s) => !excluded.has(s));
  if (list.length === 0) return 0;
  const share = (xs: string[]) => xs.filter((s) => have.has(s)).length / xs.length;
  if (list.length < 6) return share(list);
  const half = Math.floor(list.length / 2);
  return Math.min(share(list.slice(0, half)), share(list.slice(half)));
}

/** Content stems within a few tokens of position `at`. */
function contextOf(a: Analysis, at: number, reach = 4): Set<string> {
  const out = new Set<string>();
  for (let i = Math.max(0, at - reach); i <= Math.min(a.tokens.length - 1, at + reach); i++) {
    const s = a.tokens[i]!.stem;
    if (i !== at && s && !a.tokens[i]!.direction) out.add(s);
  }
  return out;
}

const withUnit = (n: NumberMention) => (n.unit ? (n.unit === '%' ? `${n.raw}%` : `${n.raw} ${n.unit}`) : n.raw);

export function align(claim: Analysis, claimText: string, span: Analysis, spanText: string): Alignment {
  if (claim.stems.size === 0) return { score: 0, coverage: 0, rest: 0, issues: [] };
  const order = orderedStems(claim);
  const issues: Issue[] = [];
  const cText = (a: number, b: number) => claimText.slice(a, b);

  // Numbers: every number of the claim must be in the span, with the same unit.
  const usedTimes = new Map<string, number>();
  for (const n of claim.numbers) {
    const same = span.numbers.filter((m) => sameQuantity(n, m));
    const used = (usedTimes.get(n.value) ?? 0) + 1;
    usedTimes.set(n.value, used);
    // The same value, as often as the claim uses it, and not standing where the span has another number.
    const other = counterpart(claim, n, span);
    const displaced =
      other !== undefined && !sameQuantity(n, other) && other.context > Math.max(0, ...same.map((m) => contextMatch(claim, n, span, m)));
    if (same.length >= used && !displaced) {
      if (n.unit && same.every((m) => m.unit && m.unit !== n.unit && m.value === n.value))
        issues.push({
          kind: 'unit',
          contradiction: true,
          reason: `unit of ${withUnit(n)} differs from the source's ${withUnit(same[0]!)}`,
          stems: [n.value, claim.tokens[n.at + 1]?.stem].filter((x): x is string => !!x),
        });
      continue;
    }
    const differing = counterpart(
      claim,
      n,
      span,
      span.numbers.filter((m) => !sameQuantity(n, m)),
    );
    // The same figure in another unit that is not the same amount: "30 weeks" where the source says "30 days".
    const otherUnit = n.unit ? span.numbers.find((m) => m.value === n.value && m.unit && m.unit !== n.unit) : undefined;
    if (otherUnit && same.length === 0) {
      issues.push({
        kind: 'unit',
        contradiction: true,
        reason: `unit of ${withUnit(n)} differs from the source's ${withUnit(otherUnit)}`,
        stems: [n.value, claim.tokens[n.at + 1]?.stem].filter((x): x is string => !!x),
      });
      continue;
    }
    issues.push(
      differing
        ? {
            kind: 'number',
            contradiction: true,
            reason: `number ${withUnit(n)} differs from the source's ${withUnit(differing)}`,
            stems: [n.value],
            counterpart: [differing.value],
          }
        : { kind: 'number', contradiction: false, reason: `number ${withUnit(n)} is not in the source`, stems: [n.value] },
    );
  }

  // Directions: a word going one way where the span only has the other way of the same dimension.
  // Where the span has several, the ones among the same words as the claim's decide.
  for (const d of claim.directions) {
    const sameDimension = span.directions.filter((e) => e.dimension === d.dimension);
    if (sameDimension.length === 0) continue;
    const mine = contextOf(claim, d.at);
    const stemAt = (a: Analysis, i: number) => (a.tokens[i]?.direction ? undefined : a.tokens[i]?.stem);
    const overlap = sameDimension.map((e) => {
      const theirs = contextOf(span, e.at);
      let score = [...mine].filter((x) => theirs.has(x)).length;
      // The same word right beside it counts most ("TCR activation, Nlrp12" against "TCR inhibition, Nlrp12").
      for (const k of [-2, -1, 1, 2]) {
        const x = stemAt(claim, d.at + k);
        if (x && x === stemAt(span, e.at + k)) score += 2;
      }
      return score;
    });
    const top = Math.max(...overlap);
    const local = top > 0 ? sameDimension.filter((_, i) => overlap[i] === top) : sameDimension;
    if (local.some((e) => e.polarity === d.polarity)) continue;
    const stemOf = claim.tokens[d.at]!.stem;
    issues.push({
      kind: 'direction',
      contradiction: true,
      reason: `says "${d.raw}" where the source says "${local[0]!.raw}"`,
      stems: stemOf ? [stemOf] : [],
    });
  }

  // Negations, by cue words: one the span lacks, or one the claim dropped.
  const sText = (a: number, b: number) => spanText.slice(a, b);
  const added = unmatchedNegation(claim, cText, span, sText);
  if (added)
    issues.push({
      kind: 'negation',
      contradiction: true,
      reason: `adds a negation ("${added.cue.raw}") the source does not have`,
      stems: [],
    });
  else {
    const dropped = unmatchedNegation(span, sText, claim, cText);
    if (dropped)
      issues.push({
        kind: 'negation',
        contradiction: true,
        reason: `drops the source's negation ("${dropped.cue.raw}")`,
        stems: [],
      });
  }
  // Negations by prefix: "significant" against "nonsignificant", "changed" against "unchanged".
  for (const t of claim.tokens) {
    if (!t.stem || span.stems.has(t.stem)) continue;
    const base = prefixNegationOf(t.lower);
    const flipped =
      base !== undefined && span.words.has(base)
        ? base
        : !claim.words.has(span.prefixed.get(t.lower) ?? '')
          ? span.prefixed.get(t.lower)
          : undefined;
    if (flipped) {
      issues.push({ kind: 'negation', contradiction: true, reason: `says "${t.raw}" where the source says "${flipped}"`, stems: [t.stem] });
      break;
    }
  }

  // Names: every name of the claim must be in the span.
  const missingNames = claim.tokens.filter((t) => t.entity && t.stem && !span.stems.has(t.stem));
  if (missingNames.length > 0) {
    const claimStems = claim.stems;
    // The span's names the claim lacks, the one standing where the claim's first missing name stands first.
    const neighbours = (a: Analysis, t: AnalyzedToken) => {
      const i = a.tokens.indexOf(t);
      return [a.tokens[i - 1]?.stem, a.tokens[i + 1]?.stem, a.tokens[i - 2]?.stem, a.tokens[i + 2]?.stem].filter((x): x is string => !!x);
    };
    const around = new Set(neighbours(claim, missingNames[0]!));
    const fit = (t: AnalyzedToken) => neighbours(span, t).filter((x) => around.has(x)).length;
    const spanNames = span.tokens.filter((t) => t.entity && t.stem && !claimStems.has(t.stem)).sort((x, y) => fit(y) - fit(x));
    const names = [...new Set(missingNames.map((t) => t.raw))];
    issues.push({
      kind: 'entity',
      contradiction: spanNames.length > 0,
      reason:
        spanNames.length > 0
          ? `names ${names.map((n) => `"${n}"`).join(', ')} where the source names "${spanNames[0]!.raw}"`
          : `names ${names.map((n) => `"${n}"`).join(', ')}, which the source does not`,
      stems: [...new Set(missingNames.map((t) => t.stem!))],
    });
  }

  const have = covered(claim, span);
  issues.push(...identifierIssues(claim, span, spanText));
  issues.push(...wordIssues(claim, span, have, issues));
  // "Everything else matches": the words a contradiction is about aside; a word the span merely lacks still counts against it.
  const excluded = new Set(issues.flatMap((i) => (i.contradiction ? i.stems : [])));
  const coverage = order.filter((s) => have.has(s)).length / order.length;
  return { score: backing(order, have, new Set()), coverage, rest: backing(order, have, excluded), issues };
}

/**
 * The claim's stems the span holds: the same stem, a number stating the same
 * quantity in other units, or a word WordNet gives as a synonym (or another
 * form of the same lemma) of one of the span's.
 */
function covered(claim: Analysis, span: Analysis): Set<string> {
  const have = new Set<string>();
  const spanWords = span.tokens.filter((t) => t.stem && !t.number && !t.identifier && !claim.stems.has(t.stem));
  for (const t of claim.tokens) {
    if (!t.stem || have.has(t.stem)) continue;
    if (span.stems.has(t.stem)) have.add(t.stem);
    else if (t.number) {
      if (span.numbers.some((m) => sameQuantity(t.number!, m))) have.add(t.stem);
    } else if (!t.identifier && !t.entity && spanWords.some((u) => !u.entity && areSynonyms(t.lower, u.lower))) have.add(t.stem);
  }
  return have;
}

/** Whether a code token of the claim is the span's: the same, or one a dotted path of the other ends with (addHook, fastify.addHook). */
function sameIdentifier(a: string, b: string): boolean {
  if (a === b) return true;
  const [short, long] = a.length < b.length ? [a, b] : [b, a];
  return long.endsWith(`.${short}`);
}

/**
 * Code tokens are compared exactly: every one the claim names must be in the
 * span (in code or as a word of its prose); one the span lacks, where the span
 * names another, is a contradiction (useHook where the source says addHook).
 */
function identifierIssues(claim: Analysis, span: Analysis, spanText: string): Issue[] {
  const issues: Issue[] = [];
  const matched = new Set<IdentifierMention>();
  for (const id of claim.identifiers) {
    const hit = span.identifiers.find((s) => sameIdentifier(id.text, s.text));
    if (hit) {
      matched.add(hit);
      continue;
    }
    // A plain word or number in code (`true`, `GET`, `503`) may stand in the span's prose.
    const escaped = id.text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    if (new RegExp(`(?<![\\p{L}\\p{N}_.$])${escaped}(?![\\p{L}\\p{N}_$])`, 'u').test(spanText)) continue;
    const stems = id.tokens.flatMap((i) => (claim.tokens[i]!.stem ? [claim.tokens[i]!.stem!] : []));
    const other = span.identifiers.find((s) => !matched.has(s) && !claim.identifiers.some((c) => sameIdentifier(c.text, s.text)));
    issues.push(
      other
        ? {
            kind: 'identifier',
            contradiction: true,
            reason: `names \`${id.text}\` where the source names \`${other.text}\``,
            stems,
            counterpart: other.tokens.flatMap((i) => (span.tokens[i]!.stem ? [span.tokens[i]!.stem!] : [])),
          }
        : { kind: 'identifier', contradiction: false, reason: `names \`${id.text}\`, which the source does not`, stems },
    );
  }
  return issues;
}

const isContent = (t: AnalyzedToken) => t.stem !== undefined && !t.number && !t.identifier;

/**
 * The claim's words against the span's: an antonym (WordNet's) of a word of
 * the span, another quantifier or modal of the same kind (some where the span
 * says all, may where it says must), a unit word of the same dimension
 * (seconds where it says milliseconds), or, in one slot between words both
 * share, a single word the span replaces with one that is not its synonym.
 */
function wordIssues(claim: Analysis, span: Analysis, have: Set<string>, found: readonly Issue[]): Issue[] {
  const issues: Issue[] = [];
  const spanOnly = span.tokens.filter((t) => isContent(t) && !claim.stems.has(t.stem!));
  const claimOnly = claim.tokens.filter((t) => isContent(t) && !have.has(t.stem!));
  for (const t of claimOnly) {
    const opposite = spanOnly.find((u) => areAntonyms(t.lower, u.lower));
    if (opposite) {
      issues.push({
        kind: 'antonym',
        contradiction: true,
        reason: `says "${t.raw}" where the source says "${opposite.raw}"`,
        stems: [t.stem!],
        counterpart: [opposite.stem!],
      });
      break;
    }
  }

  for (const family of ['quantity', 'scope', 'modality'] as const) {
    const mine = claim.quantifiers.filter((q) => q.family === family);
    const theirs = span.quantifiers.filter((q) => q.family === family);
    const other = theirs.find((q) => !mine.some((m) => m.cls === q.cls));
    const differing = mine.find((q) => !theirs.some((m) => m.cls === q.cls));
    if (differing && other)
      issues.push({
        kind: 'quantifier',
        contradiction: true,
        reason: `says "${differing.raw}" where the source says "${other.raw}"`,
        stems: [],
      });
    else if (family === 'quantity' && differing?.cls === 'all' && !claim.quantifiers.some((q) => q.cls === 'only')) {
      // "for every plugin" where the source says "only for the plugin".
      const only = span.quantifiers.find((q) => q.cls === 'only');
      if (only)
        issues.push({
          kind: 'quantifier',
          contradiction: true,
          reason: `says "${differing.raw}" where the source says "${only.raw}"`,
          stems: [],
        });
    } else if (differing && family === 'scope' && differing.cls === 'only')
      issues.push({ kind: 'quantifier', contradiction: false, reason: `says "${differing.raw}", which the source does not`, stems: [] });
  }

  for (const u of claim.unitWords) {
    if (span.unitWords.some((v) => v.unit === u.unit) || span.numbers.some((n) => n.unit === u.unit)) continue;
    const other = span.unitWords.find((v) => v.dimension === u.dimension && !claim.unitWords.some((w) => w.unit === v.unit));
    if (other) {
      const stem = claim.tokens[u.at]!.stem;
      issues.push({
        kind: 'unit',
        contradiction: true,
        reason: `says "${u.raw}" where the source says "${other.raw}"`,
        stems: stem ? [stem] : [],
        ...(span.tokens[other.at]!.stem && { counterpart: [span.tokens[other.at]!.stem!] }),
      });
    }
  }

  // One word replaced between shared neighbours ("append" where the span says "truncate", "efficient" where it says
  // "performant"), in a claim of four content words or more (three of them in place).
  if (claimOnly.length === 1 && claim.stems.size >= 4 && ![...found, ...issues].some((i) => i.contradiction)) {
    const t = claimOnly[0]!;
    const at = claim.tokens.indexOf(t);
    const content = (a: Analysis, from: number, step: 1 | -1) => {
      for (let i = from + step; i >= 0 && i < a.tokens.length; i += step) if (a.tokens[i]!.stem) return i;
      return -1;
    };
    const before = content(claim, at, -1);
    const after = content(claim, at, 1);
    const find = (i: number) => (i < 0 ? -1 : span.tokens.findIndex((u) => u.stem === claim.tokens[i]!.stem));
    const [b, a] = [find(before), find(after)];
    // At the claim's start or end, the slot is the span's start or end.
    if ((before < 0 || b >= 0) && (after < 0 || a >= 0) && (before >= 0 || after >= 0)) {
      const from = b >= 0 ? b + 1 : 0;
      const to = a >= 0 ? a : span.tokens.length;
      const between = span.tokens.slice(from, to).filter((u) => u.stem);
      const replaced = between.length === 1 ? between[0]! : undefined;
      if (replaced && isContent(replaced) && !claim.stems.has(replaced.stem!) && !areSynonyms(t.lower, replaced.lower))
        // Not a contradiction by itself (it may be a rewording WordNet does not know), but the span does not back the claim.
        issues.push({
          kind: 'substitution',
          contradiction: false,
          reason: `says "${t.raw}" where the source says "${replaced.raw}"`,
          stems: [t.stem!],
          counterpart: [replaced.stem!],
        });
    }
  }
  return issues;
}
