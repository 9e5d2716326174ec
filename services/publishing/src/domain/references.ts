import type { DraftRevision } from '@kb/events';

type Section = DraftRevision['sections'][number];
type Sentence = Section['sentences'][number];

/** One entry of a page's numbered source list: the span that backs the sentences marked with its number. */
export interface Reference {
  n: number;
  content_id: string;
  chunk_id: string;
  /** The cited span as the source has it, without a heading or anchor glued on. */
  quote: string;
}

/** Titles of cited documents by content id (the knowledge base's names). */
export type SourceTitles = ReadonlyMap<string, string>;

const ATX_HEADING = /^ {0,3}#{1,6}(?:[ \t]|$)/;
const SETEXT_UNDERLINE = /^ {0,3}(?:=+|-+)[ \t]*$/;
/** An anchor that only marks a place (`<a id="close"></a>`, `<a name="x"/>`): it says nothing. */
const EMPTY_ANCHOR = /<a\s+(?:id|name)\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+)\s*(?:\/>|>\s*<\/a\s*>)/gi;

/**
 * The words of a cited span, without what chunking glued to them: place-marking
 * anchors, and heading lines before or after the words (a chunk starts at its
 * section's heading, so a span from a section's first sentence often carries it).
 * Lines are joined by spaces. A span that is nothing but a heading stays as it is.
 */
export function cleanQuote(quote: string): string {
  const lines = quote.replace(EMPTY_ANCHOR, '').split(/\r?\n/);
  const isFurniture = (i: number) => {
    const line = lines[i]!;
    if (line.trim() === '' || ATX_HEADING.test(line) || SETEXT_UNDERLINE.test(line)) return true;
    // The text line of a setext heading (the next line underlines it).
    return i + 1 < lines.length && SETEXT_UNDERLINE.test(lines[i + 1]!) && lines[i + 1]!.trim() !== '';
  };
  let start = 0;
  let end = lines.length;
  while (start < end && isFurniture(start)) start++;
  while (end > start && isFurniture(end - 1)) end--;
  const kept = start < end ? lines.slice(start, end) : lines;
  const text = kept
    .map((l) => l.trim())
    .filter(Boolean)
    .join(' ')
    .trim();
  return text || quote.trim();
}

/**
 * Numbers every distinct cited span of the shown sentences in order of first use.
 * A span is a chunk and the words quoted from it, so two sentences backed by
 * different words of the same chunk get their own numbers, and each [n] shows
 * the words behind its own sentence.
 */
export function referencesOf(sections: Section[]): { refs: Reference[]; numbersOf: (sentence: Sentence) => number[] } {
  const refs: Reference[] = [];
  const byKey = new Map<string, number>();
  const keyOf = (c: Sentence['citations'][number]) => `${c.chunk_id}\u0000${cleanQuote(c.quote)}`;
  for (const section of sections)
    for (const sentence of section.sentences)
      for (const c of sentence.citations) {
        const key = keyOf(c);
        if (byKey.has(key)) continue;
        const n = refs.length + 1;
        byKey.set(key, n);
        refs.push({ n, content_id: c.content_id, chunk_id: c.chunk_id, quote: cleanQuote(c.quote) });
      }
  const numbersOf = (sentence: Sentence) => [...new Set(sentence.citations.map((c) => byKey.get(keyOf(c))!))];
  return { refs, numbersOf };
}

/** What a source is called on a page: its document title, or a neutral name while the title is not known. */
export const sourceLabel = (titles: SourceTitles, contentId: string) => titles.get(contentId) ?? 'Source document';
