import { contentStems } from '@kb/search';
import { isCodeLike, proseRanges, splitSentences, stripInlineMarkup, type EvidencePassage } from '@kb/ai';
import type { Guidelines, SectionSpec } from './settings.js';

/**
 * The sentence composer, kept as bench:generation's baseline (runs, the builder and /generate draft
 * with drafting/extractive-drafter.ts, which reads passages with this module's sentence helpers).
 * It builds each section from the
 * retrieved passages' own whole sentences (never a fragment, code or markup; see
 * isWholeSentence; never a heading, glued in front of a sentence or not), and
 * applies the brand kit's rules: a sentence with a banned term or longer than
 * the formatting allows is never used, preferred terms replace the words they
 * stand for, and the draft stays inside the content type's word budget.
 *
 * Which sentences: those that cover most of the section's query (rarer words
 * weighing more, the section's own title and instructions double, a word only
 * in the sentence's context, the heading it stands under or its document's
 * title, half), discounted by their document's retrieval rank (RANK_DECAY),
 * above a floor. A sentence on a section's own subject (it or its heading says
 * most of the words of the section's title and instructions, one that no other
 * section's has) goes to that section first; what else says the section's own
 * words, or covers the prompt well without saying any word that sets another
 * section apart (PROMPT_MATCH), fills in after, if it says a word of the
 * piece's subject itself. No sentence lands in a section it has nothing to do
 * with. No sentence appears twice in a draft, nor one that says nearly the same
 * thing (content-stem Jaccard >= 0.8). Within a section sentences read in
 * source order: documents in the order the section retrieved them, a
 * document's chunks in its own order, a chunk's sentences as they stand. A
 * section with nothing on its subject comes back empty: the caller leaves it
 * out (sectionsWithContent). Every sentence cites the passage it came from
 * (its headings set apart, see headingsApart) and quotes the source sentence
 * verbatim, without its heading.
 */

export interface DraftedSentence {
  text: string;
  /** The source sentence (verbatim): what a repair falls back to. */
  quote: string;
  /** Index into the section's passages; -1: the sentence cites nothing. */
  passage: number;
  /** The paragraph of its section it opens or continues (0-based); absent: one paragraph. */
  paragraph?: number;
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

/** A source sentence with the heading it stands under in its passage, if any. */
interface HeadedSentence extends SourceSentence {
  /** The text of the nearest heading above it in the passage (a heading line, or one glued in front of a sentence). */
  heading?: string;
}

/**
 * Whether a line (list marker and Markdown heading marker removed) heads what follows it rather than
 * saying anything: a title, a slide's or a PDF page's heading ("Warranty Terms"). Short, without end
 * punctuation, starting as a title does, not a table row and not code.
 */
const isHeadingLine = (line: string) =>
  words(line) <= 12 &&
  /^["'“‘(]?[\p{Lu}\p{N}]/u.test(line) &&
  !/[.!?:;,]["'”’)]?$/.test(line) &&
  !/(?:^|\s)\|(?:\s|$)/.test(line) &&
  !isCodeLike(line);

/** Words that open a sentence and never close a heading: a capitalized one right after a title-case run starts the sentence. */
const OPENERS = new Set(
  'the this these that those each every its our your their you we they it there an most many some all any both such several'.split(' '),
);
/** Words an imperative's object starts with ("Clean the panels"). */
const DETERMINERS = new Set('the a an your this these those each every all any its their our'.split(' '));
/** Words a heading glued in front of a sentence does not hold (they open or join sentences, not titles). */
const FUNCTION_WORD =
  /^(?:a|an|the|this|these|that|those|in|on|at|for|of|to|from|by|with|and|or|but|as|if|when|while|after|before|because|since|during|how|what|why|which|who|where|is|are|was|were|be|i|we|you|they|it|he|she|there|here|most|many|some|all|any|each|every|our|your|their|its|his|her|no|not)$/i;

/**
 * Where the sentence proper starts when a heading is glued in front of it (0 when none): PDF text
 * has no heading structure, so a page's heading may run into its first sentence ("Warranty Terms
 * The panels carry ...", "Solar Panel Maintenance Guide Clean the panels ...", "RESULTS We found
 * ..."). Told apart from a sentence that starts with a name ("New Zealand has ...", "Vitamin A
 * deficiency ...", "The World Health Organization recommends ...") by what follows the run of
 * capitalized words:
 * - a label in capitals (a word of at least four letters, "METHODS AND RESULTS") followed by a
 *   capitalized word ("We", "The", "Microarrays");
 * - a title-case run whose last word opens a sentence ("The", "This", "Each", "You"; never "A" or
 *   "I", which end names) with a lower-case word after it ("Warranty Terms The panels");
 * - a title-case run of at least three words whose last word is followed by a determiner, an
 *   imperative and its object ("Solar Panel Maintenance Guide Clean the panels").
 * The heading's words are content words only (no "In", "The", "Of", ...).
 */
export function gluedHeading(sentence: string): number {
  const tokens = [...sentence.matchAll(/\S+/g)].map((m) => ({ w: m[0], at: m.index }));
  let k = 0;
  while (k < tokens.length && /^(?:\p{Lu}{2,}|&)$/u.test(tokens[k]!.w)) k++;
  if (
    k > 0 &&
    tokens[0]!.w !== '&' &&
    tokens.slice(0, k).some((t) => /^\p{Lu}{4,}$/u.test(t.w)) &&
    /^\p{Lu}\p{Ll}/u.test(tokens[k]?.w ?? '')
  )
    return tokens[k]!.at;
  k = 0;
  while (k < tokens.length && /^\p{Lu}[\p{L}'’-]*$/u.test(tokens[k]!.w)) k++;
  if (k < 2 || !/^\p{Ll}/u.test(tokens[k]?.w ?? '')) return 0;
  const heading = tokens.slice(0, k - 1);
  if (heading.some((t) => FUNCTION_WORD.test(t.w))) return 0;
  const last = tokens[k - 1]!;
  if (OPENERS.has(last.w.toLowerCase())) return last.at;
  if (heading.length >= 2 && DETERMINERS.has(tokens[k]!.w)) return last.at;
  return 0;
}

export const cleanText = (quote: string) => stripInlineMarkup(quote).replace(/\s+/g, ' ').trim().replace(CALLOUT, '');

/** A passage's prose lines as drafting reads them (see draftableSentences). */
export function proseLines(text: string): { line: string; heading: boolean }[][] {
  return proseRanges(text).map(({ start, end }) => {
    const lines: { line: string; heading: boolean; markdown: boolean }[] = [];
    for (const raw of text.slice(start, end).split(/\n+/)) {
      const line = raw.replace(/^\s*(#{1,6}\s+|[-*+]\s+|\d+[.)]\s+)/, '').trim();
      if (!line) continue;
      const markdown = /^\s*#{1,6}\s/.test(raw);
      const item = !markdown && line !== raw.trim();
      const last = lines.at(-1);
      // A Markdown heading neither runs on into the line after it nor takes in the line before it.
      if (last !== undefined && !last.markdown && !markdown && runsOn(last.line, line)) {
        last.line = `${last.line} ${line}`;
        last.heading = false;
      } else lines.push({ line, heading: markdown || (!item && isHeadingLine(line)), markdown });
    }
    return lines.map(({ line, heading }) => ({ line, heading }));
  });
}

/**
 * A passage's whole sentences with the heading each stands under. A heading glued in front of a
 * sentence (gluedHeading) is taken off it: neither the drafted text nor the quote holds it.
 */
function readSentences(text: string): (HeadedSentence & { glued?: string })[] {
  const out: (HeadedSentence & { glued?: string })[] = [];
  for (const lines of proseLines(text)) {
    let heading: string | undefined;
    // A line's last "sentence" without end punctuation (a heading, a title, a row, "... as follows:")
    // is not whole and is left out below, the sentences before it on the line are kept.
    for (const { line, heading: isHeading } of lines) {
      if (isHeading) heading = cleanText(line);
      // The splitter wants a capital after the stop; a sentence that starts with inline code ends the one before it too.
      for (let quote of splitSentences(line).flatMap((x) => x.split(/(?<=[\p{L}\p{N})`][.!?])\s+(?=`)/u))) {
        let glued: string | undefined;
        const at = gluedHeading(quote);
        if (at > 0 && words(quote.slice(at)) >= 3 && isWholeSentence(cleanText(quote.slice(at)))) {
          glued = quote.slice(0, at).trim();
          quote = quote.slice(at);
          heading = cleanText(glued);
        }
        const clean = cleanText(quote);
        if (isWholeSentence(clean)) out.push({ text: clean, quote, ...(heading !== undefined && { heading }), ...(glued && { glued }) });
      }
    }
  }
  return out;
}

/**
 * A passage's whole sentences, in order, from its prose only (code blocks are never read), line by
 * line, so that a heading line never runs into the sentence after it, with a sentence wrapped
 * across lines joined up again (its first line has no end punctuation and was otherwise dropped,
 * leaving its tail as a sentence), and a heading glued in front of a sentence (PDF text) taken off
 * it (gluedHeading). A fragment (a chunk that starts mid-sentence, a list item's tail, an
 * abbreviation taken for an end), code and markup residue are left out.
 */
export function draftableSentences(text: string): SourceSentence[] {
  return readSentences(text).map(({ text: t, quote }) => ({ text: t, quote }));
}

/**
 * The passage's text with its headings set apart by a blank line: after a heading line that the
 * next line does not run on from, and between a heading glued in front of a sentence and the
 * sentence. Only white space changes, so a span of it is still the source's own text; the fact
 * checker, which reads a sentence up to its end punctuation, then quotes the sentence without the
 * heading above it.
 */
export function headingsApart(text: string): string {
  const cuts: { start: number; end: number }[] = [];
  for (const { start, end } of proseRanges(text)) {
    const lines = [...text.slice(start, end).matchAll(/[^\n]+/g)]
      .map((m) => ({ raw: m[0], at: start + m.index }))
      .filter((l) => l.raw.trim());
    for (let i = 0; i + 1 < lines.length; i++) {
      const { raw, at } = lines[i]!;
      const next = lines[i + 1]!;
      const gap = text.slice(at + raw.length, next.at);
      if (!/^[ \t\r]*\n[ \t\r]*$/.test(gap)) continue;
      const line = raw.replace(/^\s*(#{1,6}\s+|[-*+]\s+|\d+[.)]\s+)/, '').trim();
      const markdown = /^\s*#{1,6}\s/.test(raw);
      const item = !markdown && line !== raw.trim();
      const following = next.raw.replace(/^\s*(#{1,6}\s+|[-*+]\s+|\d+[.)]\s+)/, '').trim();
      if (markdown || (!item && isHeadingLine(line) && !runsOn(line, following))) cuts.push({ start: at + raw.length, end: next.at });
    }
  }
  let from = 0;
  for (const { glued, quote } of readSentences(text)) {
    if (!glued) continue;
    const pattern = new RegExp(`${glued.split(/\s+/).map(escape).join('\\s+')}(\\s+)${escape(quote.split(/\s+/)[0]!)}`, 'u');
    const m = pattern.exec(text.slice(from));
    if (!m) continue;
    const gapAt = from + m.index + m[0].length - quote.split(/\s+/)[0]!.length - m[1]!.length;
    cuts.push({ start: gapAt, end: gapAt + m[1]!.length });
    from = gapAt;
  }
  if (cuts.length === 0) return text;
  cuts.sort((a, b) => a.start - b.start);
  let out = '';
  let at = 0;
  for (const cut of cuts) {
    if (cut.start < at) continue;
    out += `${text.slice(at, cut.start)}\n\n`;
    at = cut.end;
  }
  return out + text.slice(at);
}

/**
 * Lays out the passages the sentences cite, each once: its headings set apart (headingsApart), so
 * that what quotes a span of one (the fact checker) quotes a sentence without the heading above it.
 */
export function passageLayout(): (p: EvidencePassage) => EvidencePassage {
  const laidOut = new Map<string, EvidencePassage>();
  return (p) => {
    let out = laidOut.get(p.chunk_id);
    if (!out) {
      const text = headingsApart(p.text);
      out = text === p.text ? p : { ...p, text };
      laidOut.set(p.chunk_id, out);
    }
    return out;
  };
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
/** What a query word found only in the sentence's context (its heading, its document's title), not the sentence, counts for. */
const CONTEXT_WEIGHT = 0.5;
/**
 * A section that nothing reaches MIN_RELEVANCE for still gets the best sentence of its top-ranked
 * document when that covers at least this much of its query (retrieval put the document first).
 */
const MIN_LEAD = 0.1;
/**
 * A sentence belongs to a section (is on its own subject) when it, or the heading it stands under,
 * says at least this share of the words of the section's title and instructions, one of them a
 * word no other section's has.
 */
const ON_SUBJECT = 2 / 3;
/**
 * A sentence that says no word of a section's title and instructions (nor does its heading) goes
 * there only when it covers at least this share of the prompt's words that are no other section's
 * subject (weighted as in the section's query), and says no word that sets another section apart.
 * With one section (the prompt is its query) this is the floor every sentence has to reach anyway.
 */
const PROMPT_MATCH = MIN_RELEVANCE;
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
  /** The words of the heading it stands under in its passage. */
  heading: Set<string>;
  /** What the sentence is about besides its own words: its heading and its document's title. */
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
  const parsed = new Map<string, HeadedSentence[]>();
  sections.forEach((section, s) =>
    section.passages.forEach((passage, rank) => {
      const sentences = parsed.get(passage.chunk_id) ?? readSentences(passage.text);
      parsed.set(passage.chunk_id, sentences);
      const title = contentStems(passage.title ?? '');
      sentences.forEach((sentence, position) => {
        const n = words(sentence.text);
        if (n < 3 || sentence.text.length < 12 || sentence.text.length > 600 || /\?["'”’)]?$/.test(sentence.text)) return;
        if (LAYOUT_REFERENCE.test(sentence.text)) return;
        if (!allowed(sentence.quote, guidelines) || !allowed(sentence.text, guidelines)) return;
        const key = normalized(sentence.text);
        const heading = contentStems(sentence.heading ?? '');
        const entry = pool.get(key) ?? {
          text: sentence.text,
          quote: sentence.quote,
          stems: new Set(contentStems(sentence.text)),
          heading: new Set(heading),
          context: new Set([...heading, ...title]),
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
    // Its own subject's words alone: how much of what the section is about a sentence says.
    const subject = terms.filter((x) => own.has(x.t));
    // The prompt's words that are no section's subject (another's are that section's to draw on; its
    // own are what a sentence measured against the prompt does not say, and a generic title such as
    // "Overview", in no sentence, would only drag every sentence below the floor).
    const prompt = terms.filter((x) => shared.includes(x.t) && subjects.every((other) => !other.has(x.t)));
    const sum = (list: { w: number }[]) => list.reduce((n, x) => n + x.w, 0);
    return { terms, total: sum(terms) || 1, own, distinct, subject, subjectTotal: sum(subject), prompt, promptTotal: sum(prompt) };
  });
  // A word of the query in the sentence counts whole, one only in its context (heading, document title) half.
  const coverage = (c: PoolSentence, list: { t: string; w: number }[], total: number) =>
    total > 0 ? list.reduce((n, x) => n + (c.stems.has(x.t) ? x.w : c.context.has(x.t) ? CONTEXT_WEIGHT * x.w : 0), 0) / total : 0;
  /** Whether the sentence, or the heading it stands under, says the word. */
  const says = (c: PoolSentence, t: string) => c.stems.has(t) || c.heading.has(t);
  /** The share of the section's own words the sentence (or its heading) says, if it says one that sets the section apart. */
  const onSubject = (c: PoolSentence, plan: (typeof plans)[number]) =>
    plan.distinct.some((t) => says(c, t)) ? [...plan.own].filter((t) => says(c, t)).length / plan.own.size : 0;
  const shares = pool.map((c) => plans.map((plan) => onSubject(c, plan)));
  const belongsTo = (i: number, s: number) => shares[i]![s]! >= ON_SUBJECT - 1e-9;
  // A sentence is on the piece's subject when it says one of its words itself.
  const onPiece = pool.map((c) => shared.length === 0 || shared.some((t) => c.stems.has(t)));
  /** Whether the sentence (or its heading) says a word of the section's title or instructions. */
  const saysOwn = pool.map((c) => plans.map((plan) => [...plan.own].some((t) => says(c, t))));
  /**
   * Whether a sentence on the piece's subject fits a section: it (or its heading) says a word of the
   * section's title or instructions, or, saying none, it covers the prompt well (PROMPT_MATCH) and
   * says no word that sets another section apart. Never a sentence in a section it has nothing to
   * do with.
   */
  const fits = (i: number, s: number) => {
    if (saysOwn[i]![s]) return true;
    const c = pool[i]!;
    if (plans.some((other, o) => o !== s && other.distinct.some((t) => says(c, t)))) return false;
    return coverage(c, plans[s]!.prompt, plans[s]!.promptTotal) >= PROMPT_MATCH - 1e-9;
  };
  /** Whether the sentence may go to the section at all: on its own subject, or on the piece's and fitting it. */
  const eligible = pool.map((_, i) => sections.map((_, s) => belongsTo(i, s) || (onPiece[i]! && fits(i, s))));

  // Retrieval rank by document, among the documents with a sentence that may go to the section (on
  // its own subject, or on the piece's and fitting it): a document's chunks share its standing, and
  // a hit with no such sentence (on a generic section title alone) takes no rank from those after it.
  const effectiveRank = sections.map((section, s) => {
    const relevant = new Set<EvidencePassage>();
    pool.forEach((c, i) => {
      if (eligible[i]![s] && c.at[s]) relevant.add(c.at[s].passage);
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
    /** Its coverage of the section's own subject (title, instructions), discounted by rank as relevance is. */
    onOwn: number;
  }
  const options = pool.map((c, i): Option[] => {
    const held = c.at
      .map((o, s) => o && { o, rank: effectiveRank[s]![o.rank]! })
      .filter((o) => o !== undefined)
      .sort((a, b) => a.rank - b.rank);
    return sections.flatMap((_, s) => {
      if (!eligible[i]![s]) return [];
      const plan = plans[s]!;
      const share = shares[i]![s]!;
      const own = c.at[s];
      const belongs = belongsTo(i, s);
      const at = own ? { o: own, rank: effectiveRank[s]![own.rank]! } : belongs ? held[0] : undefined;
      if (!at) return [];
      // Saying the section's own words is evidence of its own that the passage is on it: the rank counts half.
      const decay = 1 + (RANK_DECAY * at.rank) / (belongs ? 2 : 1);
      // Saying none of them, what it has for the section is its share of the prompt: the section's
      // query would favour whichever section has the fewest words of its own.
      const relevance = saysOwn[i]![s] ? coverage(c, plan.terms, plan.total) : coverage(c, plan.prompt, plan.promptTotal);
      return [
        {
          s,
          relevance: relevance / decay,
          onOwn: coverage(c, plan.subject, plan.subjectTotal) / decay,
          rank: at.rank,
          from: at.o,
          share,
        },
      ];
    });
  });

  // A sentence on a section's own subject belongs to that section (the one whose subject it covers
  // most of, the earlier on a tie) when it covers enough of that subject (the prompt's words, which
  // every section shares, are no evidence of which section it is on). Only what belongs to no
  // section is free for any.
  const home = options.map((list) => {
    let best: Option | undefined;
    for (const o of list) if (o.share >= ON_SUBJECT - 1e-9 && o.onOwn >= MIN_RELEVANCE && (!best || o.share > best.share + 1e-9)) best = o;
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

  const layOut = passageLayout();

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
      passages: passages.map((p, i) => (cited.some((x) => x.passage === i) ? layOut(p) : p)),
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
