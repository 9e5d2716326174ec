import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RpcClient } from '@kb/rpc';
import { Timestamp, Uuid, errorResponses, OrgPagination } from '../schemas.js';
import { callerOf } from '../auth-hook.js';

/** Mirrors the knowledge-base service's bounds (app/search.ts). */
const MAX_RESULTS = Type.Integer({
  minimum: 1,
  maximum: 100,
  default: 5,
  description: 'chunks to return (1 to 100, default 5); the answer is composed from the top 5',
});
const Query = Type.String({ minLength: 1, maxLength: 2000, pattern: '\\S', description: 'the question or keywords, as typed' });
const TagRefs = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50 });

const SearchResultChunk = Type.Object(
  {
    content_id: Uuid,
    version_id: Uuid,
    chunk_index: Type.Integer({ minimum: 0 }),
    chunk_text: Type.String(),
    score: Type.Number({ description: 'higher is better; BM25, or reciprocal-rank fusion when dense retrieval is on' }),
    title: Type.String(),
    vector_id: Type.String({ description: 'stable id of the chunk in the index (and of its vector, when embeddings are on)' }),
    heading_path: Type.Array(Type.String(), { description: 'headings above the chunk in its document' }),
    page: Type.Optional(Type.Integer()),
    sheet: Type.Optional(Type.String()),
    slide: Type.Optional(Type.Integer()),
  },
  { $id: 'SearchResultChunk', description: 'Search result chunk (spec 2.5)' },
);

const Citation = Type.Object(
  {
    n: Type.Integer({ minimum: 1, description: 'the number written in the answer as [n]; the chunk is results[n - 1]' }),
    content_id: Uuid,
    version_id: Uuid,
    chunk_index: Type.Integer({ minimum: 0 }),
    title: Type.String(),
  },
  { $id: 'SearchCitation' },
);

const commonResponse = {
  query: Type.String(),
  answer: Type.String({
    description: 'a short answer from the top chunks with [n] citations, or a sentence saying nothing relevant was found',
  }),
  citations: Type.Array(Type.Ref('SearchCitation')),
  total_results: Type.Integer({ description: 'chunks matching the query under the filters and the key’s folder scope' }),
  max_results: Type.Integer(),
  processing_time_ms: Type.Integer({ description: 'time the knowledge base spent on retrieval and the answer' }),
};

const SdkSearchBody = Type.Object(
  {
    query: Query,
    max_results: Type.Optional(MAX_RESULTS),
    org_id: Type.Optional(Type.String({ format: 'uuid', description: 'defaults to the caller’s organization; another one is 404' })),
    category_id: Type.Optional(Uuid),
    topic_id: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);

const SdkSearchResponse = Type.Object({ ...commonResponse, results: Type.Array(Type.Ref('SearchResultChunk')) }, { $id: 'SearchResponse' });

const OrgSearchBody = Type.Object(
  {
    query: Query,
    max_results: Type.Optional(MAX_RESULTS),
    category_id: Type.Optional(Uuid),
    topic_id: Type.Optional(Uuid),
    tags: Type.Optional({
      ...TagRefs,
      description:
        'tags by id or name applied to the recorded query (unknown names are created); they do not filter retrieval (filter_tags does)',
    }),
    filter_tags: Type.Optional({
      ...TagRefs,
      description: 'tags by id or name: only content carrying one of them (an unknown tag matches nothing; no tag is created)',
    }),
    folder_ids: Type.Optional(Type.Array(Uuid, { maxItems: 50, description: 'only content under these KB folders' })),
  },
  { additionalProperties: false },
);

const OrgSearchResponse = Type.Object(
  {
    ...commonResponse,
    answered: Type.Boolean({ description: 'false when nothing relevant was found' }),
    context: Type.Array(Type.Ref('SearchResultChunk'), {
      description:
        'the retrieved chunks, best first (max_results of them); the answer is composed from the first 5 and cites them as [n] = context[n - 1]',
    }),
    source_ids: Type.Array(Uuid, { description: 'content ids of the context chunks (the matching sources), distinct, best first' }),
    query_id: Uuid,
    tags: Type.Array(Uuid, { description: 'tag ids the recorded query received' }),
  },
  { $id: 'OrgSearchResponse' },
);

const SearchQueryRecord = Type.Object(
  {
    query_id: Uuid,
    query: Type.String(),
    total_results: Type.Integer(),
    source_ids: Type.Array(Uuid),
    answered: Type.Boolean(),
    processing_time_ms: Type.Integer(),
    at: Timestamp,
    tags: Type.Array(Type.Object({ tag_id: Uuid, name: Type.String() })),
  },
  { $id: 'SearchQueryRecord' },
);

interface SearchResponseMessage {
  query: string;
  answer: string;
  answered: boolean;
  citations?: unknown[];
  results?: { content_id: string; heading_path?: string[] }[];
  total_results: number;
  max_results: number;
  processing_time_ms: number;
  query_id: string;
  tag_ids?: string[];
}

const chunkJson = <T extends { heading_path?: string[] }>(c: T) => ({ ...c, heading_path: c.heading_path ?? [] });
const common = (r: SearchResponseMessage) => ({
  query: r.query,
  answer: r.answer,
  citations: r.citations ?? [],
  total_results: r.total_results,
  max_results: r.max_results,
  processing_time_ms: r.processing_time_ms,
});

const metered = { auth: { credential: 'any', permission: 'read:kb' }, meter: { operation: 'query' }, readOnly: true } as const;
const read = { auth: { credential: 'any', permission: 'read:kb' } } as const;

/** Search on both surfaces (spec 2.5, 4.1 POST /org/search, 4.2 POST /search) and the record of org searches (spec 2.8). */
export function searchRoutes(search: RpcClient): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addSchema(SearchResultChunk);
    app.addSchema(Citation);
    app.addSchema(SearchQueryRecord);

    app.post(
      '/search',
      {
        config: metered,
        schema: {
          tags: ['Search'],
          summary: 'Search the knowledge base and get a cited answer',
          description:
            'BM25 over chunk text, title and heading path (fused with dense retrieval when embeddings are configured), limited to the key’s folder scope. ' +
            'The answer cites chunks as [n] = results[n - 1]. Costs one query credit (402 when out of credits).',
          body: SdkSearchBody,
          response: { 200: SdkSearchResponse, ...errorResponses(400, 401, 402, 403, 404) },
        },
      },
      async (req) => {
        const r = await search.call<SearchResponseMessage>('Search', { ...req.body, surface: 'sdk' }, callerOf(req));
        return { ...common(r), results: (r.results ?? []).map(chunkJson) };
      },
    );

    app.post(
      '/org/search',
      {
        config: metered,
        schema: {
          tags: ['Search'],
          summary: 'Ask the knowledge base: answer, context chunks and source ids',
          description:
            'Same retrieval as POST /search, plus tag (filter_tags) and folder (folder_ids) filters. The query is recorded ' +
            '(GET /org/search/queries) and tagged with the request’s `tags` and the tags of the sources it cites (spec 2.8); `tags` never ' +
            'narrow retrieval, so a query tagged with a new name still finds everything. Costs one query credit (402 when out of credits).',
          body: OrgSearchBody,
          response: { 200: OrgSearchResponse, ...errorResponses(400, 401, 402, 403, 404) },
        },
      },
      async (req) => {
        const r = await search.call<SearchResponseMessage>('Search', { ...req.body, surface: 'org' }, callerOf(req));
        const context = (r.results ?? []).map(chunkJson);
        return {
          ...common(r),
          answered: r.answered,
          context,
          source_ids: [...new Set(context.map((c) => c.content_id))],
          query_id: r.query_id,
          tags: r.tag_ids ?? [],
        };
      },
    );

    app.get(
      '/org/search/queries',
      {
        config: read,
        schema: {
          tags: ['Search'],
          summary: 'Searches received on /org/search, newest first',
          description:
            'The total is in the X-Total-Count header. Records follow the folder scope as content does: a folder-scoped key sees ' +
            'only searches made with a scope inside its own (never a whole-KB search), and of their source_ids only those filed ' +
            'inside its scope; an empty scope is 403.',
          querystring: OrgPagination,
          response: { 200: Type.Array(Type.Ref('SearchQueryRecord')), ...errorResponses(400, 401, 403) },
        },
      },
      async (req, reply) => {
        const r = await search.call<{ queries?: unknown[]; total_count: number }>('ListSearchQueries', req.query, callerOf(req));
        void reply.header('x-total-count', String(r.total_count));
        return (r.queries ?? []).map((q) => ({ tags: [], source_ids: [], ...(q as object) }));
      },
    );

    app.get(
      '/org/search/queries/:query_id',
      {
        config: read,
        schema: {
          tags: ['Search'],
          summary: 'One recorded search',
          description: 'A record outside the key’s folder scope (see the list) is 404; an empty scope is 403.',
          params: Type.Object({ query_id: Uuid }),
          response: { 200: Type.Ref('SearchQueryRecord'), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req) => {
        const q = await search.call<object>('GetSearchQuery', req.params, callerOf(req));
        return { tags: [], source_ids: [], ...q };
      },
    );
  };
}
