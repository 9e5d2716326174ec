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

/** A line that ends a sentence (possibly inside closing quotes or brackets). */
const ENDS_SENTENCE = /[.!?…:;][)"'”’\]]*$/;

/**
 * The words of a cited span, without what chunking glued to them: place-marking
 * anchors, and heading lines before or after the words. A chunk keeps each block
 * of its source (heading, paragraph, list item) on a line of its own, and a span
 * taken from a section's first sentence often starts with the section's heading:
 * a Markdown heading, a setext one, or a bare title line (the extractor drops the
 * #) with no sentence punctuation before a line that has it. Lines are joined by
 * spaces. A span that is nothing but such lines stays as it is.
 */
export function cleanQuote(quote: string): string {
  const lines = quote
    .replace(EMPTY_ANCHOR, '')
    .split(/\r?\n/)
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== '');
  const sentences = lines.map((l) => ENDS_SENTENCE.test(l));
  const isHeading = (i: number, proseBeside: boolean) => {
    const line = lines[i]!;
    if (ATX_HEADING.test(line) || SETEXT_UNDERLINE.test(line)) return true;
    if (i + 1 < lines.length && SETEXT_UNDERLINE.test(lines[i + 1]!)) return true;
    return proseBeside && !sentences[i] && line.trim().length <= 120;
  };
  let start = 0;
  let end = lines.length;
  while (start < end - 1 && isHeading(start, sentences.slice(start + 1, end).some(Boolean))) start++;
  while (end - 1 > start && isHeading(end - 1, sentences.slice(start, end - 1).some(Boolean))) end--;
  const text = lines
    .slice(start, end)
    .map((l) => l.trim())
    .join(' ');
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
