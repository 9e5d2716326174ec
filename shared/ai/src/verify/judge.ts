import { createHash } from 'node:crypto';
import { isAppError } from '@kb/platform';
import type { Llm } from '../ports.js';
import type { CheckedSentence, SecondOpinion, SentenceSupport } from './port.js';

/**
 * A chat model as the fact checker's judge: asked whether one quoted source
 * span entails the sentence, contradicts it or does not address it (JSON
 * schema output, temperature 0), cached per sentence and span, a few sentences
 * at a time, each call bounded in time. Its answer decides between supported,
 * contradicted and unsupported, except where the agreement checks found a
 * disagreement on a code token, a number or unit, a negation or an antonym:
 * those veto a span whatever the model says.
 */

const SYSTEM = [
  'You are a strict fact checker for documentation. You get one source span and one sentence.',
  'Decide whether the span, read on its own, states what the sentence says.',
  '"entails": the span says it (other words are fine; every name, code identifier, number, unit, negation, quantifier such as all or some, and modal such as must or may agrees).',
  '"contradicts": the span says something the sentence goes against (the opposite, another value, another name or identifier).',
  '"unrelated": the span does not say it either way (the sentence adds something the span lacks).',
  'Answer with one JSON object: {"verdict": "entails" | "contradicts" | "unrelated", "reason": "<one short sentence>"}.',
].join(' ');

/** The structured output asked of the model (an OpenAI-compatible server that lacks it is asked for plain JSON). */
export const JUDGE_SCHEMA = {
  name: 'fact_check_verdict',
  schema: {
    type: 'object',
    properties: {
      verdict: { type: 'string', enum: ['entails', 'contradicts', 'unrelated'] },
      reason: { type: 'string' },
    },
    required: ['verdict', 'reason'],
    additionalProperties: false,
  },
} as const;

type JudgeVerdict = NonNullable<SecondOpinion['verdict']>;

const VERDICTS: Record<string, JudgeVerdict> = {
  entails: 'supported',
  supported: 'supported',
  supports: 'supported',
  contradicts: 'contradicted',
  contradicted: 'contradicted',
  unrelated: 'unsupported',
  unsupported: 'unsupported',
  not_addressed: 'unsupported',
};

/** Reads the judge's reply: the first JSON object in it, with a known verdict (entails / contradicts / unrelated, or the checker's own words). */
export function parseJudgeReply(reply: string): { verdict: JudgeVerdict; reason?: string } | undefined {
  const m = /\{[\s\S]*\}/.exec(reply);
  if (!m) return undefined;
  try {
    const obj = JSON.parse(m[0]) as { verdict?: unknown; reason?: unknown };
    const verdict = typeof obj.verdict === 'string' ? VERDICTS[obj.verdict.trim().toLowerCase()] : undefined;
    if (!verdict) return undefined;
    return { verdict, ...(typeof obj.reason === 'string' && obj.reason.trim() && { reason: obj.reason.trim().slice(0, 500) }) };
  } catch {
    return undefined;
  }
}

/** A sentence as the checker judged it, with the span to put to the judge and what the agreement checks hold against that span. */
export interface JudgeItem {
  sentence: CheckedSentence;
  /** What the sentence claims (markers and lead-ins stripped). */
  claim: string;
  /** The span the judge is asked about (the best support, or the closest span of an unsupported sentence). */
  span?: SentenceSupport;
  /** A disagreement the agreement checks found with that span (a code token, number, unit, negation or antonym): it vetoes the judge. */
  veto?: string;
  /** Whether the veto is a contradiction the span shows (else the span merely lacks the claim's token or number). */
  vetoContradicts?: boolean;
}

export interface FactJudgeOptions {
  /** Sentences asked about at once (default 4). */
  concurrency?: number;
  /** Most milliseconds one question may take; past it the embedded verdict stands (default 20000). */
  timeoutMs?: number;
  /** Answers kept (default 5000). */
  cacheSize?: number;
}

export interface FactJudge {
  readonly model: string;
  /** Folds the judge's answers into the items' sentences. */
  judge(items: JudgeItem[]): Promise<void>;
}

export function createFactJudge(llm: Llm, options: FactJudgeOptions = {}): FactJudge {
  const concurrency = Math.max(1, options.concurrency ?? 4);
  const timeoutMs = options.timeoutMs ?? 20_000;
  const cacheSize = options.cacheSize ?? 5000;
  const cache = new Map<string, SecondOpinion>();

  async function ask(claim: string, span: string): Promise<SecondOpinion> {
    const key = createHash('sha256').update(`${llm.model}\u0000${claim}\u0000${span}`).digest('hex');
    const hit = cache.get(key);
    if (hit) return hit;
    let reply: string;
    let timer: NodeJS.Timeout | undefined;
    try {
      reply = await Promise.race([
        llm.complete(
          [
            { role: 'system', content: SYSTEM },
            { role: 'user', content: `Source span:\n${span}\n\nSentence: ${claim}` },
          ],
          { jsonSchema: JUDGE_SCHEMA },
        ),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
        }),
      ]);
    } catch (err) {
      const error =
        err instanceof Error && err.message === 'timeout'
          ? `the judge took longer than ${timeoutMs} ms`
          : isAppError(err)
            ? err.message
            : 'the judge could not be reached';
      return { model: llm.model, error };
    } finally {
      clearTimeout(timer);
    }
    const parsed = parseJudgeReply(reply);
    const opinion: SecondOpinion = parsed
      ? { model: llm.model, ...parsed }
      : { model: llm.model, error: 'the judge answered without a verdict' };
    if (parsed) {
      if (cache.size >= cacheSize) cache.delete(cache.keys().next().value!);
      cache.set(key, opinion);
    }
    return opinion;
  }

  function fold(it: JudgeItem, opinion: SecondOpinion): void {
    const s = it.sentence;
    s.second_opinion = opinion;
    if (!opinion.verdict || !it.span) return;
    const says = opinion.reason ?? opinion.verdict;
    if (it.veto) {
      // The agreement checks hold: a disagreement on a code token, number, negation or antonym stands.
      if (it.vetoContradicts && s.verdict !== 'contradicted') {
        s.verdict = 'contradicted';
        s.support = [it.span];
        s.reason = it.veto;
      } else if (s.verdict === 'supported') {
        s.verdict = 'unsupported';
        s.reason = it.veto;
      }
      return;
    }
    if (opinion.verdict === 'supported') {
      if (s.verdict !== 'supported') {
        s.verdict = 'supported';
        s.support = [it.span];
        delete s.reason;
      }
    } else if (opinion.verdict === 'contradicted') {
      s.verdict = 'contradicted';
      s.support = [it.span];
      s.reason = `the judge (${llm.model}) finds the source says otherwise: ${says}`;
    } else if (s.verdict === 'supported') {
      s.verdict = 'unsupported';
      s.reason = `the judge (${llm.model}) finds the source does not say this: ${says}`;
    }
  }

  return {
    model: llm.model,
    async judge(items) {
      const todo = items.filter((it) => it.sentence.verdict !== 'not_factual' && it.span);
      let next = 0;
      await Promise.all(
        Array.from({ length: Math.min(concurrency, Math.max(1, todo.length)) }, async () => {
          while (next < todo.length) {
            const it = todo[next++]!;
            fold(it, await ask(it.claim, it.span!.quote));
          }
        }),
      );
    },
  };
}
