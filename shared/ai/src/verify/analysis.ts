import { isStopword, stem } from '@kb/search';
import { tokenize, type Token } from './text.js';

/**
 * What a sentence says, in the parts a fact check compares beyond shared
 * words: its numbers (with units), its direction words, its negations and the
 * names it mentions.
 */

export interface NumberMention {
  /** Canonical value ("1200", "0.5"). */
  value: string;
  raw: string;
  /** The unit right after the number, normalized ("%", "mg", "days"), when there is one. */
  unit?: string;
  /** Token position. */
  at: number;
}

export interface DirectionMention {
  dimension: string;
  polarity: 1 | -1;
  raw: string;
  at: number;
}

export interface AnalyzedToken extends Token {
  /** Porter stem of a content word; undefined for stopwords and punctuation-like tokens. */
  stem?: string;
  number?: NumberMention;
  direction?: DirectionMention;
  negation: boolean;
  /** A name: capitalized inside the sentence, an acronym, or letters mixed with digits (p53, IL6). */
  entity: boolean;
}

export interface Analysis {
  tokens: AnalyzedToken[];
  /** Distinct stems of content words (numbers as their canonical value). */
  stems: Set<string>;
  numbers: NumberMention[];
  directions: DirectionMention[];
  /** Token positions of negation cues. */
  negations: number[];
  /** Every word, lower case. */
  words: Set<string>;
  /** Words negated by a prefix, by the word they negate ("significant" → "nonsignificant"). */
  prefixed: Map<string, string>;
}

// ---------------------------------------------------------------------------
// Lexicons

const NEGATION_WORDS = new Set(
  'not no never none nor neither without cannot nothing nobody nowhere non lack lacks lacked lacking absent absence unable fail fails failed failing'.split(
    ' ',
  ),
);

/** Direction words by dimension: the first list goes up (+1), the second down (-1). */
const DIRECTION_LEXICON: Record<string, [string[], string[]]> = {
  amount: [
    'up increase increased increases increasing increment rise rises rose risen rising grow grows grew grown growing gain gains gained elevate elevated elevation elevates raise raised raises upregulate upregulated upregulates upregulation up-regulated augment augmented boost boosted more higher greater larger bigger above exceed exceeded exceeds accumulate accumulated expand expanded excess'.split(
      ' ',
    ),
    'down decrease decreased decreases decreasing decrement fall falls fell fallen falling decline declined declines declining drop dropped drops dropping reduce reduced reduces reducing reduction lose loses lost loss losses lower lowered lowers downregulate downregulated downregulates downregulation down-regulated diminish diminished diminishes attenuate attenuated less fewer lesser smaller below deplete depleted shrink shrank shrunk contract contracted deficit'.split(
      ' ',
    ),
  ],
  extreme: ['highest most largest greatest maximum maximal max peak'.split(' '), 'lowest least smallest minimum minimal min'.split(' ')],
  quality: [
    'improve improved improves improving improvement better best benefit beneficial favorable favourable'.split(' '),
    'worsen worsened worsens worsening deterioration deteriorate deteriorated worse worst harm harmful detrimental unfavorable unfavourable impair impaired impairs impairment'.split(
      ' ',
    ),
  ],
  // Acting on something goes the same two ways as amounts do (enhanced against reduced, induced against inhibited).
  amount_effect: [
    'promote promoted promotes promoting activate activated activates activating activation stimulate stimulated stimulates stimulating stimulation enhance enhanced enhances enhancing enhancement induce induced induces inducing induction potentiate potentiated facilitate facilitated facilitates agonist'.split(
      ' ',
    ),
    'inhibit inhibited inhibits inhibiting inhibition suppress suppressed suppresses suppressing suppression repress repressed represses repression block blocked blocks blocking prevent prevented prevents preventing prevention abolish abolished antagonize antagonized antagonist hinder hindered hinders'.split(
      ' ',
    ),
  ],
  sign: ['positive positively'.split(' '), 'negative negatively inverse inversely'.split(' ')],
  speed: [
    'faster accelerate accelerated accelerates acceleration quicker rapid'.split(' '),
    'slower decelerate decelerated slow slowed slows delay delayed delays'.split(' '),
  ],
  length: ['longer long lengthen lengthened prolonged prolong prolongs extended'.split(' '), 'shorter short shorten shortened'.split(' ')],
  strength: ['stronger strong strengthen strengthened'.split(' '), 'weaker weak weaken weakened'.split(' ')],
  time: ['later late after'.split(' '), 'earlier early before'.split(' ')],
  age: ['older elderly'.split(' '), 'younger'.split(' ')],
  cost: ['expensive costlier pricier dearer overpriced'.split(' '), 'cheaper cheap inexpensive cheapest affordable discounted'.split(' ')],
  risk: ['risk risks'.split(' '), 'protective protect protects protected protection'.split(' ')],
};

const DIRECTIONS = new Map<string, { dimension: string; polarity: 1 | -1 }>();
for (const [key, [up, down]] of Object.entries(DIRECTION_LEXICON)) {
  const dimension = key.replace(/_.*$/, '');
  for (const w of up) DIRECTIONS.set(w, { dimension, polarity: 1 });
  for (const w of down) DIRECTIONS.set(w, { dimension, polarity: -1 });
}

const NUMBER_WORDS: Record<string, number> = {
  zero: 0,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  sixty: 60,
  seventy: 70,
  eighty: 80,
  ninety: 90,
  hundred: 100,
  thousand: 1000,
  million: 1e6,
  billion: 1e9,
  twice: 2,
  double: 2,
  doubled: 2,
  triple: 3,
  tripled: 3,
  half: 0.5,
  dozen: 12,
};

/** Units and their canonical names. */
const UNITS: Record<string, string> = {
  '%': '%',
  percent: '%',
  pct: '%',
  mg: 'mg',
  g: 'g',
  kg: 'kg',
  µg: 'µg',
  μg: 'µg',
  ug: 'µg',
  mcg: 'µg',
  ng: 'ng',
  pg: 'pg',
  ml: 'ml',
  l: 'l',
  dl: 'dl',
  µl: 'µl',
  μl: 'µl',
  ul: 'µl',
  mm: 'mm',
  cm: 'cm',
  m: 'm',
  km: 'km',
  nm: 'nm',
  µm: 'µm',
  μm: 'µm',
  um: 'µm',
  microm: 'µm',
  mmol: 'mmol',
  µmol: 'µmol',
  μmol: 'µmol',
  nmol: 'nmol',
  mol: 'mol',
  mm2: 'mm2',
  mmhg: 'mmhg',
  iu: 'iu',
  kcal: 'kcal',
  cal: 'cal',
  s: 's',
  sec: 's',
  second: 's',
  seconds: 's',
  ms: 'ms',
  min: 'min',
  mins: 'min',
  minute: 'min',
  minutes: 'min',
  h: 'h',
  hr: 'h',
  hrs: 'h',
  hour: 'h',
  hours: 'h',
  d: 'days',
  day: 'days',
  days: 'days',
  wk: 'weeks',
  wks: 'weeks',
  week: 'weeks',
  weeks: 'weeks',
  mo: 'months',
  month: 'months',
  months: 'months',
  y: 'years',
  yr: 'years',
  yrs: 'years',
  year: 'years',
  years: 'years',
  fold: 'fold',
  times: 'fold',
  x: 'fold',
  usd: 'usd',
  eur: 'eur',
  dollars: 'usd',
  euros: 'eur',
  gb: 'gb',
  mb: 'mb',
  kb: 'kb',
  tb: 'tb',
  hz: 'hz',
  khz: 'khz',
  mhz: 'mhz',
  ghz: 'ghz',
  kw: 'kw',
  w: 'w',
  v: 'v',
  mv: 'mv',
  c: '°c',
  f: '°f',
};

const CURRENCY_SIGNS: Record<string, string> = { $: 'usd', '€': 'eur', '£': 'gbp' };

/** "1,200" → "1200"; "1,2" → "1.2"; "007" → "7". */
function canonicalNumber(raw: string): string {
  let s = raw;
  s = s.replace(/·/g, '.');
  if (/^\d{1,3}(?:,\d{3})+(?:\.\d+)?$/.test(s)) s = s.replace(/,/g, '');
  else s = s.replace(',', '.');
  const n = Number(s);
  return Number.isFinite(n) ? String(n) : raw;
}

// Stems of words seen, memoized (bounded): the same words recur across passages.
const STEMS = new Map<string, string>();
function stemOf(word: string): string {
  let s = STEMS.get(word);
  if (s === undefined) {
    s = stem(word);
    if (STEMS.size > 200_000) STEMS.clear();
    STEMS.set(word, s);
  }
  return s;
}

const isUpper = (s: string) => /\p{Lu}/u.test(s);

/** Analyzes a sentence (or a window of sentences). */
export function analyze(text: string): Analysis {
  const base = tokenize(text);
  const tokens: AnalyzedToken[] = base.map((t) => ({ ...t, negation: false, entity: false }));
  const numbers: NumberMention[] = [];
  const directions: DirectionMention[] = [];
  const negations: number[] = [];
  const stems = new Set<string>();

  tokens.forEach((t, i) => {
    const w = t.lower;
    // Numbers (digits or cardinal words; "one" is too often a pronoun to count).
    const digits = w.charCodeAt(0) >= 48 && w.charCodeAt(0) <= 57;
    if (digits || Object.hasOwn(NUMBER_WORDS, w)) {
      const value = digits ? canonicalNumber(w) : String(NUMBER_WORDS[w]);
      const next = tokens[i + 1];
      // The unit must follow directly ("25 mg", "12%", "3-fold").
      let unit: string | undefined;
      if (next && next.start - t.end <= 1 && Object.hasOwn(UNITS, next.lower)) unit = UNITS[next.lower];
      const before = text.slice(Math.max(0, t.start - 1), t.start);
      if (!unit && Object.hasOwn(CURRENCY_SIGNS, before)) unit = CURRENCY_SIGNS[before];
      t.number = { value, raw: t.raw, ...(unit && { unit }), at: i };
      numbers.push(t.number);
      stems.add(value);
      t.stem = value;
      return;
    }
    if (w.endsWith("n't") || NEGATION_WORDS.has(w)) {
      t.negation = true;
      negations.push(i);
    }
    const dir = DIRECTIONS.get(w);
    if (dir) {
      t.direction = { ...dir, raw: t.raw, at: i };
      directions.push(t.direction);
    }
    if (isStopword(w) || t.negation) return;
    t.stem = stemOf(w);
    stems.add(t.stem);
    // Names: an acronym or mixed letters and digits anywhere, a capital inside the sentence.
    const mixed = /\p{L}/u.test(t.raw) && /\p{N}/u.test(t.raw);
    const acronym = t.raw.length >= 2 && t.raw === t.raw.toUpperCase() && isUpper(t.raw);
    const capitalized = i > 0 && isUpper(t.raw[0]!) && !/[.!?:]\s*$/.test(text.slice(Math.max(0, t.start - 4), t.start));
    t.entity = !dir && (mixed || acronym || capitalized);
  });
  // A double negation ("not unable", "not without") cancels out: neither cue counts.
  for (let k = 0; k + 1 < negations.length; k++)
    if (negations[k + 1]! - negations[k]! === 1) {
      tokens[negations[k]!]!.negation = false;
      tokens[negations[k + 1]!]!.negation = false;
      negations.splice(k, 2);
      k--;
    }
  const words = new Set(tokens.map((t) => t.lower));
  const prefixed = new Map<string, string>();
  for (const w of words) {
    const base = prefixNegationOf(w);
    if (base !== undefined && !prefixed.has(base)) prefixed.set(base, w);
  }
  return { tokens, stems, numbers, directions, negations, words, prefixed };
}

/**
 * The analysis of consecutive pieces of one text (each analysed on its own)
 * as if the joined text had been analysed: positions and offsets shifted.
 * `offsets[i]` is where piece i starts in the joined text.
 */
export function joinAnalyses(parts: Analysis[], offsets: number[]): Analysis {
  const tokens: AnalyzedToken[] = [];
  const numbers: NumberMention[] = [];
  const directions: DirectionMention[] = [];
  const negations: number[] = [];
  const stems = new Set<string>();
  const words = new Set<string>();
  const prefixed = new Map<string, string>();
  parts.forEach((p, k) => {
    const at = tokens.length;
    const shift = offsets[k]!;
    for (const t of p.tokens) {
      const moved: AnalyzedToken = { ...t, start: t.start + shift, end: t.end + shift };
      if (t.number) numbers.push((moved.number = { ...t.number, at: t.number.at + at }));
      if (t.direction) directions.push((moved.direction = { ...t.direction, at: t.direction.at + at }));
      tokens.push(moved);
    }
    for (const n of p.negations) negations.push(n + at);
    for (const x of p.stems) stems.add(x);
    for (const x of p.words) words.add(x);
    for (const [b, w] of p.prefixed) if (!prefixed.has(b)) prefixed.set(b, w);
  });
  return { tokens, stems, numbers, directions, negations, words, prefixed };
}

/** Words that are negated by a prefix: "nonsignificant", "unchanged", "insignificant". */
export function prefixNegationOf(word: string): string | undefined {
  const m = /^(?:non-?|un|in|im|ir|il|dis)(\p{L}{4,})$/u.exec(word);
  return m?.[1];
}

export { DIRECTIONS, NEGATION_WORDS };
