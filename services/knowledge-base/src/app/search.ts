import { errors, type Clock, type IdGenerator, type Logger } from '@kb/platform';
import type { Store } from '@kb/store';
import type { CommandBus } from '@kb/eventsourcing';
import type { CallContext } from '@kb/rpc';
import { collapseNearDuplicates, type SearchHit, type SearchIndex } from '@kb/search';
import { composeExtractiveAnswer, composeGroundedAnswer, type Citation, type Embeddings, type Llm } from '@kb/ai';
import { CATEGORIES, TOPICS, type CategoryDoc, type TopicDoc } from '../projections/categories.js';
import { SEARCH_QUERIES, type SearchQueryDoc } from '../projections/search-queries.js';
import { TAGS, TAG_NAMES, tagNameId, type TagDoc } from '../projections/tags.js';
import { searchQueryDecider, searchQueryStream } from '../domain/search-query.js';
import { isInScope } from '../domain/folder-scope.js';
import { applyTags, resolveTags, tagsOf, MAX_TAGS_PER_CALL } from './tags.js';
import { chainOf, requireNode } from './kb-tree.js';
import { requireSomeScope, searchRecordVisible } from './scope-visibility.js';
import { checkPage, metadataOf, type Page } from './common.js';

/** max_results: default 5 (spec 4.2), at most 100 (the pagination cap); the answer uses the top 5 whatever the number. */
export const MAX_RESULTS_DEFAULT = 5;
export const MAX_RESULTS_LIMIT = 100;
/** The answer is composed from at most this many of the top chunks. */
const ANSWER_CHUNKS = 5;
const MAX_QUERY_LENGTH = 2000;

export interface SearchInput {
  query: string;
  max_results?: number | undefined;
  org_id?: string | undefined;
  category_id?: string | undefined;
  topic_id?: string | undefined;
  /** Tags (id or name) applied to the recorded query (org surface); they do not filter retrieval. */
  tags?: string[] | undefined;
  /** Content carrying any of these tags (id or name). */
  filter_tags?: string[] | undefined;
  /** Content under any of these KB folders. */
  folder_ids?: string[] | undefined;
}

export interface SearchOutcome {
  query: string;
  answer: string;
  answered: boolean;
  citations: (Citation & { content_id: string; version_id: string; chunk_index: number; title: string })[];
  results: SearchHit[];
  total_results: number;
  max_results: number;
  processing_time_ms: number;
  query_id: string;
  tag_ids: string[];
}

export interface SearchDeps {
  store: Store;
  commands: CommandBus;
  ids: IdGenerator;
  clock: Clock;
  index: SearchIndex;
  embeddings?: Embeddings | undefined;
  llm?: Llm | undefined;
  /** Where a provider outage is reported when search degrades to lexical retrieval or the extractive answer. */
  logger?: Logger | undefined;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Retrieval, cited answers and the record of each search, on both surfaces. */
export function createSearchService(deps: SearchDeps) {
  const { store, commands, ids, clock, index, embeddings, llm, logger } = deps;

  function checkInput(input: SearchInput): { query: string; max: number } {
    const query = (input.query ?? '').trim();
    if (!query) throw errors.validation('query is required', { details: { field: 'query' } });
    if (query.length > MAX_QUERY_LENGTH)
      throw errors.validation(`query is at most ${MAX_QUERY_LENGTH} characters`, { details: { field: 'query' } });
    const max = input.max_results ?? MAX_RESULTS_DEFAULT;
    if (!Number.isInteger(max) || max < 1 || max > MAX_RESULTS_LIMIT) {
      throw errors.validation(`max_results must be 1 to ${MAX_RESULTS_LIMIT}`, { details: { field: 'max_results' } });
    }
    return { query, max };
  }

  /** Filters naming another organization's (or no) category, topic or folder are 404; a folder outside the key's scope is 403. */
  async function checkFilters(ctx: CallContext, input: SearchInput): Promise<void> {
    if (input.org_id !== undefined && input.org_id.toLowerCase() !== ctx.org_id.toLowerCase()) throw errors.notFound('Organization');
    if (ctx.folder_scope !== null && ctx.folder_scope.length === 0) {
      throw errors.forbidden('This credential (API key or OAuth grant) may not use the knowledge base', { code: 'folder_scope' });
    }
    if (input.category_id !== undefined) {
      const c = UUID_RE.test(input.category_id) ? await store.get<CategoryDoc>(CATEGORIES, input.category_id) : undefined;
      if (!c || c.org_id !== ctx.org_id || c.deleted_at !== null) throw errors.notFound('Category');
    }
    if (input.topic_id !== undefined) {
      const t = UUID_RE.test(input.topic_id) ? await store.get<TopicDoc>(TOPICS, input.topic_id) : undefined;
      if (!t || t.org_id !== ctx.org_id || t.deleted_at !== null) throw errors.notFound('Topic');
    }
    for (const folderId of input.folder_ids ?? []) {
      const node = await requireNode(store, ctx.org_id, folderId);
      if (node.type !== 'folder')
        throw errors.validation('folder_ids must name folders', { code: 'not_a_folder', details: { field: 'folder_ids' } });
      if (!isInScope(ctx.folder_scope, await chainOf(store, node))) {
        throw errors.forbidden('This credential (API key or OAuth grant) may not use this part of the knowledge base', {
          code: 'folder_scope',
        });
      }
    }
  }

  async function retrieve(ctx: CallContext, query: string, max: number, filters: SearchInput & { tagIds: string[] | undefined }) {
    // A failing embeddings endpoint degrades the query to BM25 instead of failing the search.
    const vector = embeddings
      ? await embeddings.embed([query], 'query').then(
          (v) => v[0],
          (err: unknown) => {
            logger?.warn({ err }, 'embeddings provider failed; searching lexically');
            return undefined;
          },
        )
      : undefined;
    // Extra candidates so that collapsing near-duplicates still leaves max_results.
    const res = await index.search({
      org_id: ctx.org_id,
      query,
      ...(vector && { vector }),
      limit: Math.min(max * 2 + 10, 210),
      filters: {
        folder_scope: ctx.folder_scope,
        ...(filters.category_id && { category_id: filters.category_id }),
        ...(filters.topic_id && { topic_id: filters.topic_id }),
        ...(filters.tagIds?.length && { tags: filters.tagIds }),
        ...(filters.folder_ids?.length && { folder_ids: filters.folder_ids }),
      },
    });
    const { kept, examined } = collapseNearDuplicates(res.hits, (h) => h.chunk_text, { limit: max });
    // Collapsed duplicates are not counted either.
    return { hits: kept, total: res.total - (examined - kept.length) };
  }

  async function answerFrom(query: string, hits: SearchHit[]) {
    const top = hits.slice(0, ANSWER_CHUNKS).map((h) => ({ text: h.chunk_text, title: h.title, heading_path: h.heading_path }));
    // A failing chat endpoint falls back to the extractive composer: still only sentences of the chunks, still cited.
    const composed = llm
      ? await composeGroundedAnswer(llm, query, top).catch((err: unknown) => {
          logger?.warn({ err }, 'LLM provider failed; answering extractively');
          return composeExtractiveAnswer(query, top);
        })
      : composeExtractiveAnswer(query, top);
    return {
      ...composed,
      citations: composed.citations.map((c) => {
        const h = hits[c.chunk]!;
        return { ...c, content_id: h.content_id, version_id: h.version_id, chunk_index: h.chunk_index, title: h.title };
      }),
    };
  }

  /** Tag refs resolve to existing tag ids only (a filter never creates tags); an unknown one matches nothing. */
  async function tagFilter(ctx: CallContext, refs: string[] | undefined): Promise<string[] | undefined> {
    if (!refs?.length) return undefined;
    if (refs.length > MAX_TAGS_PER_CALL)
      throw errors.validation(`at most ${MAX_TAGS_PER_CALL} tags`, { details: { field: 'filter_tags' } });
    const out: string[] = [];
    for (const ref of refs) {
      if (UUID_RE.test(ref)) {
        const t = await store.get<TagDoc>(TAGS, ref.toLowerCase());
        if (t && t.org_id === ctx.org_id) out.push(t.id);
      } else {
        const named = await store.get<{ id: string; tag_id: string }>(TAG_NAMES, tagNameId(ctx.org_id, ref.trim()));
        if (named) out.push(named.tag_id);
      }
    }
    // No known tag: a filter that matches nothing, not a filter that is ignored.
    return out.length ? out : ['00000000-0000-0000-0000-000000000000'];
  }

  async function search(ctx: CallContext, input: SearchInput, surface: 'org' | 'sdk'): Promise<SearchOutcome> {
    const started = performance.now();
    const { query, max } = checkInput(input);
    await checkFilters(ctx, input);
    if ((input.tags?.length ?? 0) > MAX_TAGS_PER_CALL)
      throw errors.validation(`at most ${MAX_TAGS_PER_CALL} tags`, { details: { field: 'tags' } });
    const filterTagIds = await tagFilter(ctx, input.filter_tags);
    const { hits, total } = await retrieve(ctx, query, max, { ...input, tagIds: filterTagIds });
    const answer = await answerFrom(query, hits);
    const processing_time_ms = Math.max(1, Math.ceil(performance.now() - started));

    const queryId = ids.uuid();
    const sourceIds = [...new Set(hits.map((h) => h.content_id))];
    const at = clock.now().toISOString();
    // Recorded and tagged in one transaction: the caller's tags (by id or name) and the tags of the cited sources.
    const tagIds = await commands.transaction(metadataOf(ctx), async (s) => {
      await s.execute(searchQueryDecider, searchQueryStream(queryId), {
        type: 'record',
        query_id: queryId,
        org_id: ctx.org_id,
        query,
        surface,
        total_results: total,
        source_ids: sourceIds,
        answered: answer.grounded,
        processing_time_ms,
        at,
        folder_scope: ctx.folder_scope,
      });
      if (surface !== 'org') return [];
      const requested = input.tags?.length ? await resolveTags(s, ids, ctx.org_id, input.tags, at, { unknownIds: 'skip' }) : [];
      const cited = [...new Set(answer.citations.map((c) => c.content_id))];
      const ofSources = [
        ...(
          await tagsOf(
            s.tx,
            ctx.org_id,
            cited.map((id) => ({ type: 'content' as const, id })),
          )
        ).values(),
      ].flat();
      const all = [...new Set([...requested, ...ofSources.map((t) => t.tag_id)])];
      if (all.length) await applyTags(s, ctx.org_id, { type: 'search_query', id: queryId }, all, 'add', 'intake', at);
      return all;
    });

    return {
      query,
      answer: answer.answer,
      answered: answer.grounded,
      citations: answer.citations,
      results: hits,
      total_results: total,
      max_results: max,
      processing_time_ms,
      query_id: queryId,
      tag_ids: tagIds,
    };
  }

  async function readQuery(ctx: CallContext, queryId: string) {
    const doc = UUID_RE.test(queryId) ? await store.get<SearchQueryDoc>(SEARCH_QUERIES, queryId) : undefined;
    if (!doc || doc.org_id !== ctx.org_id) throw errors.notFound('Search query');
    return doc;
  }

  /** Search records follow the folder scope as content does (scope-visibility.ts); unscoped readers see all. */
  const visibleTo = (ctx: CallContext, doc: SearchQueryDoc): Promise<SearchQueryDoc | undefined> =>
    ctx.folder_scope === null ? Promise.resolve(doc) : searchRecordVisible(store, ctx.folder_scope, ctx.org_id, doc);

  const withTags = async (ctx: CallContext, docs: SearchQueryDoc[]) => {
    const tags = await tagsOf(
      store,
      ctx.org_id,
      docs.map((d) => ({ type: 'search_query' as const, id: d.query_id })),
    );
    return docs.map(({ id: _id, seq: _seq, folder_scope: _scope, ...d }) => ({
      ...d,
      tags: (tags.get(`search_query:${d.query_id}`) ?? []).map((t) => ({ tag_id: t.tag_id, name: t.name })),
    }));
  };

  return {
    search,

    /** Passages only (generation, fact checking): same checks and scope as search; no answer, nothing recorded. */
    async retrieve(ctx: CallContext, input: SearchInput): Promise<{ results: SearchHit[] }> {
      const { query, max } = checkInput(input);
      await checkFilters(ctx, input);
      // Nothing is recorded here, so the request's tags can only mean a filter.
      const tagIds = await tagFilter(ctx, input.filter_tags ?? input.tags);
      const { hits } = await retrieve(ctx, query, max, { ...input, tagIds });
      return { results: hits };
    },

    async listQueries(ctx: CallContext, page: Page) {
      checkPage(page);
      requireSomeScope(ctx);
      const where = { org_id: ctx.org_id, surface: 'org' };
      if (ctx.folder_scope !== null) {
        // A scoped reader's page is cut from the records it may see.
        const all = await store.find<SearchQueryDoc>(SEARCH_QUERIES, { where, sort: [{ field: 'seq', order: 'desc' }] });
        const visible: SearchQueryDoc[] = [];
        for (const doc of all) {
          const v = await visibleTo(ctx, doc);
          if (v) visible.push(v);
        }
        return { queries: await withTags(ctx, visible.slice(page.offset, page.offset + page.limit)), total_count: visible.length };
      }
      const [docs, total_count] = await Promise.all([
        store.find<SearchQueryDoc>(SEARCH_QUERIES, { where, sort: [{ field: 'seq', order: 'desc' }], ...page }),
        store.count(SEARCH_QUERIES, where),
      ]);
      return { queries: await withTags(ctx, docs), total_count };
    },

    async getQuery(ctx: CallContext, queryId: string) {
      requireSomeScope(ctx);
      const found = await readQuery(ctx, queryId);
      if (found.surface !== 'org') throw errors.notFound('Search query');
      // Outside the reader's scope: as missing as another organization's record.
      const doc = await visibleTo(ctx, found);
      if (!doc) throw errors.notFound('Search query');
      return (await withTags(ctx, [doc]))[0]!;
    },
  };
}

export type SearchService = ReturnType<typeof createSearchService>;
