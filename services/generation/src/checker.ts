import type { CheckedSentence, EvidencePassage, FactChecker, FactCheckRequest } from '@kb/ai';
import { splitSentences, supportOf, SUPPORT_THRESHOLD } from '@kb/ai';

/**
 * Plain lexical overlap as a FactChecker: a sentence is supported when enough
 * of its content words occur in a cited or retrieved passage. It misses changed
 * numbers, flipped directions and negations; it is the baseline the benchmark
 * measures the real checker against.
 */
export function createLexicalFactChecker(): FactChecker {
  return {
    async check(request: FactCheckRequest): Promise<CheckedSentence[]> {
      const out: CheckedSentence[] = [];
      let cursor = 0;
      for (const [index, raw] of splitSentences(request.text).entries()) {
        const start = Math.max(0, request.text.indexOf(raw.slice(0, 20), cursor));
        const end = start + raw.length;
        cursor = end;
        const markers = [...raw.matchAll(/\[(\d+)\]/g)].map((m) => Number(m[1]) - 1);
        const text = raw.replace(/\s*\[\d+(?:\s*,\s*\d+)*\]/g, '').trim();
        let passages: EvidencePassage[] = markers.flatMap((n) => (request.cited?.[n] ? [request.cited[n]] : []));
        let best = supportOf(
          text,
          passages.map((p) => p.text),
        );
        if (best.coverage < SUPPORT_THRESHOLD && request.retrieve) {
          passages = await request.retrieve(text, 5);
          best = supportOf(
            text,
            passages.map((p) => p.text),
          );
        }
        const p = best.chunk >= 0 ? passages[best.chunk] : undefined;
        const supported = p !== undefined && best.coverage >= SUPPORT_THRESHOLD;
        out.push({
          index,
          text,
          start,
          end,
          verdict:
            best.chunk < 0 && best.coverage === 0 && !/\p{L}{3}/u.test(text) ? 'not_factual' : supported ? 'supported' : 'unsupported',
          support: supported
            ? [
                {
                  content_id: p.content_id,
                  version_id: p.version_id,
                  chunk_id: p.chunk_id,
                  quote: p.text.slice(0, 300),
                  score: best.coverage,
                },
              ]
            : [],
        });
      }
      return out;
    },
  };
}
