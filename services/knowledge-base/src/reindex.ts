import type { Logger } from 'pino';
import { systemClock } from '@kb/platform';
import { openStore } from '@kb/runtime';
import type { KnowledgeBaseConfig } from './config.js';
import { openEmbeddings, openSearchIndex } from './search-adapters.js';
import { createSearchIndexer } from './app/search-indexing.js';
import { SERVICE_NAME } from './service.js';

/**
 * Rebuilds the search index from the chunks the knowledge base keeps in its
 * store (the current version of every content item), e.g. after changing the
 * embedding model or moving to another index adapter. Run with the
 * knowledge-base service stopped (or accept that searches see a partial index
 * meanwhile).
 */
export async function reindexSearch(
  config: KnowledgeBaseConfig,
  logger: Logger,
  onProgress?: (done: number, total: number) => void,
): Promise<{ contents: number; chunks: number }> {
  const store = await openStore(config, SERVICE_NAME, systemClock, logger);
  const index = await openSearchIndex(config);
  const embeddings = await openEmbeddings(config).catch(async (err: unknown) => {
    await index.close();
    await store.close();
    throw err;
  });
  try {
    const indexer = createSearchIndexer({ index, embeddings, logger });
    return await indexer.reindex(store, onProgress);
  } finally {
    await embeddings?.close?.();
    await index.close();
    await store.close();
  }
}
