import { errors } from '@kb/platform';
import type { CallContext } from '@kb/rpc';
import type { FactChecker } from '@kb/ai';
import type { Retriever } from '../retrieval.js';
import { isUuid } from './context.js';

export const MAX_VERIFY_CHARS = 20_000;

const ratio = (n: number, d: number) =>
  d === 0 ? { value: null, display: 'n/a' } : { value: n / d, display: `${(Math.round((n / d) * 1000) / 10).toFixed(1)}%` };

/** POST /org/content/verify: the fact checker on pasted text, against the caller's part of the knowledge base. */
export type VerifyService = ReturnType<typeof createVerifyService>;

export function createVerifyService(deps: { checker: FactChecker; retriever: Retriever }) {
  return {
    async verify(ctx: CallContext, input: { text?: unknown; folder_ids?: unknown; tags?: unknown }) {
      const text = typeof input.text === 'string' ? input.text : '';
      if (!text.trim()) throw errors.validation('text is required', { details: { field: 'text' } });
      if (text.length > MAX_VERIFY_CHARS)
        throw errors.validation(`text is at most ${MAX_VERIFY_CHARS} characters`, { details: { field: 'text' } });
      const folder_ids = input.folder_ids ?? [];
      if (!Array.isArray(folder_ids) || folder_ids.length > 50 || !folder_ids.every(isUuid))
        throw errors.validation('folder_ids must be a list of at most 50 uuids', { details: { field: 'folder_ids' } });
      const tags = input.tags ?? [];
      if (!Array.isArray(tags) || tags.length > 50 || !tags.every((t) => typeof t === 'string' && t.trim()))
        throw errors.validation('tags must be a list of at most 50 tag ids or names', { details: { field: 'tags' } });
      const scope = { folder_ids: folder_ids.map((f) => f.toLowerCase()), tags: tags.map((t: string) => t.trim()), category_ids: [] };
      // The scope is checked before any work: a folder outside the key's scope is 403, an unknown one 404.
      await deps.retriever.retrieve(ctx, text.slice(0, 200), scope, 1);
      const sentences = await deps.checker.check({ text, retrieve: (claim, limit) => deps.retriever.retrieve(ctx, claim, scope, limit) });
      const factual = sentences.filter((s) => s.verdict !== 'not_factual').length;
      const supported = sentences.filter((s) => s.verdict === 'supported').length;
      return {
        sentences: sentences.map((s) => ({
          index: s.index,
          text: s.text,
          start: s.start,
          end: s.end,
          verdict: s.verdict,
          ...(s.reason && { reason: s.reason }),
          support: s.support,
        })),
        totals: { sentences: sentences.length, factual, supported, unsupported: factual - supported },
        supported_ratio: ratio(supported, factual),
      };
    },
  };
}
