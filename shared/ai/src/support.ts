import { contentStems } from '@kb/search';

/**
 * Whether a sentence is backed by a source chunk: the share of its content-word
 * stems found in the chunk. Used to drop generated sentences the retrieved
 * chunks do not support, and to point each kept sentence at its best source.
 */
export function supportOf(sentence: string, chunkTexts: string[]): { chunk: number; coverage: number } {
  const stems = [...new Set(contentStems(sentence))];
  if (stems.length === 0) return { chunk: -1, coverage: 0 };
  let best = { chunk: -1, coverage: 0 };
  chunkTexts.forEach((text, chunk) => {
    const have = new Set(contentStems(text));
    const coverage = stems.filter((s) => have.has(s)).length / stems.length;
    if (coverage > best.coverage) best = { chunk, coverage };
  });
  return best;
}

/** Below this share of supported words a sentence is treated as unsupported. */
export const SUPPORT_THRESHOLD = 0.7;
