import { prefixNegationOf, type Analysis, type AnalyzedToken, type NumberMention } from './analysis.js';

/**
 * One claim against one span of a passage: the share of the claim's content
 * words the span holds, and every way the span disagrees with the claim
 * beyond missing words (a number, a unit, a direction, a negation, a name).
 */

export type IssueKind = 'number' | 'unit' | 'direction' | 'negation' | 'entity';

export interface Issue {
  kind: IssueKind;
  /** The span says the opposite or a different value (rather than nothing). */
  contradiction: boolean;
  reason: string;
  /** Claim stems this issue is about (left out when judging how well the rest matches). */
  stems: string[];
}

export interface Alignment {
  /** Share of the claim's distinct content stems found in the span (0..1). */
  score: number;
  /** The same share over the stems no issue is about: "everything else matches". */
  rest: number;
  issues: Issue[];
}

const NEGATION_REACH = 5;

/** Content stems governed by the negation cue at `at`: up to three content words in the next few tokens, within the clause. */
function scopeOf(a: Analysis, at: number, text: (from: number, to: number) => string): string[] {
  const out: string[] = [];
  for (let i = at + 1; i < a.tokens.length && i <= at + NEGATION_REACH && out.length < 3; i++) {
    if (/[,;:()]/.test(text(a.tokens[i - 1]!.end, a.tokens[i]!.start))) break;
    const s = a.tokens[i]!.stem;
    if (s && !a.tokens[i]!.number) out.push(s);
  }
  return out;
}

/** Whether some negation cue precedes position `i` closely. */
const negatedAt = (a: Analysis, i: number): boolean => a.negations.some((n) => n < i && i - n <= NEGATION_REACH);

/**
 * A negation one side has over the other: for each cue of `from`, the words it
 * governs; if `to` holds those words (the same phrase) without a cue before
 * them, `to` lacks that negation.
 */
function unmatchedNegation(
  from: Analysis,
  fromText: (a: number, b: number) => string,
  to: Analysis,
): { cue: AnalyzedToken; scope: string[] } | undefined {
  for (const at of from.negations) {
    const scope = scopeOf(from, at, fromText);
    if (scope.length === 0) continue;
    const need = Math.min(2, scope.length);
    // Occurrences in `to` of the governed phrase: its first scope word with the others close by.
    const positions = to.tokens.flatMap((t, i) => (t.stem === scope[0] ? [i] : []));
    const phrase = positions.filter((i) => {
      const near = new Set(to.tokens.slice(i, i + NEGATION_REACH + 2).map((t) => t.stem));
      return scope.filter((s) => near.has(s)).length >= need;
    });
    if (phrase.length > 0 && phrase.every((i) => !negatedAt(to, i))) return { cue: from.tokens[at]!, scope };
  }
  return undefined;
}

/** The span's number a changed claim number most likely stands for: same neighbours, then same unit, then the first. */
function counterpart(claim: Analysis, n: NumberMention, span: Analysis): NumberMention | undefined {
  const around = (a: Analysis, at: number) =>
    new Set(
      [...a.tokens.slice(Math.max(0, at - 3), at), ...a.tokens.slice(at + 1, at + 4)].map((t) => t.stem).filter((s): s is string => !!s),
    );
  const mine = around(claim, n.at);
  let best: NumberMention | undefined;
  let bestScore = -1;
  for (const m of span.numbers) {
    const theirs = around(span, m.at);
    let score = [...mine].filter((s) => theirs.has(s)).length * 2;
    if (m.unit && m.unit === n.unit) score += 3;
    if (score > bestScore) {
      best = m;
      bestScore = score;
    }
  }
  return best;
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
  const total = claim.stems.size;
  if (total === 0) return { score: 0, rest: 0, issues: [] };
  let found = 0;
  for (const s of claim.stems) if (span.stems.has(s)) found++;
  const score = found / total;
  const issues: Issue[] = [];
  const cText = (a: number, b: number) => claimText.slice(a, b);

  // Numbers: every number of the claim must be in the span, with the same unit.
  for (const n of claim.numbers) {
    const same = span.numbers.filter((m) => m.value === n.value);
    if (same.length > 0) {
      if (n.unit && same.every((m) => m.unit && m.unit !== n.unit))
        issues.push({
          kind: 'unit',
          contradiction: true,
          reason: `unit of ${withUnit(n)} differs from the source's ${withUnit(same[0]!)}`,
          stems: [n.value],
        });
      continue;
    }
    const other = counterpart(claim, n, span);
    issues.push(
      other
        ? {
            kind: 'number',
            contradiction: true,
            reason: `number ${withUnit(n)} differs from the source's ${withUnit(other)}`,
            stems: [n.value],
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
    const overlap = sameDimension.map((e) => {
      const theirs = contextOf(span, e.at);
      return [...mine].filter((x) => theirs.has(x)).length;
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
  const added = unmatchedNegation(claim, cText, span);
  if (added)
    issues.push({
      kind: 'negation',
      contradiction: true,
      reason: `adds a negation ("${added.cue.raw}") the source does not have`,
      stems: [],
    });
  else {
    const dropped = unmatchedNegation(span, (a, b) => spanText.slice(a, b), claim);
    if (dropped)
      issues.push({
        kind: 'negation',
        contradiction: true,
        reason: `drops the source's negation ("${dropped.cue.raw}")`,
        stems: [],
      });
  }
  // Negations by prefix: "significant" against "nonsignificant", "changed" against "unchanged".
  const spanLower = new Set(span.tokens.map((t) => t.lower));
  const claimLower = new Set(claim.tokens.map((t) => t.lower));
  for (const t of claim.tokens) {
    if (!t.stem || span.stems.has(t.stem)) continue;
    const base = prefixNegationOf(t.lower);
    const flipped = [...spanLower].find(
      (w) => (base !== undefined && w === base) || (prefixNegationOf(w) === t.lower && !claimLower.has(w)),
    );
    if (flipped) {
      issues.push({ kind: 'negation', contradiction: true, reason: `says "${t.raw}" where the source says "${flipped}"`, stems: [t.stem] });
      break;
    }
  }

  // Names: every name of the claim must be in the span.
  const missingNames = claim.tokens.filter((t) => t.entity && t.stem && !span.stems.has(t.stem));
  if (missingNames.length > 0) {
    const claimStems = claim.stems;
    const spanNames = span.tokens.filter((t) => t.entity && t.stem && !claimStems.has(t.stem));
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

  const excluded = new Set(issues.flatMap((i) => i.stems));
  const restTotal = [...claim.stems].filter((s) => !excluded.has(s)).length;
  const restFound = [...claim.stems].filter((s) => !excluded.has(s) && span.stems.has(s)).length;
  return { score, rest: restTotal === 0 ? 0 : restFound / restTotal, issues };
}
