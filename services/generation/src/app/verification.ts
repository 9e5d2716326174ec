import type { Equivalent, EvidencePassage, FactChecker, FactVerdict, Llm, RetrievePassages, SentenceSupport } from '@kb/ai';
import type { DraftedSection } from '../domain/composer.js';
import { allowed } from '../domain/composer.js';
import { citationOf, isSupported, type Citation, type VerifiedSection } from '../domain/draft.js';
import type { ContentTypeConfig, Guidelines } from '../domain/settings.js';

/**
 * Runs the fact checker on drafted sections, one sentence at a time against the
 * passage it cites (and the knowledge base when that does not back it), repairs
 * each unsupported sentence once, then removes it or keeps it flagged as the
 * content type says.
 */

const RANK: Record<FactVerdict, number> = { not_factual: 0, supported: 1, unsupported: 2, contradicted: 3 };

export interface SentenceCheck {
  verdict: FactVerdict;
  support: SentenceSupport[];
  /** The checker's reason for the worst part, when it is not supported. */
  reason?: string;
}

/** One sentence through the checker; when the checker splits it further, the worst verdict wins. */
export async function checkSentence(
  checker: FactChecker,
  text: string,
  cited: EvidencePassage[],
  retrieve: RetrievePassages | undefined,
  equivalents: Equivalent[] = [],
): Promise<SentenceCheck> {
  const marked = cited.length ? `${text} ${cited.map((_, i) => `[${i + 1}]`).join('')}` : text;
  // The brand kit's preferred terms read as the words they replace, so a substitution is not a changed fact.
  const parts = await checker.check({ text: marked, cited, ...(retrieve && { retrieve }), ...(equivalents.length && { equivalents }) });
  if (parts.length === 0) return { verdict: 'not_factual', support: [] };
  const verdict = parts.map((p) => p.verdict).reduce((a, b) => (RANK[b] > RANK[a] ? b : a));
  const reason = parts.find((p) => p.verdict === verdict)?.reason;
  return { verdict, support: parts.flatMap((p) => p.support).sort((a, b) => b.score - a.score), ...(reason && { reason }) };
}

/** A second attempt at an unsupported sentence: the model rewrites it from its passage only, or the source sentence itself. */
export async function regenerateSentence(
  sentence: { text: string; quote: string },
  passage: EvidencePassage | undefined,
  guidelines: Guidelines,
  llm: Llm | undefined,
): Promise<string | null> {
  if (llm && passage) {
    try {
      const reply = await llm.complete([
        {
          role: 'system',
          content:
            'Rewrite the sentence so that every fact in it is stated in the source passage. Keep numbers, units, directions and negations exactly as the passage has them. Reply with the one rewritten sentence only.',
        },
        { role: 'user', content: `Source passage:\n${passage.text}\n\nSentence:\n${sentence.text}` },
      ]);
      const text = reply.replace(/\s*\[\d+(?:\s*,\s*\d+)*\]/g, '').trim();
      if (text && allowed(text, guidelines)) return text;
    } catch {
      // The model is unavailable: fall through to the source sentence.
    }
  }
  return sentence.quote && sentence.quote !== sentence.text ? sentence.quote : null;
}

export async function verifySections(options: {
  sections: DraftedSection[];
  checker: FactChecker;
  retrieve: RetrievePassages;
  guidelines: Guidelines;
  config: Pick<ContentTypeConfig, 'unsupported_sentences'>;
  llm?: Llm | undefined;
  onProgress?: (done: number, total: number) => Promise<void>;
}): Promise<VerifiedSection[]> {
  const total = options.sections.reduce((n, s) => n + s.sentences.length, 0);
  let done = 0;
  const out: VerifiedSection[] = [];
  for (const section of options.sections) {
    const sentences: VerifiedSection['sentences'] = [];
    for (const drafted of section.sentences) {
      const passage = drafted.passage >= 0 ? section.passages[drafted.passage] : undefined;
      const cited = passage ? [passage] : [];
      let text = drafted.text;
      const equivalents = options.guidelines.preferred_terms ?? [];
      let check = await checkSentence(options.checker, text, cited, options.retrieve, equivalents);
      if (!isSupported(check.verdict)) {
        const repaired = await regenerateSentence(drafted, passage, options.guidelines, options.llm);
        if (repaired) {
          const again = await checkSentence(options.checker, repaired, cited, options.retrieve, equivalents);
          if (isSupported(again.verdict) || options.config.unsupported_sentences === 'block') {
            text = repaired;
            check = again;
          }
        }
      }
      done++;
      if (options.onProgress && done % 5 === 0) await options.onProgress(done, total);
      if (!isSupported(check.verdict) && options.config.unsupported_sentences === 'remove') continue;
      const citations: Citation[] =
        check.support.length > 0
          ? check.support.slice(0, 2).map(citationOf)
          : passage
            ? [{ content_id: passage.content_id, version_id: passage.version_id, chunk_id: passage.chunk_id, quote: drafted.quote }]
            : [];
      sentences.push({
        text,
        verdict: check.verdict,
        citations,
        ...(check.reason && !isSupported(check.verdict) && { reason: check.reason }),
        ...(drafted.paragraph !== undefined && { paragraph: drafted.paragraph }),
      });
    }
    out.push({ section_id: section.section_id, title: section.title, sentences });
  }
  return out;
}
