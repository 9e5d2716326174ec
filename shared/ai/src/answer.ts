/** A chunk an answer may cite; citations are 1-based positions in this list. */
export interface SourceChunk {
  text: string;
  title?: string;
  /** The headings the chunk sits under: the chunker starts its text with its section's heading. */
  heading_path?: string[];
}

export interface Citation {
  /** The number written in the answer, e.g. [2]. */
  n: number;
  /** Index into the chunks given to the composer. */
  chunk: number;
}

export interface ComposedAnswer {
  answer: string;
  citations: Citation[];
  /** False when nothing relevant was found and the answer says so. */
  grounded: boolean;
}

export const NOTHING_FOUND = 'No relevant information was found in the knowledge base for this question.';

export const nothingFound = (): ComposedAnswer => ({ answer: NOTHING_FOUND, citations: [], grounded: false });

/** Composes the answer text from sentences, each followed by the number of the chunk that supports it. */
export function withCitations(all: { text: string; chunk: number }[]): ComposedAnswer {
  // A sentence is said once, whichever chunks hold it.
  const key = (t: string) => t.toLowerCase().replace(/\s+/g, ' ').trim();
  const sentences = all.filter((s, i) => all.findIndex((o) => key(o.text) === key(s.text)) === i);
  if (sentences.length === 0) return nothingFound();
  const cited = new Map<number, Citation>();
  const parts = sentences.map((s) => {
    const n = s.chunk + 1;
    if (!cited.has(n)) cited.set(n, { n, chunk: s.chunk });
    return `${s.text} [${n}]`;
  });
  return { answer: parts.join(' '), citations: [...cited.values()].sort((a, b) => a.n - b.n), grounded: true };
}
