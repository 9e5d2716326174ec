import { isStopword, stem } from '@kb/search';
import { tokenize, type Token } from './text.js';
import { isDictionaryWord } from './lexicon.js';

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

/** A code token: an inline code span, a dotted, camelCase or snake_case name (compared exactly). */
export interface IdentifierMention {
  /** As written, without backticks, quotes or a trailing "()". */
  text: string;
  /** Token positions it covers. */
  tokens: number[];
}

/** A word saying how much or how often (all / some, always / sometimes), how exclusively (only / also) or how binding (must / may). */
export interface QuantifierMention {
  family: 'quantity' | 'scope' | 'modality';
  cls: string;
  raw: string;
  at: number;
}

/** A unit word standing on its own ("in milliseconds"), not after a number. */
export interface UnitWordMention {
  dimension: string;
  unit: string;
  raw: string;
  at: number;
}

export interface AnalyzedToken extends Token {
  /** Porter stem of a content word; undefined for stopwords and punctuation-like tokens. */
  stem?: string;
  number?: NumberMention;
  direction?: DirectionMention;
  negation: boolean;
  /** A name: capitalized inside the sentence, an acronym, letters mixed with digits (p53, IL6), or a word no dictionary has (pino). */
  entity: boolean;
  /** The code token this word is part of. */
  identifier?: IdentifierMention;
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
  identifiers: IdentifierMention[];
  quantifiers: QuantifierMention[];
  unitWords: UnitWordMention[];
}

// ---------------------------------------------------------------------------
// Lexicons

const NEGATION_WORDS = new Set(
  'not no never none nor neither without cannot nothing nobody nowhere non lack lacks lacked lacking absent absence unable fail fails failed failing except excluding unless'.split(
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

/** Quantifiers and modals by family and class: a claim that uses one class where its source uses another of the same family says something else. */
const QUANTIFIER_LEXICON: Record<QuantifierMention['family'], Record<string, string[]>> = {
  quantity: {
    all: 'all every each always everything everyone entire entirely whole invariably'.split(' '),
    some: 'some sometimes several few many most often occasionally usually rarely seldom partly partially frequently'.split(' '),
  },
  scope: { only: 'only solely exclusively'.split(' '), also: 'also additionally too'.split(' ') },
  modality: { must: 'must shall should'.split(' '), may: 'may might can could optionally'.split(' ') },
};
const QUANTIFIERS = new Map<string, { family: QuantifierMention['family']; cls: string }>();
for (const [family, classes] of Object.entries(QUANTIFIER_LEXICON) as [QuantifierMention['family'], Record<string, string[]>][])
  for (const [cls, words] of Object.entries(classes)) for (const w of words) QUANTIFIERS.set(w, { family, cls });

/** Units of time and of data size, by canonical unit: its dimension and its size in the dimension's base unit. */
const UNIT_SIZES: Record<string, { dimension: string; factor: number }> = {
  ns: { dimension: 'time', factor: 1e-9 },
  µs: { dimension: 'time', factor: 1e-6 },
  ms: { dimension: 'time', factor: 1e-3 },
  s: { dimension: 'time', factor: 1 },
  min: { dimension: 'time', factor: 60 },
  h: { dimension: 'time', factor: 3600 },
  days: { dimension: 'time', factor: 86400 },
  weeks: { dimension: 'time', factor: 604800 },
  months: { dimension: 'time', factor: 2629800 },
  years: { dimension: 'time', factor: 31557600 },
  bits: { dimension: 'data', factor: 1 / 8 },
  bytes: { dimension: 'data', factor: 1 },
  kb: { dimension: 'data', factor: 1000 },
  kib: { dimension: 'data', factor: 1024 },
  mb: { dimension: 'data', factor: 1e6 },
  mib: { dimension: 'data', factor: 1048576 },
  gb: { dimension: 'data', factor: 1e9 },
  gib: { dimension: 'data', factor: 1073741824 },
  tb: { dimension: 'data', factor: 1e12 },
};

/** Unit words that say a unit on their own (not abbreviations, which are too often something else). */
const UNIT_WORDS: Record<string, string> = {
  nanosecond: 'ns',
  nanoseconds: 'ns',
  microsecond: 'µs',
  microseconds: 'µs',
  millisecond: 'ms',
  milliseconds: 'ms',
  second: 's',
  seconds: 's',
  minute: 'min',
  minutes: 'min',
  hour: 'h',
  hours: 'h',
  day: 'days',
  days: 'days',
  week: 'weeks',
  weeks: 'weeks',
  month: 'months',
  months: 'months',
  year: 'years',
  years: 'years',
  bit: 'bits',
  bits: 'bits',
  byte: 'bytes',
  bytes: 'bytes',
  kilobyte: 'kb',
  kilobytes: 'kb',
  kibibyte: 'kib',
  kibibytes: 'kib',
  megabyte: 'mb',
  megabytes: 'mb',
  mebibyte: 'mib',
  mebibytes: 'mib',
  gigabyte: 'gb',
  gigabytes: 'gb',
  gibibyte: 'gib',
  gibibytes: 'gib',
  terabyte: 'tb',
  terabytes: 'tb',
};

/** The quantity of a number in its unit's base unit (seconds, bytes), when the unit is one of time or data size. */
export function quantityOf(n: NumberMention): { dimension: string; value: number } | undefined {
  const size = n.unit ? UNIT_SIZES[n.unit] : undefined;
  return size ? { dimension: size.dimension, value: Number(n.value) * size.factor } : undefined;
}

/** Whether two numbers state the same quantity: the same value and unit, or the same amount in other units (2 min = 120 s; 1 MiB = 1024 KiB, within the 1000/1024 ambiguity of kB). */
export function sameQuantity(a: NumberMention, b: NumberMention): boolean {
  if (a.value === b.value && (a.unit === b.unit || !a.unit || !b.unit)) return true;
  const x = quantityOf(a);
  const y = quantityOf(b);
  if (!x || !y || x.dimension !== y.dimension) return false;
  return Math.abs(x.value - y.value) <= 0.025 * Math.max(Math.abs(x.value), Math.abs(y.value));
}

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
  msec: 'ms',
  millisecond: 'ms',
  milliseconds: 'ms',
  secs: 's',
  b: 'bytes',
  byte: 'bytes',
  bytes: 'bytes',
  kib: 'kib',
  mib: 'mib',
  gib: 'gib',
  kilobyte: 'kb',
  kilobytes: 'kb',
  megabyte: 'mb',
  megabytes: 'mb',
  gigabyte: 'gb',
  gigabytes: 'gb',
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

// Code tokens outside backticks: dotted paths (fastify.addHook, request.signal), camelCase and PascalCase with an
// inner capitalised word (setNotFoundHandler, LogController; not mRNA), snake_case, and anything called with "()".
const BARE_CODE =
  /(?<![\p{L}\p{N}_$.])(?:[\p{L}_$][\p{L}\p{N}_$]*(?:\.[\p{L}_$][\p{L}\p{N}_$]*)+|\p{Ll}+\p{Lu}\p{Ll}[\p{L}\p{N}]*|\p{Lu}\p{Ll}+\p{Lu}[\p{L}\p{N}]*|[\p{L}\p{N}]+_[\p{L}\p{N}_]+)(?:\(\))?(?![\p{L}\p{N}_$])/gu;
// Dotted words that are prose, not code.
const NOT_CODE = /^(?:e\.g|i\.e|etc|vs|a\.m|p\.m|u\.s)$/i;

const cleanIdentifier = (raw: string) =>
  raw
    .trim()
    .replace(/^['"]|['"]$/g, '')
    .replace(/\(\)$/, '')
    .trim();

/** The code tokens of a text, with the token positions each covers. */
function identifiersOf(text: string, tokens: Token[]): IdentifierMention[] {
  const ranges: { start: number; end: number; text: string }[] = [];
  for (const m of text.matchAll(/`([^`\n]+)`/g)) {
    const inner = cleanIdentifier(m[1]!);
    if (inner) ranges.push({ start: m.index, end: m.index + m[0].length, text: inner });
  }
  for (const m of text.matchAll(BARE_CODE)) {
    if (ranges.some((r) => m.index >= r.start && m.index < r.end) || NOT_CODE.test(m[0])) continue;
    ranges.push({ start: m.index, end: m.index + m[0].length, text: cleanIdentifier(m[0]) });
  }
  return ranges
    .sort((a, b) => a.start - b.start)
    .map((r) => ({
      text: r.text,
      tokens: tokens.flatMap((t, i) => (t.start >= r.start && t.end <= r.end ? [i] : [])),
    }));
}

/** Analyzes a sentence (or a window of sentences). */
export function analyze(text: string): Analysis {
  const base = tokenize(text);
  const tokens: AnalyzedToken[] = base.map((t) => ({ ...t, negation: false, entity: false }));
  const numbers: NumberMention[] = [];
  const directions: DirectionMention[] = [];
  const negations: number[] = [];
  const stems = new Set<string>();
  const quantifiers: QuantifierMention[] = [];
  const unitWords: UnitWordMention[] = [];
  const identifiers = identifiersOf(text, base);
  for (const id of identifiers) for (const i of id.tokens) tokens[i]!.identifier = id;

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
      // "half a year", "a dozen hours".
      const after = tokens[i + 2];
      if (!unit && !digits && next && (next.lower === 'a' || next.lower === 'an') && after && Object.hasOwn(UNIT_WORDS, after.lower))
        unit = UNIT_WORDS[after.lower];
      const before = text.slice(Math.max(0, t.start - 1), t.start);
      if (!unit && Object.hasOwn(CURRENCY_SIGNS, before)) unit = CURRENCY_SIGNS[before];
      t.number = { value, raw: t.raw, ...(unit && { unit }), at: i };
      numbers.push(t.number);
      stems.add(value);
      t.stem = value;
      return;
    }
    // Exclusions negate what they govern as "not" does ("any logger other than Pino" = "any logger that is not Pino").
    const exclusion = (w === 'other' || w === 'rather') && tokens[i + 1]?.lower === 'than';
    if (w.endsWith("n't") || NEGATION_WORDS.has(w) || exclusion) {
      t.negation = true;
      negations.push(i);
    }
    const dir = DIRECTIONS.get(w);
    if (dir) {
      t.direction = { ...dir, raw: t.raw, at: i };
      directions.push(t.direction);
    }
    const q = t.identifier ? undefined : QUANTIFIERS.get(w);
    if (q) quantifiers.push({ ...q, raw: t.raw, at: i });
    const previous = tokens[i - 1];
    if (!t.identifier && Object.hasOwn(UNIT_WORDS, w) && !previous?.number) {
      const unit = UNIT_WORDS[w]!;
      unitWords.push({ dimension: UNIT_SIZES[unit]!.dimension, unit, raw: t.raw, at: i });
    }
    // Quantifiers and modals are compared as such (all / some, must / may), never as shared words.
    if (isStopword(w) || t.negation || q) return;
    t.stem = stemOf(w);
    stems.add(t.stem);
    // Names: an acronym or mixed letters and digits anywhere, a capital inside the sentence.
    const mixed = /\p{L}/u.test(t.raw) && /\p{N}/u.test(t.raw);
    const acronym = t.raw.length >= 2 && t.raw === t.raw.toUpperCase() && isUpper(t.raw);
    const capitalized = i > 0 && isUpper(t.raw[0]!) && !/[.!?:]\s*$/.test(text.slice(Math.max(0, t.start - 4), t.start));
    // A word no dictionary has, not part of code: a product or format name ("pino", "winston").
    const unknown =
      !t.identifier && (/^\p{Ll}{3,}$/u.test(t.raw) || (i === 0 && /^\p{Lu}\p{Ll}{2,}$/u.test(t.raw))) && !isDictionaryWord(w);
    t.entity = !dir && (mixed || acronym || capitalized || unknown);
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
  return { tokens, stems, numbers, directions, negations, words, prefixed, identifiers, quantifiers, unitWords };
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
  const identifiers: IdentifierMention[] = [];
  const quantifiers: QuantifierMention[] = [];
  const unitWords: UnitWordMention[] = [];
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
    for (const id of p.identifiers) identifiers.push({ ...id, tokens: id.tokens.map((i) => i + at) });
    for (const q of p.quantifiers) quantifiers.push({ ...q, at: q.at + at });
    for (const u of p.unitWords) unitWords.push({ ...u, at: u.at + at });
    for (const x of p.stems) stems.add(x);
    for (const x of p.words) words.add(x);
    for (const [b, w] of p.prefixed) if (!prefixed.has(b)) prefixed.set(b, w);
  });
  return { tokens, stems, numbers, directions, negations, words, prefixed, identifiers, quantifiers, unitWords };
}

/** Words that are negated by a prefix: "nonsignificant", "unchanged", "insignificant". */
export function prefixNegationOf(word: string): string | undefined {
  const m = /^(?:non-?|un|in|im|ir|il|dis)(\p{L}{4,})$/u.exec(word);
  return m?.[1];
}

export { DIRECTIONS, NEGATION_WORDS };
