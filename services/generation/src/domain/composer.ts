import { contentStems } from '@kb/search';
import { isCodeLike, proseRanges, splitSentences, stripInlineMarkup, type EvidencePassage } from '@kb/ai';
import type { Guidelines, SectionSpec } from './settings.js';

/**
 * The built-in drafter (no model, deterministic): builds each section from the
 * retrieved passages' own whole sentences (never a fragment, code or markup; see
 * isWholeSentence), and applies the brand kit's rules: a sentence with a banned
 * term or longer than the formatting allows is never used, preferred terms
 * replace the words they stand for, and the draft stays inside the content
 * type's word budget.
 *
 * Which sentences: those that cover most of the section's query (rarer words
 * weighing more, the section's own title and instructions double, a word only
 * in the document's title half), discounted by their document's retrieval rank
 * (RANK_DECAY), above a floor, and saying a word of the piece's subject
 * themselves. A sentence on a section's own subject (most of the words of its
 * title and instructions, one that no other section's has) goes to that section
 * first; what only matches the prompt fills in after. No sentence appears twice
 * in a draft, nor one that says nearly the same thing (content-stem Jaccard >=
 * 0.8). Within a section sentences read in source order: documents in the
 * order the section retrieved them, a document's chunks in its own order, a
 * chunk's sentences as they stand. A section with nothing on its subject comes
 * back empty: the caller leaves it out (sectionsWithContent). Every sentence
 * cites the passage it came from and quotes the source sentence verbatim.
 */

export interface DraftedSentence {
  text: string;
  /** The source sentence (verbatim): what a repair falls back to. */
  quote: string;
  /** Index into the section's passages; -1: the sentence cites nothing. */
  passage: number;
}

export interface DraftedSection {
  section_id: string;
  title: string;
  passages: EvidencePassage[];
  sentences: DraftedSentence[];
}

export interface SectionInput {
  section_id: string;
  spec: SectionSpec;
  /** What the section is about: the prompt, the section's title and instructions, the run's instructions. */
  query: string;
  passages: EvidencePassage[];
}

const words = (s: string) => s.split(/\s+/).filter(Boolean).length;
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const termPattern = (term: string) => new RegExp(`(?<![\\p{L}\\p{N}])${escape(term)}(?![\\p{L}\\p{N}])`, 'iu');

export function hasBannedTerm(text: string, guidelines: Guidelines): string | undefined {
  return (guidelines.banned_terms ?? []).find((t) => termPattern(t).test(text));
}

/** Replaces each preferred term's alternatives by the term, keeping a leading capital. */
export function applyPreferredTerms(text: string, guidelines: Guidelines): string {
  let out = text;
  for (const { term, instead_of } of guidelines.preferred_terms ?? []) {
    for (const alt of instead_of) {
      const re = new RegExp(`(?<![\\p{L}\\p{N}])${escape(alt)}(?![\\p{L}\\p{N}])`, 'giu');
      out = out.replace(re, (match) => (/^\p{Lu}/u.test(match) ? term.charAt(0).toUpperCase() + term.slice(1) : term));
    }
  }
  return out;
}

export function headingCase(title: string, guidelines: Guidelines): string {
  const mode = guidelines.formatting?.heading_case;
  if (mode === 'sentence') return title.charAt(0).toUpperCase() + title.slice(1).toLowerCase();
  if (mode === 'title')
    return title.replace(/\p{L}[\p{L}'’-]*/gu, (w, offset: number) =>
      offset > 0 && /^(a|an|the|and|or|of|in|on|for|to|with|by)$/i.test(w) ? w.toLowerCase() : w.charAt(0).toUpperCase() + w.slice(1),
    );
  return title;
}

/** Whether a sentence may be used at all under the brand kit. */
export function allowed(text: string, guidelines: Guidelines): boolean {
  if (hasBannedTerm(text, guidelines)) return false;
  const max = guidelines.formatting?.max_sentence_words;
  return max === undefined || words(text) <= max;
}

const ENDS_SENTENCE = /[.!?]["'”’)]?$/;

/**
 * Whether a line runs on into the next: a sentence wrapped across lines, as PDF text comes line by
 * line, continues in lower case or after a comma, semicolon or dash; a heading, a title or a table
 * row ends where its line does. (The information sign ℹ is a lower-case letter to Unicode; a callout
 * that starts with it starts a line of its own.)
 */
const runsOn = (line: string, next: string) => !ENDS_SENTENCE.test(line) && (/^(?!ℹ)\p{Ll}/u.test(next) || /[,;–—-]$/.test(line));

/** Words that continue a sentence rather than start one ("and it ...", "Which means ..."). */
const CONTINUATION = /^(?:and|but|or|nor|yet|which|whose|whom|whereas|plus|etc|e\.g|i\.e|vs|cf)\b/i;
/** A list item or enumeration carried on from what came before: "2) ...", "(b) ...", "- ...", "…", ", ...". */
const LIST_CONTINUATION = /^(?:[-–—•·*+>|]|\.\.\.|…|[,;:.)\]}]|\(?(?:\d{1,3}|[a-z]|[ivx]{1,4})\)\s|\d{1,3}\.\s)/i;
/** An abbreviation the sentence splitter took for an end ("..., e.g." before "Smith et al." or "Dr."). */
const CUT_AT_ABBREVIATION = /(?:^|[\s(])(?:e\.g|i\.e|vs|cf|al|approx|Fig|Figs|Eq|Ref|No|Dr|Mr|Mrs|Ms|Prof|St|Jr|Sr|vol|pp|ca)\.["'”’)]?$/i;
/** Inline code: a word of the sentence, whatever it holds ("`__proto__`" is not emphasis). */
const CODE_SPAN = /`[^`]*`/g;
/** Markup that cleaning left behind (outside inline code). */
const MARKUP =
  /```|~~~|\*\*|__|\]\(|\]\[|!\[|<\/?[A-Za-z][\w-]*\s*\/?>|&(?:[a-z]{2,8}|#\d{1,7}|#x[0-9a-f]{1,6});|^\s*(?:#{1,6}|>)\s|\s\|\s|\{\{|\}\}|\b(?:https?|ftp):\/\/|\uFFFD/i;

/** A callout's sign and label before its sentence: "ℹ️ Note: ", "⚠ Warning: ", "🎉 ". */
const CALLOUT = /^(?:[\p{Extended_Pictographic}\u2139\u26A0]\uFE0F?\s*)+(?:(?:Note|Warning|Tip|Important|Caution|Info)\s*:\s*)?(?=\p{Lu})/u;

const count = (text: string, ch: string) => text.split(ch).length - 1;

/** Whether the brackets and quotes of a sentence close: () [] {} “” and even " and ` counts. */
function balanced(text: string): boolean {
  const stack: string[] = [];
  const pairs: Record<string, string> = { ')': '(', ']': '[', '}': '{' };
  for (const ch of text) {
    if (ch === '(' || ch === '[' || ch === '{') stack.push(ch);
    else if (ch in pairs && stack.pop() !== pairs[ch]) return false;
  }
  return stack.length === 0 && count(text, '“') === count(text, '”') && count(text, '"') % 2 === 0 && count(text, '`') % 2 === 0;
}

/**
 * Whether a sentence (its text with inline markup removed) is whole, one an editor could keep as
 * it stands: it starts as a sentence does (a capital or a digit, possibly after an opening quote
 * or bracket; not in lower case, not with a word that continues a sentence such as "and", "but",
 * "or", "which", not with a list marker or enumeration), it ends on . ! or ? (never a colon, an
 * ellipsis or an abbreviation the splitter took for an end), its brackets and quotes close, and it
 * is neither code nor markup residue.
 */
export function isWholeSentence(text: string): boolean {
  const s = text.trim();
  if (!/^["'“‘([]?[\p{Lu}\p{N}]/u.test(s)) return false;
  if (CONTINUATION.test(s.replace(/^["'“‘([]/, '')) || LIST_CONTINUATION.test(s)) return false;
  if (!ENDS_SENTENCE.test(s) || /(?:\.\.\.|…)["'”’)]?$/.test(s) || CUT_AT_ABBREVIATION.test(s)) return false;
  if (!balanced(s) || MARKUP.test(s.replace(CODE_SPAN, '`code`')) || isCodeLike(s)) return false;
  return true;
}

/** A sentence of a passage fit to draft: the source's words verbatim (`quote`) and as drafted (`text`, inline markup removed). */
export interface SourceSentence {
  text: string;
  quote: string;
}

/**
 * A passage's whole sentences, in order, from its prose only (code blocks are never read), line by
 * line, so that a heading line never runs into the sentence after it, with a sentence wrapped
 * across lines joined up again (its first line has no end punctuation and was otherwise dropped,
 * leaving its tail as a sentence). A fragment (a chunk that starts mid-sentence, a list item's
 * tail, an abbreviation taken for an end), code and markup residue are left out.
 */
export function draftableSentences(text: string): SourceSentence[] {
  const out: SourceSentence[] = [];
  for (const { start, end } of proseRanges(text)) {
    const lines: string[] = [];
    let afterHeading = false;
    for (const raw of text.slice(start, end).split(/\n+/)) {
      const line = raw.replace(/^\s*(#{1,6}\s+|[-*+]\s+|\d+[.)]\s+)/, '').trim();
      if (!line) continue;
      const heading = /^\s*#{1,6}\s/.test(raw);
      const last = lines.at(-1);
      // A Markdown heading neither runs on into the line after it nor takes in the line before it.
      if (last !== undefined && !afterHeading && !heading && runsOn(last, line)) lines[lines.length - 1] = `${last} ${line}`;
      else lines.push(line);
      afterHeading = heading;
    }
    // A line's last "sentence" without end punctuation (a heading, a title, a row, "... as follows:")
    // is not whole and is left out below, the sentences before it on the line are kept.
    for (const line of lines) {
      // The splitter wants a capital after the stop; a sentence that starts with inline code ends the one before it too.
      for (const quote of splitSentences(line).flatMap((x) => x.split(/(?<=[\p{L}\p{N})`][.!?])\s+(?=`)/u))) {
        const clean = stripInlineMarkup(quote).replace(/\s+/g, ' ').trim().replace(CALLOUT, '');
        if (isWholeSentence(clean)) out.push({ text: clean, quote });
      }
    }
  }
  return out;
}

/** A passage's whole sentences as the source has them (see draftableSentences). */
export const sourceSentences = (text: string): string[] => draftableSentences(text).map((s) => s.quote);

/**
 * How strongly retrieval rank counts: a sentence's relevance to a section is its coverage of the
 * section's query divided by (1 + RANK_DECAY * rank), rank being its document's among the
 * documents the section retrieved, so that a sentence of the second document needs twice the
 * coverage of one of the first. Retrieval rank is the best evidence of which document is on the
 * subject: on SciFact the top hit is the relevant abstract more often (58%) than the abstract
 * holding the best-covering sentence (47%), and drafting from the top-ranked abstracts first is
 * what lifts the share of sentences citing a relevant one (36% to 64%).
 */
const RANK_DECAY = 1;
/**
 * A sentence that points at what the draft does not carry ("Below is a table ...", "see the example
 * above", "as follows"): not drafted (nor is a question: a draft states what the sources say).
 */
const LAYOUT_REFERENCE =
  /^(?:below|above)\b|\b(?:(?:see|shown|listed|described|given|explained|as|is|are)\s+(?:below|above)|(?:example|table|code|snippet|list|figure|diagram|option|section|steps?)s?\s+(?:below|above)|the following|as follows)\b/i;
/** The relevance a sentence needs to be drafted at all. */
const MIN_RELEVANCE = 0.3;
/** What a query word found only in the sentence's document title (not the sentence) counts for. */
const CONTEXT_WEIGHT = 0.5;
/**
 * A section that nothing reaches MIN_RELEVANCE for still gets the best sentence of its top-ranked
 * document when that covers at least this much of its query (retrieval put the document first).
 */
const MIN_LEAD = 0.1;
/**
 * A sentence belongs to a section (is on its own subject) when it says at least this share of the
 * words of the section's title and instructions, one of them a word no other section's has.
 */
const ON_SUBJECT = 2 / 3;
/** Content-stem Jaccard at or above which two sentences say the same thing. */
const NEAR_DUPLICATE = 0.8;

interface Occurrence {
  passage: EvidencePassage;
  /** Index in the section's passages (retrieval rank). */
  rank: number;
  /** Index among the passage's draftable sentences. */
  position: number;
}

interface PoolSentence extends SourceSentence {
  stems: Set<string>;
  /** What the sentence is about besides its own words: its document's title. */
  context: Set<string>;
  words: number;
  /** Per section: where the section's passages hold it (the best-ranked), if they do. */
  at: (Occurrence | undefined)[];
}

const normalized = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();

function jaccard(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let shared = 0;
  for (const x of a) if (b.has(x)) shared++;
  return shared / (a.size + b.size - shared);
}

/** The index of a chunk in its document ("<version>:<index>"), for reading a document's chunks in order. */
const chunkIndex = (p: EvidencePassage) => Number(/:(\d+)$/.exec(p.chunk_id)?.[1] ?? Number.NaN);

/**
 * Every distinct draftable sentence of the sections' passages, usable under the brand kit, with
 * where each section's passages hold it.
 */
function sentencePool(sections: SectionInput[], guidelines: Guidelines): PoolSentence[] {
  const pool = new Map<string, PoolSentence>();
  const parsed = new Map<string, SourceSentence[]>();
  sections.forEach((section, s) =>
    section.passages.forEach((passage, rank) => {
      const sentences = parsed.get(passage.chunk_id) ?? draftableSentences(passage.text);
      parsed.set(passage.chunk_id, sentences);
      const context = new Set(contentStems(passage.title ?? ''));
      sentences.forEach((sentence, position) => {
        const n = words(sentence.text);
        if (n < 3 || sentence.text.length < 12 || sentence.text.length > 600 || /\?["'”’)]?$/.test(sentence.text)) return;
        if (LAYOUT_REFERENCE.test(sentence.text)) return;
        if (!allowed(sentence.quote, guidelines) || !allowed(sentence.text, guidelines)) return;
        const key = normalized(sentence.text);
        const entry = pool.get(key) ?? {
          ...sentence,
          stems: new Set(contentStems(sentence.text)),
          context,
          words: n,
          at: sections.map(() => undefined),
        };
        entry.at[s] ??= { passage, rank, position };
        pool.set(key, entry);
      });
    }),
  );
  return [...pool.values()];
}

export function composeDeterministic(sections: SectionInput[], guidelines: Guidelines, budget: { max_words: number }): DraftedSection[] {
  const perSection = Math.max(15, Math.floor(budget.max_words / Math.max(1, sections.length)));
  const pool = sentencePool(sections, guidelines);
  // Rarer words weigh more: inverse frequency over every sentence the draft may use.
  const weightCache = new Map<string, number>();
  const weight = (t: string) => {
    let w = weightCache.get(t);
    if (w === undefined) {
      const df = pool.filter((c) => c.stems.has(t)).length;
      w = Math.log(1 + (pool.length + 1) / (df + 0.5));
      weightCache.set(t, w);
    }
    return w;
  };
  const subjects = sections.map(
    (section) => new Set(contentStems([section.spec.title, section.spec.instructions].filter(Boolean).join(' '))),
  );
  const queries = sections.map((section, s) => new Set([...contentStems(section.query), ...subjects[s]!]));
  // The piece's subject: what every section's query has (the prompt, the run's instructions).
  const shared = [...queries[0]!].filter((t) => queries.every((q) => q.has(t)));
  const plans = sections.map((_, s) => {
    const own = subjects[s]!;
    // The section's query, its own subject (title, instructions) weighing double against what every
    // section shares.
    const terms = [...queries[s]!].map((t) => ({ t, w: weight(t) * (own.has(t) ? 2 : 1) }));
    // What sets the section apart: its own subject's words that no other section's title or instructions has.
    const distinct = [...own].filter((t) => subjects.every((other, o) => o === s || !other.has(t)));
    return { terms, total: terms.reduce((n, x) => n + x.w, 0) || 1, own, distinct };
  });
  // A word of the query in the sentence counts whole, one only in its document's title half.
  const coverage = (c: PoolSentence, list: { t: string; w: number }[], total: number) =>
    list.reduce((n, x) => n + (c.stems.has(x.t) ? x.w : c.context.has(x.t) ? CONTEXT_WEIGHT * x.w : 0), 0) / total;
  /** The share of the section's own words the sentence says, if it says one that sets the section apart. */
  const onSubject = (c: PoolSentence, plan: (typeof plans)[number]) =>
    plan.distinct.some((t) => c.stems.has(t)) ? [...plan.own].filter((t) => c.stems.has(t)).length / plan.own.size : 0;
  // A sentence is on the piece's subject when it says one of its words itself.
  const onPiece = pool.map((c) => shared.length === 0 || shared.some((t) => c.stems.has(t)));

  // Retrieval rank by document, among the documents on the piece's subject: a document's chunks
  // share its standing, and a hit with no sentence on the subject (on a generic section title
  // alone) takes no rank from those after it.
  const effectiveRank = sections.map((section, s) => {
    const relevant = new Set<EvidencePassage>();
    pool.forEach((c, i) => {
      if (onPiece[i] && c.at[s]) relevant.add(c.at[s].passage);
    });
    const documents: string[] = [];
    return section.passages.map((p) => {
      const at = documents.indexOf(p.content_id);
      if (at >= 0 || !relevant.has(p)) return at >= 0 ? at : documents.length;
      return documents.push(p.content_id) - 1;
    });
  });

  // Where each sentence could go: a section whose passages hold it, at its document's rank there;
  // for a section on whose own subject it is, also the passage another section retrieved.
  interface Option {
    s: number;
    relevance: number;
    rank: number;
    /** Where the sentence is cited from. */
    from: Occurrence;
    /** The share of the section's own subject it says (see ON_SUBJECT). */
    share: number;
  }
  const options = pool.map((c, i): Option[] => {
    if (!onPiece[i]) return [];
    const held = c.at
      .map((o, s) => o && { o, rank: effectiveRank[s]![o.rank]! })
      .filter((o) => o !== undefined)
      .sort((a, b) => a.rank - b.rank);
    return sections.flatMap((_, s) => {
      const plan = plans[s]!;
      const share = onSubject(c, plan);
      const own = c.at[s];
      const belongs = share >= ON_SUBJECT - 1e-9;
      const at = own ? { o: own, rank: effectiveRank[s]![own.rank]! } : belongs ? held[0] : undefined;
      if (!at) return [];
      // Saying the section's own words is evidence of its own that the passage is on it: the rank counts half.
      const decay = 1 + (RANK_DECAY * at.rank) / (belongs ? 2 : 1);
      return [{ s, relevance: coverage(c, plan.terms, plan.total) / decay, rank: at.rank, from: at.o, share }];
    });
  });

  // A sentence on a section's own subject belongs to that section (the one whose subject it covers
  // most of, the earlier on a tie) when it is relevant enough there. Only what belongs to no
  // section is free for any.
  const home = options.map((list) => {
    let best: Option | undefined;
    for (const o of list)
      if (o.share >= ON_SUBJECT - 1e-9 && o.relevance >= MIN_RELEVANCE && (!best || o.share > best.share + 1e-9)) best = o;
    return best?.s ?? -1;
  });

  // Each section's candidates: first its own subject's sentences, then what matches its query (the
  // prompt) and no section's own subject; by relevance within each tier. The best sentence of its
  // top-ranked document is a last resort when nothing else reaches the floor.
  interface Pair extends Option {
    c: PoolSentence;
    tier: number;
  }
  const pairs: Pair[] = [];
  options.forEach((list, i) => {
    for (const o of list) {
      if (home[i]! >= 0 && home[i] !== o.s) continue;
      if (home[i] === o.s) pairs.push({ ...o, c: pool[i]!, tier: 0 });
      else if (!pool[i]!.at[o.s]) continue;
      else if (o.relevance >= MIN_RELEVANCE) pairs.push({ ...o, c: pool[i]!, tier: 1 });
      else if (o.rank === 0 && o.relevance >= MIN_LEAD) pairs.push({ ...o, c: pool[i]!, tier: 2 });
    }
  });
  // On a tie, the better-ranked document, then the better-ranked chunk, then the earlier sentence.
  pairs.sort(
    (a, b) =>
      a.tier - b.tier ||
      b.relevance - a.relevance ||
      a.rank - b.rank ||
      a.from.rank - b.from.rank ||
      a.from.position - b.from.position ||
      a.s - b.s,
  );

  const picked: { c: PoolSentence; from: Occurrence }[][] = sections.map(() => []);
  const wordsIn = sections.map(() => 0);
  const drafted: PoolSentence[] = [];
  for (const { c, s, tier, from } of pairs) {
    if (drafted.includes(c) || (tier === 2 && picked[s]!.length > 0)) continue;
    if (picked[s]!.length > 0 && wordsIn[s]! + c.words > perSection) continue;
    // Never the same thing twice in a draft, in other words either.
    if (drafted.some((d) => jaccard(d.stems, c.stems) >= NEAR_DUPLICATE)) continue;
    picked[s]!.push({ c, from });
    drafted.push(c);
    wordsIn[s]! += c.words;
  }

  return sections.map((section, s) => {
    const passages = [...section.passages];
    const indexOf = (p: EvidencePassage) => {
      const at = passages.findIndex((x) => x.chunk_id === p.chunk_id);
      return at >= 0 ? at : passages.push(p) - 1;
    };
    // Read in source order: documents in the order the section retrieved them, a document's chunks
    // in its own order, a chunk's sentences as they stand.
    const documentRank = new Map<string, number>();
    const cited = picked[s]!.map(({ c, from }) => {
      const passage = indexOf(from.passage);
      documentRank.set(from.passage.content_id, Math.min(documentRank.get(from.passage.content_id) ?? passage, passage));
      return { c, from, passage };
    });
    cited.sort(
      (a, b) =>
        documentRank.get(a.from.passage.content_id)! - documentRank.get(b.from.passage.content_id)! ||
        (chunkIndex(a.from.passage) || 0) - (chunkIndex(b.from.passage) || 0) ||
        a.passage - b.passage ||
        a.from.position - b.from.position,
    );
    return {
      section_id: section.section_id,
      title: headingCase(section.spec.title, guidelines),
      passages,
      sentences: cited.map(({ c, passage }) => ({ text: applyPreferredTerms(c.text, guidelines), quote: c.quote, passage })),
    };
  });
}

/**
 * The sections a draft shows: one left with no sentence (nothing on its subject was found, or the
 * fact checker removed all it had) is left out, never a heading over nothing.
 */
export const sectionsWithContent = <T extends { sentences: unknown[] }>(sections: T[]): T[] =>
  sections.filter((s) => s.sentences.length > 0);
