import { contentStems } from '@kb/search';
import { nothingFound, withCitations, type ComposedAnswer, type SourceChunk } from './answer.js';
import { isCodeLike, proseRanges, stripInlineMarkup } from './prose.js';

export interface ExtractiveOptions {
  /** Sentences in the answer (default 3). */
  maxSentences?: number;
  /** Sentences longer than this are not quoted (default 600 characters). */
  maxSentenceLength?: number;
}

/** A table row as ingest writes a spreadsheet's or CSV's rows: "product: Inverter 5kW; price: 899; currency: EUR". */
const RECORD = /^[^:;|]+: [^;]*(?:; [^:;|]+: [^;]*)+$/;
/** A list item's marker: "- ", "* ", "• ", "1. ", "2) ". */
const LIST_ITEM = /^(?:[-*•+]|\d+[.)])\s+/;

/** Inline code (`x`, ``x``): one word to the sentence splitter, never a sentence boundary. */
const INLINE_CODE = /(`+)(?!`)[^\n]*?[^`\n]\1(?!`)/g;
const HELD = /\uE000(\d+)\uE001/g;

/**
 * Splits prose into sentences: after . ! ? followed by space and a capital, digit, quote,
 * bracket or inline code; what is inside inline code never ends a sentence.
 */
function splitProse(text: string): string[] {
  const spans: string[] = [];
  const held = text.replace(/[\uE000\uE001]/g, '').replace(INLINE_CODE, (code) => `\uE000${spans.push(code) - 1}\uE001`);
  return held
    .replace(/\s+/g, ' ')
    .split(/(?<=[.!?])\s+(?=["'([\p{Lu}\p{N}\uE000])/u)
    .map((s) => s.replace(HELD, (_, n: string) => spans[Number(n)] ?? '').trim())
    .filter((s) => s.length > 0);
}

/**
 * A chunk's sentences, the units an answer quotes. They come from its prose only: a fenced code
 * block is never split into sentences, markup that an older chunk still carries is removed first
 * (links read as their text, no HTML tags), and a "sentence" that is really code or markup
 * (isCodeLike) is never a unit. Its heading lines are left out: a heading is not a sentence of
 * the answer, and having no end punctuation it would run into the sentence after it ("Warranty
 * Terms The panels carry ..."). Each table row is a unit of its own (rows have no end punctuation
 * either, so a sheet ran together into one "sentence" too long to quote), and the header row
 * above them goes, as every row repeats it. Each list item is a unit of its own too, without its
 * marker ("heating. - Service the unit ..." was one sentence).
 */
function sentencesOf(chunk: SourceChunk): string[] {
  // A chunk that does not open with its section's heading continues the chunk before it: its
  // first line is the overlap carried over, which starts mid-sentence ("authentication, where ...").
  const section = chunk.heading_path?.at(-1);
  const firstLine = chunk.text.trimStart().split('\n', 1)[0]!.trim();
  const continues =
    section !== undefined &&
    stripInlineMarkup(firstLine)
      .replace(/^#{1,6}\s+/, '')
      .trim() !== stripInlineMarkup(section).trim();
  const headings = new Set(
    (chunk.heading_path ?? []).flatMap((h) => {
      const clean = stripInlineMarkup(h).trim();
      return [h.trim(), clean, clean.replace(/`/g, '')];
    }),
  );
  const units: string[] = [];
  let prose: string[] = [];
  const flush = () => {
    if (prose.length > 0) units.push(...splitProse(prose.join('\n')).filter((s) => !isCodeLike(s)));
    prose = [];
  };
  let opening = true;
  for (const range of proseRanges(chunk.text)) {
    // A code block between two parts of prose ends the sentence before it.
    flush();
    for (const line of stripInlineMarkup(chunk.text.slice(range.start, range.end)).split('\n')) {
      const text = line.trim();
      if (!text) continue;
      const carried = opening && continues && range.start === 0 && text.length <= OVERLAP_CHARS;
      opening = false;
      if (carried) continue;
      if (headings.has(text) || headings.has(text.replace(/^#{1,6}\s+/, ''))) {
        flush();
      } else if (RECORD.test(text)) {
        if (prose.at(-1)?.includes(' | ')) prose.pop();
        flush();
        units.push(text);
      } else if (LIST_ITEM.test(text) || isCodeLike(text)) {
        // A list item, or a line with code in it (an older chunk's flattened code block), is a
        // paragraph of its own: code never runs into the sentence after it.
        flush();
        units.push(...splitProse(text.replace(LIST_ITEM, '')).filter((s) => !isCodeLike(s)));
      } else {
        prose.push(text);
      }
    }
  }
  flush();
  // A unit that does not start as a sentence does (a tail cut by chunking, a list's continuation) is not quoted; a table row is a unit as it stands.
  return units.filter((u) => RECORD.test(u) || (STARTS_SENTENCE.test(u) && !CONTINUES.test(u)));
}

/** The most a chunk carries over from the one before it (ingest's overlap, with room to spare). */
const OVERLAP_CHARS = 300;
const STARTS_SENTENCE = /^["'“‘([`]?[\p{Lu}\p{N}`]/u;
const CONTINUES = /^(?:and|but|or|nor|which|whose|whom|whereas|e\.g|i\.e|etc)\b/i;
const normalized = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();

/**
 * The built-in composer (no model, deterministic): picks the sentences of the
 * top chunks that cover most of the question's content words, rarer words
 * weighing more (a word found only in the chunk's title or headings at half),
 * and cites the chunk each came from. When no sentence covers enough of the
 * question, the answer says nothing relevant was found.
 */
export function composeExtractiveAnswer(question: string, chunks: SourceChunk[], options: ExtractiveOptions = {}): ComposedAnswer {
  const maxSentences = options.maxSentences ?? 3;
  const maxLength = options.maxSentenceLength ?? 600;
  const terms = [...new Set(contentStems(question))];
  if (terms.length === 0 || chunks.length === 0) return nothingFound();

  // What a chunk's sentences are about besides their own words: its document's title and the
  // headings it sits under ("Service the unit every two years." under "Heat pumps").
  const context = chunks.map((chunk) => new Set(contentStems([chunk.title ?? '', ...(chunk.heading_path ?? [])].join(' '))));
  const candidates = chunks.flatMap((chunk, index) =>
    sentencesOf(chunk)
      .filter((s) => s.length <= maxLength && s.length >= 12)
      .map((text, position) => ({ text, chunk: index, position, stems: new Set(contentStems(text)) })),
  );
  // Inverse sentence frequency: a word in every sentence says little about which to pick.
  const weight = new Map(
    terms.map((t) => {
      const df = candidates.filter((c) => c.stems.has(t)).length;
      return [t, Math.log(1 + (candidates.length + 1) / (df + 0.5))];
    }),
  );
  const totalWeight = terms.reduce((sum, t) => sum + weight.get(t)!, 0);
  const scored = candidates
    .map((c) => {
      const own = terms.filter((t) => c.stems.has(t));
      // A question word only the title or a heading has counts at half: the sentence must say something itself.
      const inContext = terms.filter((t) => !c.stems.has(t) && context[c.chunk]!.has(t));
      const coverage =
        (own.reduce((sum, t) => sum + weight.get(t)!, 0) + 0.5 * inContext.reduce((sum, t) => sum + weight.get(t)!, 0)) / totalWeight;
      // Retrieval order is evidence too: a sentence of the first chunk wins a tie.
      return { ...c, own: own.length, matched: own.length + inContext.length, score: coverage + 0.05 / (c.chunk + 1) - 0.001 * c.position };
    })
    .filter((c) => c.own >= 1 && c.matched >= Math.min(2, terms.length) && c.score >= 0.3)
    .sort((a, b) => b.score - a.score);

  const picked: typeof scored = [];
  for (const c of scored) {
    if (picked.length >= maxSentences) break;
    // Never a sentence twice, nor a part of one already picked (overlapping chunks hold both), nor one a picked sentence is part of.
    const own = normalized(c.text);
    if (picked.some((p) => normalized(p.text).includes(own) || own.includes(normalized(p.text)))) continue;
    picked.push(c);
  }
  return withCitations(picked.map((p) => ({ text: p.text, chunk: p.chunk })));
}
