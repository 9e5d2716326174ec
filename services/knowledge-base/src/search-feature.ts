import type { Logger } from 'pino';
import type { Clock, IdGenerator } from '@kb/platform';
import { topics } from '@kb/events';
import type { Store } from '@kb/store';
import type { EventBus, Subscription } from '@kb/bus';
import { startEventConsumer, type CommandBus } from '@kb/eventsourcing';
import { serviceConstructor, type createRpcServer, type loadProto } from '@kb/rpc';
import type { KnowledgeBaseConfig } from './config.js';
import { openEmbeddings, openLlm, openRateLimiter, openSearchIndex } from './search-adapters.js';
import {
  SEARCH_CHUNKS,
  SEARCH_CONTENTS,
  SEARCH_INDEX_CONSUMER_GROUP,
  chunksOf,
  createSearchIndexer,
  readinessOf,
  type SearchContentDoc,
  type SearchReadiness,
} from './app/search-indexing.js';
import { SEARCH_VECTOR_JOBS, createVectorWorker, type VectorWorker } from './app/search-vectors.js';
import { createSearchService } from './app/search.js';
import { searchHandlers } from './transport/search-grpc.js';
import { createPromptsService } from './app/prompts.js';
import { createPromptSuggestions } from './app/prompt-suggestions.js';
import { promptHandlers } from './transport/prompts-grpc.js';

/**
 * Search and prompts, wired in one place so the composition root adds a few
 * lines: the search index (adapter from config), its consumer of the ingest
 * topic and of this service's own filing events (its own consumer group), and
 * the gRPC services.
 */
export async function createSearchFeature(deps: {
  config: KnowledgeBaseConfig;
  store: Store;
  bus: EventBus;
  commands: CommandBus;
  ids: IdGenerator;
  clock: Clock;
  logger: Logger;
}) {
  const { config, store, bus, commands, ids, clock, logger } = deps;
  const index = await openSearchIndex(config);
  const embeddings = await openEmbeddings(config, logger);
  const llm = openLlm(config);
  let vectors: VectorWorker | undefined;
  const indexer = createSearchIndexer({ index, embeddings, logger, onIndexed: () => vectors?.notify() });
  if (embeddings) {
    vectors = createVectorWorker({
      store,
      index,
      embeddings,
      logger,
      chunksOf,
      indexedVersionOf: async (reader, contentId) => (await reader.get<SearchContentDoc>(SEARCH_CONTENTS, contentId))?.indexed_version_id,
      markReady: async (tx, contentId, versionId) => {
        const doc = await tx.get<SearchContentDoc>(SEARCH_CONTENTS, contentId);
        if (doc?.indexed_version_id === versionId) await tx.put(SEARCH_CONTENTS, { ...doc, vectors_version_id: versionId });
      },
      keywordBusy: indexer.keywordBusy,
    });
  }
  const search = createSearchService({ store, commands, ids, clock, index, embeddings, llm, logger });
  const prompts = createPromptsService({ store, commands, ids, clock });
  const limiter = await openRateLimiter(config, store, clock);
  const suggestions = createPromptSuggestions({ store, index, prompts, limiter, perMinute: config.PROMPT_SUGGESTIONS_PER_MINUTE });
  await store.ensureIndex(SEARCH_CHUNKS, ['version_id']);
  await store.ensureIndex(SEARCH_CHUNKS, ['content_id']);
  await store.ensureIndex(SEARCH_VECTOR_JOBS, ['queued_at']);
  let consumer: Subscription | undefined;
  /** Whether a content item of the organization is searchable by words and by meaning. */
  async function readiness(orgId: string, contentId: string): Promise<SearchReadiness> {
    const doc = await store.get<SearchContentDoc>(SEARCH_CONTENTS, contentId);
    return readinessOf(doc?.org_id === orgId ? doc : undefined, embeddings !== undefined);
  }

  return {
    search,
    prompts,
    indexer,
    index,
    readiness,
    register(server: ReturnType<typeof createRpcServer>, proto: ReturnType<typeof loadProto>) {
      server.addService(serviceConstructor(proto, 'knowledge_base.v1.Search'), searchHandlers(search, readiness));
      server.addService(serviceConstructor(proto, 'knowledge_base.v1.Prompts'), promptHandlers(prompts, suggestions));
    },
    async start() {
      consumer = await startEventConsumer({
        bus,
        store,
        groupId: SEARCH_INDEX_CONSUMER_GROUP,
        topics: [topics.ingest, topics.knowledgeBase],
        handlers: indexer.handlers,
        logger,
      });
      // Versions left pending by the last run are resumed.
      vectors?.start();
    },
    async stop() {
      await consumer?.stop();
      await vectors?.stop();
      await index.close();
      await embeddings?.close?.();
      await limiter.close();
    },
  };
}
