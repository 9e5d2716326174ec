import type { ContentKind } from '../domain/settings.js';
import type { VerifiedSection } from '../domain/draft.js';

/**
 * What a draft could not cover, said on the draft rather than left for a reader
 * to notice: a section the knowledge base holds nothing on (named), a question
 * it does not answer (the FAQ says so under the question), a length short of
 * the content type's minimum. Any of them makes the draft needs_review.
 */

/** What an FAQ says under a question the knowledge base does not answer. */
export const UNANSWERED = 'The knowledge base does not answer this question.';

const wordsOf = (sections: VerifiedSection[]) =>
  sections.reduce((n, s) => n + s.sentences.reduce((m, x) => m + x.text.split(/\s+/).filter(Boolean).length, 0), 0);

export interface Coverage {
  /** The sections the draft shows: those with sentences, and in an FAQ every question. */
  sections: VerifiedSection[];
  warnings: string[];
}

export function coverageOf(
  verified: VerifiedSection[],
  brief: { kind: ContentKind; target_length: { min_words: number; max_words: number } },
): Coverage {
  const warnings: string[] = [];
  const empty = verified.filter((s) => s.sentences.length === 0);
  const sections =
    brief.kind === 'qa'
      ? verified.map((s) =>
          s.sentences.length > 0 ? s : { ...s, sentences: [{ text: UNANSWERED, verdict: 'not_factual' as const, citations: [] }] },
        )
      : verified.filter((s) => s.sentences.length > 0);
  for (const s of empty)
    warnings.push(
      brief.kind === 'qa'
        ? `The knowledge base does not answer the question “${s.title}”.`
        : `The knowledge base holds nothing on the section “${s.title}”; it is left out.`,
    );
  const words = wordsOf(verified);
  if (words < brief.target_length.min_words)
    warnings.push(
      `The draft has ${words} words, short of the content type's minimum of ${brief.target_length.min_words}: the knowledge base holds no more on this subject.`,
    );
  return { sections, warnings };
}
