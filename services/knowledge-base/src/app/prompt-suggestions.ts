import { errors } from '@kb/platform';
import type { Store } from '@kb/store';
import type { CallContext } from '@kb/rpc';
import type { RateLimiter } from '@kb/coordination';
import { composeExtractiveAnswer } from '@kb/ai';
import { contentStems, type SearchIndex } from '@kb/search';
import { CATEGORIES, TOPICS, type CategoryDoc, type TopicDoc } from '../projections/categories.js';
import { nameKey } from '../domain/names.js';
import { SEARCH_CONTENTS, type SearchContentDoc } from './search-indexing.js';
import type { PromptsService } from './prompts.js';

export const SUGGESTIONS_DEFAULT = 5;
export const SUGGESTIONS_MAX = 20;
/** Candidates checked per call at most (each is one index query). */
const CANDIDATES_MAX = 200;

export interface Suggestion {
  name: string;
  text: string;
  /** Why it was proposed: the category, topic or content item it comes from. */
  source: { type: 'category' | 'topic' | 'content'; id: string; name: string };
  /** Content that answers it, best first. */
  supporting_content_ids: string[];
  /** How much of the knowledge base backs it, 0 to 1: the share of the top 5 retrieved passages that match it. */
  confidence: number;
}

interface Candidate {
  text: string;
  source: Suggestion['source'];
  /** For content candidates: the content must itself answer (and be visible to the caller). */
  mustInclude?: string;
}

/** A title that is an uploaded file's name ("sample.pdf", "Price list 2026.xlsx"), not a name people use. */
const isFileName = (title: string) => /\.(pdf|docx?|xlsx?|pptx?|csv|txt|html?|json|xml|md)$/i.test(title.trim());

/** Word overlap of two questions: above 0.8 they ask the same thing. */
function overlap(a: string, b: string): number {
  const x = new Set(contentStems(a));
  const y = new Set(contentStems(b));
  let shared = 0;
  for (const s of x) if (y.has(s)) shared++;
  const union = x.size + y.size - shared;
  return union === 0 ? 1 : shared / union;
}

/**
 * POST /org/prompts/suggestions: questions the knowledge base answers well,
 * built from its categories, topics and content titles (an uploaded file's top
 * heading instead of its file name), each checked by
 * retrieval and by the answer composer (grounded answers only), never a
 * duplicate of an existing prompt. Rate-limited per organization (the limiter
 * is Redis-backed in the distributed runtime, so replicas share the count).
 */
export function createPromptSuggestions(deps: {
  store: Store;
  index: SearchIndex;
  prompts: PromptsService;
  limiter: RateLimiter;
  perMinute: number;
}) {
  const { store, index, prompts, limiter, perMinute } = deps;

  async function candidates(orgId: string): Promise<Candidate[]> {
    const [categories, topics, contents] = await Promise.all([
      store.find<CategoryDoc>(CATEGORIES, { where: { org_id: orgId, deleted_at: null }, limit: 100 }),
      store.find<TopicDoc>(TOPICS, { where: { org_id: orgId, deleted_at: null }, limit: 200 }),
      store.find<SearchContentDoc>(SEARCH_CONTENTS, { where: { org_id: orgId }, limit: 200 }),
    ]);
    const categoryName = new Map(categories.map((c) => [c.category_id, c.name]));
    const out: Candidate[] = [];
    for (const t of topics) {
      const within = categoryName.get(t.category_id);
      out.push({
        text: within ? `What should we know about ${t.name} in ${within}?` : `What should we know about ${t.name}?`,
        source: { type: 'topic', id: t.topic_id, name: t.name },
      });
    }
    for (const c of categories)
      out.push({ text: `What are the key facts about ${c.name}?`, source: { type: 'category', id: c.category_id, name: c.name } });
    for (const c of contents) {
      if (!c.indexed_version_id) continue;
      out.push({
        text: `What does ${c.title} say?`,
        source: { type: 'content', id: c.content_id, name: c.title },
        mustInclude: c.content_id,
      });
    }
    return out.slice(0, CANDIDATES_MAX);
  }

  return {
    async suggest(ctx: CallContext, input: { count?: number | undefined }): Promise<Suggestion[]> {
      const count = input.count ?? SUGGESTIONS_DEFAULT;
      if (!Number.isInteger(count) || count < 1 || count > SUGGESTIONS_MAX) {
        throw errors.validation(`count must be 1 to ${SUGGESTIONS_MAX}`, { details: { field: 'count' } });
      }
      if (ctx.folder_scope !== null && ctx.folder_scope.length === 0) {
        throw errors.forbidden('This credential (API key or OAuth grant) may not use the knowledge base', { code: 'folder_scope' });
      }
      const decision = await limiter.hit(`prompt-suggestions:${ctx.org_id}`, perMinute, 60_000);
      if (!decision.allowed) throw errors.rateLimited(Math.max(1, decision.retryAfterSeconds), { code: 'suggestion_rate_limited' });

      const existing = await prompts.all(ctx.org_id);
      const scored: Suggestion[] = [];
      const same = (a: string, b: string) => nameKey(a) === nameKey(b) || overlap(a, b) >= 0.8;
      // Neither an existing prompt (by name or text) nor another suggestion of this call (e.g. two items with one title).
      const taken = (text: string) =>
        existing.some((p) => nameKey(p.name) === nameKey(text) || same(p.text, text)) || scored.some((x) => same(x.text, text));

      for (const c of await candidates(ctx.org_id)) {
        if (taken(c.text)) continue;
        const res = await index.search({ org_id: ctx.org_id, query: c.source.name, filters: { folder_scope: ctx.folder_scope }, limit: 5 });
        if (res.hits.length === 0) continue;
        let supporting: string[];
        let text = c.text;
        if (c.mustInclude) {
          // A content item answers "what does it say" itself, when the caller can see it.
          // Its earliest retrieved chunk: the one nearest its start.
          const own = res.hits.filter((h) => h.content_id === c.mustInclude).sort((a, b) => a.chunk_index - b.chunk_index)[0];
          if (!own) continue;
          // An uploaded file is known by its top heading, not its file name ("What does sample.pdf say?").
          const heading = isFileName(c.source.name) ? own.heading_path[0]?.trim() : undefined;
          if (heading) {
            text = `What should we know about ${heading}?`;
            if (taken(text)) continue;
          }
          supporting = [c.mustInclude];
        } else {
          // A category or topic needs passages that actually talk about it.
          const answer = composeExtractiveAnswer(
            c.source.name,
            res.hits.map((h) => ({ text: h.chunk_text, title: h.title, heading_path: h.heading_path })),
          );
          if (!answer.grounded) continue;
          supporting = [...new Set(answer.citations.map((x) => res.hits[x.chunk]!.content_id))];
        }
        scored.push({
          name: text.length <= 255 ? text : text.slice(0, 255),
          text,
          source: c.source,
          supporting_content_ids: supporting,
          confidence: Math.min(1, res.hits.length / 5),
        });
      }
      // Best covered first; ties keep the order topics, categories, content.
      return scored.sort((a, b) => b.confidence - a.confidence).slice(0, count);
    },
  };
}
