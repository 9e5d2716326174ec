import { Type } from '@sinclair/typebox';
import { DEFAULT_FUSION } from '@kb/search';

/** Configuration of search, embeddings and answers (spread into the service's config spec). */
export const searchConfigFields = {
  SEARCH_INDEX: Type.Union([Type.Literal('sqlite'), Type.Literal('elasticsearch')], {
    default: 'sqlite',
    description: 'search index: sqlite (FTS5 file under DATA_DIR) or elasticsearch',
  }),
  ELASTICSEARCH_URL: Type.Optional(
    Type.String({ pattern: '^https?://', description: 'Elasticsearch URL, when SEARCH_INDEX=elasticsearch' }),
  ),
  ELASTICSEARCH_INDEX: Type.String({
    default: 'kb-chunks',
    pattern: '^[a-z0-9][a-z0-9_-]*$',
    description: 'name of the one chunk index of this deployment (every organization, filtered by org_id)',
  }),
  EMBEDDINGS: Type.Optional(
    Type.Union([Type.Literal('none'), Type.Literal('openai'), Type.Literal('local')], {
      description:
        'embeddings provider of hybrid search: openai (EMBEDDINGS_URL), local (ONNX model in EMBEDDINGS_MODEL_DIR, run in-process) or none (keyword search only); unset: openai when EMBEDDINGS_URL is set, else local when the model is in EMBEDDINGS_MODEL_DIR, else none (said at start)',
    }),
  ),
  EMBEDDINGS_MODEL_DIR: Type.String({
    minLength: 1,
    default: '.models/bge-small-en-v1.5-q',
    description:
      'folder with model.onnx, tokenizer.json and config.json of the local embeddings model (npm start and scripts/fetch-embedding-model.sh put bge-small there)',
  }),
  EMBEDDINGS_THREADS: Type.Integer({
    minimum: 1,
    maximum: 64,
    default: 1,
    description: 'ONNX Runtime threads of each local embeddings session (one for queries, one for indexing)',
  }),
  EMBEDDINGS_NICE: Type.Integer({
    minimum: 0,
    maximum: 19,
    default: 10,
    description:
      'nice value of the thread that embeds chunks for the index (Linux; 0 to 19): it yields the CPU to searches, keyword indexing and the rest of the process while the machine is busy, and runs at full speed when it is idle',
  }),
  SEARCH_FUSION: Type.Union([Type.Literal('rrf'), Type.Literal('convex')], {
    default: DEFAULT_FUSION.method,
    description: 'how BM25 and dense candidates are fused (embedded index): weighted reciprocal rank, or min-max scaled scores',
  }),
  SEARCH_DENSE_WEIGHT: Type.Number({
    minimum: 0,
    maximum: 1,
    default: DEFAULT_FUSION.denseWeight,
    description: 'weight of dense retrieval in the fusion, 0 to 1 (chosen by cross-validation on SciFact)',
  }),
  SEARCH_RRF_K: Type.Integer({
    minimum: 1,
    default: DEFAULT_FUSION.method === 'rrf' ? DEFAULT_FUSION.k : 60,
    description: 'rank constant of SEARCH_FUSION=rrf',
  }),
  EMBEDDINGS_URL: Type.Optional(
    Type.String({ pattern: '^https?://', description: 'OpenAI-compatible base URL (…/v1) for embeddings; unset: lexical retrieval only' }),
  ),
  EMBEDDINGS_MODEL: Type.String({ default: 'text-embedding-3-small', description: 'embedding model name' }),
  EMBEDDINGS_API_KEY: Type.Optional(Type.String({ description: 'bearer key of the embeddings endpoint' })),
  LLM_URL: Type.Optional(
    Type.String({
      pattern: '^https?://',
      description: 'OpenAI-compatible base URL (…/v1) for answers; unset: the built-in extractive composer',
    }),
  ),
  LLM_MODEL: Type.String({ default: 'gpt-4o-mini', description: 'chat model name' }),
  LLM_API_KEY: Type.Optional(Type.String({ description: 'bearer key of the chat endpoint' })),
  COORDINATION: Type.Union([Type.Literal('store'), Type.Literal('redis')], {
    default: 'store',
    description: 'where rate-limit counters live: the service store (one machine) or Redis (shared by replicas)',
  }),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://', description: 'Redis for COORDINATION=redis' })),
  PROMPT_SUGGESTIONS_PER_MINUTE: Type.Integer({
    minimum: 1,
    default: 10,
    description: 'calls of POST /org/prompts/suggestions per organization per minute (429 with Retry-After beyond)',
  }),
};

export function checkSearchSettings(c: {
  SEARCH_INDEX: string;
  ELASTICSEARCH_URL?: string | undefined;
  EMBEDDINGS?: string | undefined;
  EMBEDDINGS_URL?: string | undefined;
  EMBEDDINGS_MODEL_DIR?: string | undefined;
  COORDINATION?: string | undefined;
  REDIS_URL?: string | undefined;
}): string[] {
  return [
    ...(c.SEARCH_INDEX === 'elasticsearch' && !c.ELASTICSEARCH_URL
      ? ['ELASTICSEARCH_URL is required when SEARCH_INDEX=elasticsearch']
      : []),
    ...(c.EMBEDDINGS === 'local' && !c.EMBEDDINGS_MODEL_DIR ? ['EMBEDDINGS_MODEL_DIR is required when EMBEDDINGS=local'] : []),
    ...(c.EMBEDDINGS === 'openai' && !c.EMBEDDINGS_URL ? ['EMBEDDINGS_URL is required when EMBEDDINGS=openai'] : []),
    // Without it the suggestion limiter would fail on the first call instead of at start.
    ...(c.COORDINATION === 'redis' && !c.REDIS_URL ? ['REDIS_URL is required when COORDINATION=redis'] : []),
  ];
}
