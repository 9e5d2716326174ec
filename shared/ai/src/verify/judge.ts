import { isAppError } from '@kb/platform';
import type { Llm } from '../ports.js';
import type { CheckedSentence, SecondOpinion } from './port.js';

const SYSTEM = [
  'You are a strict fact checker. You get numbered excerpts of source documents and one sentence.',
  'Decide whether the excerpts state what the sentence says: every number, unit, direction (more or less, increase or decrease), negation and name must agree.',
  'Answer with one JSON object and nothing else: {"verdict": "supported" | "unsupported" | "contradicted", "reason": "<one short sentence>"}.',
  '"contradicted" means an excerpt says otherwise; "unsupported" means the excerpts do not say it.',
].join(' ');

const VERDICTS = new Set(['supported', 'unsupported', 'contradicted']);

/** Reads the judge's reply: the first JSON object in it, with a known verdict. */
export function parseJudgeReply(reply: string): { verdict: 'supported' | 'unsupported' | 'contradicted'; reason?: string } | undefined {
  const m = /\{[\s\S]*\}/.exec(reply);
  if (!m) return undefined;
  try {
    const obj = JSON.parse(m[0]) as { verdict?: unknown; reason?: unknown };
    if (typeof obj.verdict !== 'string' || !VERDICTS.has(obj.verdict.toLowerCase())) return undefined;
    return {
      verdict: obj.verdict.toLowerCase() as 'supported' | 'unsupported' | 'contradicted',
      ...(typeof obj.reason === 'string' && obj.reason.trim() && { reason: obj.reason.trim().slice(0, 500) }),
    };
  } catch {
    return undefined;
  }
}

/** What the sentence says without its markers, and the spans it was matched with. */
export interface JudgeItem {
  sentence: CheckedSentence;
  claim: string;
  /** The embedded check found it only worded differently from a close source: the judge may accept it. */
  upgradable: boolean;
}

async function ask(judge: Llm, claim: string, quotes: string[]): Promise<SecondOpinion> {
  const sources = quotes.map((q, i) => `[${i + 1}] ${q}`).join('\n\n');
  let reply: string;
  try {
    reply = await judge.complete([
      { role: 'system', content: SYSTEM },
      { role: 'user', content: `Excerpts:\n${sources}\n\nSentence: ${claim}` },
    ]);
  } catch (err) {
    return { model: judge.model, error: isAppError(err) ? err.message : 'the judge could not be reached' };
  }
  const parsed = parseJudgeReply(reply);
  return parsed ? { model: judge.model, ...parsed } : { model: judge.model, error: 'the judge answered without a verdict' };
}

/**
 * Asks the judge about every factual sentence that has a span to be judged
 * against, and folds its answer in: it can turn supported into unsupported or
 * contradicted, and unsupported into supported only for an upgradable sentence.
 */
export async function secondOpinion(judge: Llm, items: JudgeItem[], concurrency: number): Promise<void> {
  const todo = items.filter((it) => it.sentence.verdict !== 'not_factual' && it.sentence.support.length > 0);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.max(1, concurrency) }, async () => {
      while (next < todo.length) {
        const it = todo[next++]!;
        const s = it.sentence;
        const opinion = await ask(
          judge,
          it.claim,
          s.support.map((x) => x.quote),
        );
        s.second_opinion = opinion;
        if (!opinion.verdict) continue;
        if (s.verdict === 'supported' && opinion.verdict !== 'supported') {
          s.verdict = opinion.verdict;
          s.reason = `the judge (${judge.model}) disagrees: ${opinion.reason ?? opinion.verdict}`;
        } else if (s.verdict === 'unsupported' && it.upgradable && opinion.verdict === 'supported') {
          s.verdict = 'supported';
          delete s.reason;
        }
      }
    }),
  );
}
