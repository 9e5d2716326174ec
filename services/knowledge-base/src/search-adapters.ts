import { join } from 'node:path';
import type { FusionOptions, SearchIndex } from '@kb/search';
import { createOpenAiChat, createOpenAiEmbeddings, type Embeddings, type Llm } from '@kb/ai';
import type { Store } from '@kb/store';
import type { Clock, Logger } from '@kb/platform';
import type { RateLimiter } from '@kb/coordination';
import type { KnowledgeBaseConfig } from './config.js';

/** The search index the configuration picks; Elasticsearch is imported only when chosen. */
export async function openSearchIndex(config: KnowledgeBaseConfig): Promise<SearchIndex> {
  if (config.SEARCH_INDEX === 'elasticsearch') {
    const { createElasticsearchIndex } = await import('@kb/search/elasticsearch');
    return createElasticsearchIndex({ url: config.ELASTICSEARCH_URL!, index: config.ELASTICSEARCH_INDEX });
  }
  const { createSqliteSearchIndex } = await import('@kb/search/sqlite');
  return createSqliteSearchIndex({ path: join(config.DATA_DIR, 'knowledge-base-search.db'), fusion: fusionOf(config) });
}

/** The fusion of BM25 and dense candidates the settings ask for. */
export function fusionOf(config: Pick<KnowledgeBaseConfig, 'SEARCH_FUSION' | 'SEARCH_DENSE_WEIGHT' | 'SEARCH_RRF_K'>): FusionOptions {
  return config.SEARCH_FUSION === 'convex'
    ? { method: 'convex', denseWeight: config.SEARCH_DENSE_WEIGHT }
    : { method: 'rrf', k: config.SEARCH_RRF_K, denseWeight: config.SEARCH_DENSE_WEIGHT };
}

/**
 * Embeddings: an OpenAI-compatible endpoint (EMBEDDINGS_URL), a local ONNX
 * model (EMBEDDINGS=local, loaded only then), or none (lexical retrieval only).
 * Unset, the local model is used when its files are there (npm start fetches
 * them), and the start says so when they are not.
 */
export async function openEmbeddings(
  config: KnowledgeBaseConfig,
  logger?: Pick<Logger, 'info' | 'warn'>,
): Promise<(Embeddings & { close?(): Promise<void> }) | undefined> {
  let provider = config.EMBEDDINGS ?? (config.EMBEDDINGS_URL ? 'openai' : undefined);
  if (provider === undefined) {
    const { missingModelFiles } = await import('@kb/ai/local');
    const missing = missingModelFiles(config.EMBEDDINGS_MODEL_DIR);
    if (missing) {
      logger?.warn(
        `search: keyword only, the embeddings model is missing: ${missing}; hybrid (semantic) search starts once it is there (or set EMBEDDINGS=none to silence this)`,
      );
      return undefined;
    }
    provider = 'local';
  }
  if (provider === 'none') {
    logger?.info('search: keyword only (EMBEDDINGS=none)');
    return undefined;
  }
  if (provider === 'local') {
    const { createLocalEmbeddings } = await import('@kb/ai/local');
    logger?.info({ model_dir: config.EMBEDDINGS_MODEL_DIR }, 'search: hybrid, keyword and semantic (local embeddings model)');
    // Chunks are embedded on a thread of their own at a lower priority: ONNX Runtime's inference is
    // synchronous, and on this thread it would stall searches, consumers and heartbeats meanwhile.
    return createLocalEmbeddings({
      modelDir: config.EMBEDDINGS_MODEL_DIR,
      threads: config.EMBEDDINGS_THREADS,
      documentWorker: { nice: config.EMBEDDINGS_NICE },
    });
  }
  return createOpenAiEmbeddings({
    baseUrl: config.EMBEDDINGS_URL!,
    model: config.EMBEDDINGS_MODEL,
    ...(config.EMBEDDINGS_API_KEY && { apiKey: config.EMBEDDINGS_API_KEY }),
  });
}

/** A chat model when LLM_URL is set; otherwise answers come from the extractive composer. */
export function openLlm(config: KnowledgeBaseConfig): Llm | undefined {
  if (!config.LLM_URL) return undefined;
  return createOpenAiChat({ baseUrl: config.LLM_URL, model: config.LLM_MODEL, ...(config.LLM_API_KEY && { apiKey: config.LLM_API_KEY }) });
}

/**
 * Rate-limit counters: in the service store (embedded) or Redis (shared by
 * replicas). A sliding window, so "N a minute" holds over any minute, not per
 * clock minute (a fixed window would allow 2N across a minute boundary).
 */
export async function openRateLimiter(config: KnowledgeBaseConfig, store: Store, clock: Clock): Promise<RateLimiter> {
  if (config.COORDINATION === 'redis') {
    const { createRedisSlidingRateLimiter } = await import('@kb/coordination/redis');
    return createRedisSlidingRateLimiter({ url: config.REDIS_URL!, prefix: 'knowledge-base' });
  }
  const { createStoreSlidingRateLimiter } = await import('@kb/coordination/store');
  return createStoreSlidingRateLimiter({ store, clock });
}
