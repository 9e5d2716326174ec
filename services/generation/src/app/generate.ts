import { errors } from '@kb/platform';
import type { CallContext } from '@kb/rpc';
import type { EvidencePassage, FactChecker, Llm } from '@kb/ai';
import { sourceSentences, type DraftedSection } from '../domain/composer.js';
import { draftExtractive } from '../drafting/extractive-drafter.js';
import type { Citation } from '../domain/draft.js';
import { draftWithLlm } from '../drafting/llm-drafter.js';
import type { Retriever } from '../retrieval.js';
import { isUuid } from './context.js';
import { verifySections } from './verification.js';

/**
 * POST /generate on the category/topic API (spec 4.2): a grounded summary of
 * content items, or a reply to a question, with citations. Both go through the
 * fact checker; a sentence it does not find supported is left out.
 */

export const NOTHING_TO_SAY = 'The knowledge base holds nothing to answer this from.';

interface GenerateInput {
  type?: unknown;
  question?: unknown;
  category_id?: unknown;
  topic_id?: unknown;
  max_sentences?: unknown;
  /** Summary: the content items' chunks, read by the gateway within the caller's folder scope. */
  passages?: unknown;
}

function maxSentences(v: unknown): number {
  if (v === undefined) return 5;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 20)
    throw errors.validation('max_sentences must be 1 to 20', { details: { field: 'max_sentences' } });
  return v;
}

function passagesOf(v: unknown): EvidencePassage[] {
  if (!Array.isArray(v) || v.length === 0)
    throw errors.validation('content_ids must name at least one content item', { details: { field: 'content_ids' } });
  return v.map((p: Record<string, unknown>) => ({
    content_id: String(p.content_id),
    version_id: String(p.version_id),
    chunk_id: String(p.chunk_id),
    text: String(p.text ?? ''),
    ...(typeof p.title === 'string' && { title: p.title }),
  }));
}

/** The lead sentences of the passages, taken in turn from each content item, in source order. */
function leadSummary(passages: EvidencePassage[], max: number): DraftedSection {
  const byItem = new Map<string, { passage: number; text: string }[]>();
  passages.forEach((p, passage) => {
    const list = byItem.get(p.content_id) ?? [];
    for (const text of sourceSentences(p.text)) if (text.length >= 12) list.push({ passage, text });
    byItem.set(p.content_id, list);
  });
  const picked: { passage: number; text: string }[] = [];
  for (let round = 0; picked.length < max; round++) {
    let any = false;
    for (const list of byItem.values()) {
      if (list[round] && picked.length < max) {
        picked.push(list[round]!);
        any = true;
      }
    }
    if (!any) break;
  }
  return {
    section_id: 'summary',
    title: 'Summary',
    passages,
    sentences: picked.map((p) => ({ text: p.text, quote: p.text, passage: p.passage })),
  };
}

export function createGenerateService(deps: { checker: FactChecker; retriever: Retriever; llm?: Llm | undefined }) {
  const { checker, retriever, llm } = deps;

  async function respond(ctx: CallContext, type: 'summary' | 'reply', drafted: DraftedSection, question?: string) {
    const retrieve = (claim: string, limit: number) =>
      retriever.retrieve(ctx, claim, { folder_ids: [], tags: [], category_ids: [] }, limit);
    const [verified] = await verifySections({
      sections: [drafted],
      checker,
      retrieve,
      guidelines: {},
      config: { unsupported_sentences: 'remove' },
      llm,
    });
    const sentences = verified!.sentences;
    const numbers = new Map<string, number>();
    const citations: (Omit<Citation, 'quote' | 'score'> & { n: number })[] = [];
    for (const s of sentences)
      for (const c of s.citations)
        if (!numbers.has(c.chunk_id)) {
          numbers.set(c.chunk_id, numbers.size + 1);
          citations.push({ n: numbers.size, content_id: c.content_id, version_id: c.version_id, chunk_id: c.chunk_id });
        }
    const marked = (s: { text: string; citations: Citation[] }) =>
      [s.text, ...new Set(s.citations.map((c) => `[${numbers.get(c.chunk_id)}]`))].join(s.citations.length ? ' ' : '');
    const text = sentences.length ? sentences.map(marked).join(' ') : NOTHING_TO_SAY;
    return {
      type,
      ...(question !== undefined && { question }),
      text,
      grounded: sentences.length > 0,
      sentences: sentences.map((s, index) => ({ index, text: s.text, verdict: s.verdict, citations: s.citations })),
      citations,
    };
  }

  return {
    async generate(ctx: CallContext, input: GenerateInput) {
      const max = maxSentences(input.max_sentences);
      if (input.type === 'summary') {
        const passages = passagesOf(input.passages);
        return respond(ctx, 'summary', leadSummary(passages, max));
      }
      if (input.type !== 'reply') throw errors.validation('type must be summary or reply', { details: { field: 'type' } });
      const question = typeof input.question === 'string' ? input.question.trim() : '';
      if (!question || question.length > 2000)
        throw errors.validation('question must be 1 to 2000 characters', { details: { field: 'question' } });
      for (const f of ['category_id', 'topic_id'] as const)
        if (input[f] !== undefined && !isUuid(input[f])) throw errors.validation(`${f} must be a uuid`, { details: { field: f } });
      const scope = {
        folder_ids: [],
        tags: [],
        category_ids: isUuid(input.category_id) ? [input.category_id] : [],
        ...(isUuid(input.topic_id) && { topic_id: input.topic_id }),
      };
      const passages = await retriever.retrieve(ctx, question, scope, 8);
      const section = { section_id: 'reply', spec: { title: question }, query: question, passages };
      const budget = { max_words: max * 40 };
      const brief = { kind: 'qa' as const, target_length: { min_words: 0, ...budget } };
      const drafted = llm
        ? await draftWithLlm(llm, [section], {}, { title: question, max_words: budget.max_words }).catch(() =>
            draftExtractive([section], {}, brief),
          )
        : draftExtractive([section], {}, brief);
      const reply = drafted[0]!;
      return respond(ctx, 'reply', { ...reply, sentences: reply.sentences.slice(0, max) }, question);
    },
  };
}

export type GenerateService = ReturnType<typeof createGenerateService>;
