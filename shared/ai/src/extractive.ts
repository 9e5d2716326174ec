import { contentStems } from '@kb/search';
import { splitSentences } from './sentences.js';
import { nothingFound, withCitations, type ComposedAnswer, type SourceChunk } from './answer.js';

export interface ExtractiveOptions {
  /** Sentences in the answer (default 3). */
  maxSentences?: number;
  /** Sentences longer than this are not quoted (default 600 characters). */
  maxSentenceLength?: number;
}

/**
 * A chunk's sentences without its heading lines: a heading is not a sentence of the answer, and
 * having no end punctuation it would run into the sentence after it ("Warranty Terms The panels
 * carry ...").
 */
function sentencesOf(chunk: SourceChunk): string[] {
  const headings = new Set((chunk.heading_path ?? []).map((h) => h.trim()));
  const text =
    headings.size === 0
      ? chunk.text
      : chunk.text
          .split('\n')
          .filter((line) => !headings.has(line.trim()))
          .join('\n');
  return splitSentences(text);
}

/**
 * The built-in composer (no model, deterministic): picks the sentences of the
 * top chunks that cover most of the question's content words, rarer words
 * weighing more, and cites the chunk each came from. When no sentence covers
 * enough of the question, the answer says nothing relevant was found.
 */
export function composeExtractiveAnswer(question: string, chunks: SourceChunk[], options: ExtractiveOptions = {}): ComposedAnswer {
  const maxSentences = options.maxSentences ?? 3;
  const maxLength = options.maxSentenceLength ?? 600;
  const terms = [...new Set(contentStems(question))];
  if (terms.length === 0 || chunks.length === 0) return nothingFound();

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
      const matched = terms.filter((t) => c.stems.has(t));
      const coverage = matched.reduce((sum, t) => sum + weight.get(t)!, 0) / totalWeight;
      // Retrieval order is evidence too: a sentence of the first chunk wins a tie.
      return { ...c, matched: matched.length, score: coverage + 0.05 / (c.chunk + 1) - 0.001 * c.position };
    })
    .filter((c) => c.matched >= Math.min(2, terms.length) && c.score >= 0.3)
    .sort((a, b) => b.score - a.score);

  const picked: typeof scored = [];
  for (const c of scored) {
    if (picked.length >= maxSentences) break;
    if (picked.some((p) => p.text === c.text)) continue;
    picked.push(c);
  }
  return withCitations(picked.map((p) => ({ text: p.text, chunk: p.chunk })));
}
