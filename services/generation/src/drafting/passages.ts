import { splitSentences, type EvidencePassage } from '@kb/ai';
import { contentStems } from '@kb/search';
import { cleanText, gluedHeading, isWholeSentence, proseLines } from '../domain/composer.js';

/**
 * A retrieved passage read as its document has it: paragraphs under the
 * heading they stand under, each a run of sentences in order. What drafting
 * draws from: a section takes whole runs of a paragraph, never a sentence torn
 * from the one it leans on.
 */

export interface ParagraphSentence {
  /** As drafted: inline markup removed. */
  text: string;
  /** The source's words verbatim (what the citation quotes). */
  quote: string;
  /** Whether an editor could keep it as it stands (isWholeSentence). */
  whole: boolean;
  stems: Set<string>;
  words: number;
}

/** A passage as retrieval returns it: the headings its chunk sits under, when the index keeps them. */
export type HeadedPassage = EvidencePassage & { heading_path?: string[] };

export interface SourceParagraph {
  passage: EvidencePassage;
  /** The chunk's index in its document (NaN when the chunk id does not say). */
  chunk: number;
  /** Position among the passage's paragraphs. */
  index: number;
  /** The heading it stands under in the passage, if the passage shows one. */
  heading: string | undefined;
  headingStems: Set<string>;
  /** The document's title words. */
  titleStems: Set<string>;
  /** Every content stem its sentences say. */
  stems: Set<string>;
  sentences: ParagraphSentence[];
  /** Whether it comes straight after the paragraph before it (no heading or code block between). */
  continues: boolean;
}

/** The index of a chunk in its document ("<version>:<index>"). */
export const chunkIndexOf = (p: EvidencePassage) => Number(/:(\d+)$/.exec(p.chunk_id)?.[1] ?? Number.NaN);

/** A chunk after the first of its section starts with the end of the chunk before it (ingest's overlap, up to a few hundred characters). */
const OVERLAP_CHARS = 300;

const words = (s: string) => s.split(/\s+/).filter(Boolean).length;

/** A line's sentences, as the source has them (the splitter wants a capital after the stop; a sentence may start with inline code too). */
// A sentence may also start with a lower-case name that is clearly one ("abstract-logging is used ...",
// "npm.js ...", "lncRNAs are ..."): a word holding a hyphen, a dot, an underscore or a later capital after a stop ends
// the sentence before it.
const splitLine = (line: string) =>
  splitSentences(line).flatMap((x) =>
    x.split(
      /(?<=[\p{L}\p{N})`][.!?])\s+(?=`)|(?<=[\p{Ll}\p{N})`]\.)\s+(?=\p{Ll}[\p{L}\p{N}]*[-_.][\p{L}\p{N}][\p{L}\p{N}_.-]*\s|\p{Ll}+\p{Lu}[\p{L}\p{N}]*\s)/u,
    ),
  );

export function readPassage(passage: HeadedPassage): SourceParagraph[] {
  const chunk = chunkIndexOf(passage);
  const titleStems = new Set(contentStems(passage.title ?? ''));
  const path = passage.heading_path ?? [];
  const out: SourceParagraph[] = [];
  // The chunk's own section heading, until the passage shows another.
  let heading: string | undefined = path.at(-1);
  let first = true;
  for (const lines of proseLines(passage.text)) {
    // A code block (between two prose ranges) breaks the thread: "This registers ..." after it means the code.
    let continues = false;
    for (const { line, heading: isHeading } of lines) {
      const opening = first;
      first = false;
      if (isHeading) {
        heading = cleanText(line);
        continues = false;
        continue;
      }
      // The overlap a chunk carries from the one before starts mid-sentence, capital or not.
      if (opening && chunk > 0 && line.length <= OVERLAP_CHARS) continue;
      const sentences: ParagraphSentence[] = [];
      for (let quote of splitLine(line)) {
        const at = gluedHeading(quote);
        if (at > 0 && words(quote.slice(at)) >= 3 && isWholeSentence(cleanText(quote.slice(at)))) {
          heading = cleanText(quote.slice(0, at));
          quote = quote.slice(at);
        }
        const text = cleanText(quote);
        if (!text) continue;
        sentences.push({ text, quote, whole: isWholeSentence(text), stems: new Set(contentStems(text)), words: words(text) });
      }
      if (sentences.length === 0) continue;
      out.push({
        passage,
        chunk,
        index: out.length,
        heading,
        // The whole path counts: "Hooks > Request/Reply hooks > onRequest" says what its paragraphs answer.
        headingStems: new Set(contentStems([...path, heading ?? ''].join(' '))),
        titleStems,
        stems: new Set(sentences.flatMap((s) => [...s.stems])),
        sentences,
        continues,
      });
      continues = true;
    }
  }
  return out;
}
