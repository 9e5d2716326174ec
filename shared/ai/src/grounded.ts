import { splitSentences } from './sentences.js';
import { supportOf, SUPPORT_THRESHOLD } from './support.js';
import { nothingFound, withCitations, type ComposedAnswer, type SourceChunk } from './answer.js';
import { composeExtractiveAnswer } from './extractive.js';
import type { Llm } from './ports.js';

const SYSTEM = [
  'You answer questions using only the numbered sources given.',
  'Write at most four short sentences. After each sentence put the number of the source that supports it, like [2].',
  'If the sources do not answer the question, reply exactly: NOT_FOUND',
].join(' ');

/**
 * An answer written by a chat model from the retrieved chunks only. Every
 * sentence is checked against the chunks; the unsupported ones are dropped and
 * each kept sentence cites the chunk that supports it best. When the model
 * finds nothing, or nothing it wrote survives the check, the extractive
 * composer answers instead (it says so when nothing relevant exists).
 */
export async function composeGroundedAnswer(llm: Llm, question: string, chunks: SourceChunk[]): Promise<ComposedAnswer> {
  if (chunks.length === 0) return nothingFound();
  const sources = chunks.map((c, i) => `[${i + 1}] ${c.title ? `${c.title}: ` : ''}${c.text}`).join('\n\n');
  const reply = await llm.complete([
    { role: 'system', content: SYSTEM },
    { role: 'user', content: `Sources:\n${sources}\n\nQuestion: ${question}` },
  ]);
  if (reply.trim() === 'NOT_FOUND') return composeExtractiveAnswer(question, chunks);
  const texts = chunks.map((c) => c.text);
  const kept = splitSentences(reply.replace(/\s*\[\d+(?:\s*,\s*\d+)*\]/g, ''))
    .map((text) => ({ text, support: supportOf(text, texts) }))
    .filter((s) => s.support.chunk >= 0 && s.support.coverage >= SUPPORT_THRESHOLD)
    .map((s) => ({ text: s.text, chunk: s.support.chunk }));
  return kept.length > 0 ? withCitations(kept) : composeExtractiveAnswer(question, chunks);
}
