import type { Logger } from 'pino';
import type { DocumentReader, Store, StoreTransaction } from '@kb/store';
import type { EventHandlers } from '@kb/eventsourcing';
import type { Embeddings } from '@kb/ai';
import type { ContentMeta, SearchIndex, ChunkInput } from '@kb/search';
import type { ContentChunksAdded, EnvelopeOf } from '@kb/events';
import { rootIdOf } from '../domain/kb-node.js';
import { KB_NODES, type KbNodeDoc } from '../projections/kb-tree.js';
import { TAG_ASSIGNMENTS, assignmentId, type TagAssignmentDoc } from '../projections/tags.js';
import { chainOf } from './kb-tree.js';
import { dropVectorJob, embeddingTextOf, queueVectors, SEARCH_VECTOR_JOBS } from './search-vectors.js';

/**
 * Keeps the search index in step with the content lifecycle (ingest topic) and
 * with filing changes of this service (tags, moves). Chunks of a version are
 * kept in the store as they arrive and indexed together when the version is
 * extracted, replacing the previous version's chunks in one index write; so a
 * search sees the old version or the new one, never a mix. The kept chunks are
 * what the re-index command rebuilds the index from.
 *
 * Index writes are idempotent (a version replaces the content's chunks), so a
 * redelivery after a failed commit writes the same thing again.
 */
export const SEARCH_INDEX_CONSUMER_GROUP = 'knowledge-base.search-index';

/** The version being (or last) indexed of each content item, with its filing. */
export const SEARCH_CONTENTS = 'search_contents';
/** Chunk batches as ingest sent them, per version; the current version's are kept for re-indexing. */
export const SEARCH_CHUNKS = 'search_chunks';

export interface SearchContentDoc {
  id: string;
  org_id: string;
  content_id: string;
  /** Latest accepted version. */
  version_id: string;
  /** Version whose chunks are in the index (absent until the first extraction). */
  indexed_version_id?: string;
  /** Version whose chunk vectors are in the index (semantic search ready when it is the indexed one). */
  vectors_version_id?: string;
  title: string;
  category_id: string | null;
  topic_id: string | null;
  parent_id: string | null;
}

interface ChunkBatchDoc {
  id: string;
  org_id: string;
  content_id: string;
  version_id: string;
  first_index: number;
  chunks: ContentChunksAdded['chunks'];
}

export const searchIndexCollections = { contents: SEARCH_CONTENTS, chunks: SEARCH_CHUNKS, vectorJobs: SEARCH_VECTOR_JOBS };

/** Whether a content item can be found by its words and by its meaning ('off' without an embeddings provider). */
export interface SearchReadiness {
  keyword: 'pending' | 'ready';
  semantic: 'pending' | 'ready' | 'off';
}

export function readinessOf(doc: SearchContentDoc | undefined, semantic: boolean): SearchReadiness {
  const indexed = doc?.indexed_version_id;
  return {
    keyword: indexed ? 'ready' : 'pending',
    semantic: !semantic ? 'off' : indexed && doc.vectors_version_id === indexed ? 'ready' : 'pending',
  };
}

export interface SearchIndexingDeps {
  index: SearchIndex;
  embeddings?: Embeddings | undefined;
  logger: Logger;
  /** Called when a version was written to the index by its words (its vectors are queued). */
  onIndexed?: () => void;
}

/** Folder ids the content sits under (nearest first), from its tree node when the tree has it, else its intake folder. */
export async function folderPathOf(reader: DocumentReader, doc: Pick<SearchContentDoc, 'org_id' | 'content_id' | 'parent_id'>) {
  const [node] = await reader.find<KbNodeDoc>(KB_NODES, { where: { content_id: doc.content_id }, limit: 1 });
  const parentId = node && node.org_id === doc.org_id ? node.parent_id : doc.parent_id;
  const parent = parentId ? await reader.get<KbNodeDoc>(KB_NODES, parentId) : undefined;
  if (!parent || parent.org_id !== doc.org_id || parent.type !== 'folder') return [rootIdOf(doc.org_id)];
  const chain = await chainOf(reader, parent);
  return chain.includes(rootIdOf(doc.org_id)) ? chain : [...chain, rootIdOf(doc.org_id)];
}

async function tagIdsOf(reader: DocumentReader, orgId: string, contentId: string): Promise<string[]> {
  const a = await reader.get<TagAssignmentDoc>(TAG_ASSIGNMENTS, assignmentId('content', contentId));
  return a && a.org_id === orgId ? a.tag_ids : [];
}

async function metaOf(reader: DocumentReader, doc: SearchContentDoc): Promise<ContentMeta> {
  return {
    title: doc.title,
    category_id: doc.category_id,
    topic_id: doc.topic_id,
    tags: await tagIdsOf(reader, doc.org_id, doc.content_id),
    folder_path: await folderPathOf(reader, doc),
  };
}

/** The chunks of a version's kept batches, in order. */
function chunksIn(batches: ChunkBatchDoc[]): ChunkBatchDoc['chunks'] {
  const byIndex = new Map<number, ChunkBatchDoc['chunks'][number]>();
  for (const b of batches) for (const c of b.chunks) byIndex.set(c.chunk_index, c);
  return [...byIndex.values()].sort((a, b) => a.chunk_index - b.chunk_index);
}

export async function chunksOf(reader: DocumentReader, versionId: string): Promise<ChunkBatchDoc['chunks']> {
  return chunksIn(await reader.find<ChunkBatchDoc>(SEARCH_CHUNKS, { where: { version_id: versionId } }));
}

async function dropChunks(tx: StoreTransaction, where: Record<string, string>): Promise<void> {
  for (const b of await tx.find<ChunkBatchDoc>(SEARCH_CHUNKS, { where })) await tx.delete(SEARCH_CHUNKS, b.id);
}

export function createSearchIndexer(deps: SearchIndexingDeps) {
  const { index, embeddings, logger, onIndexed } = deps;
  let lastIndexedAt = 0;

  /** The kept chunks as index input; with their vectors only when asked (re-indexing), else they come from the vector worker. */
  async function inputsOf(chunks: ChunkBatchDoc['chunks'], title: string, withVectors: boolean): Promise<ChunkInput[]> {
    const inputs: ChunkInput[] = chunks.map((c) => ({
      chunk_index: c.chunk_index,
      text: c.text,
      ...(c.heading_path && { heading_path: c.heading_path }),
      ...(c.page !== undefined && { page: c.page }),
      ...(c.sheet !== undefined && { sheet: c.sheet }),
      ...(c.slide !== undefined && { slide: c.slide }),
    }));
    if (!withVectors || !embeddings || inputs.length === 0) return inputs;
    const vectors = await embeddings.embed(
      inputs.map((c) => embeddingTextOf(title, c)),
      'document',
    );
    return inputs.map((c, i) => ({ ...c, embedding: vectors[i]! }));
  }

  /** Writes the content's current version into the index from the kept chunks (read unless given). */
  async function indexCurrent(
    reader: DocumentReader,
    doc: SearchContentDoc,
    versionId: string,
    kept?: ChunkBatchDoc['chunks'],
    withVectors = false,
  ): Promise<number> {
    const chunks = kept ?? (await chunksOf(reader, versionId));
    const meta = await metaOf(reader, doc);
    await index.indexVersion({
      org_id: doc.org_id,
      content_id: doc.content_id,
      version_id: versionId,
      ...meta,
      chunks: await inputsOf(chunks, doc.title, withVectors),
    });
    return chunks.length;
  }

  const versionAccepted = async (tx: StoreTransaction, event: EnvelopeOf<'content.created' | 'content.version_added'>) => {
    const d = event.data;
    const existing = await tx.get<SearchContentDoc>(SEARCH_CONTENTS, d.content_id);
    if (existing && existing.org_id !== d.org_id) return;
    const doc: SearchContentDoc = {
      ...existing,
      id: d.content_id,
      org_id: d.org_id,
      content_id: d.content_id,
      version_id: d.version_id,
      title: d.title,
      category_id: d.category_id ?? null,
      topic_id: d.topic_id ?? null,
      parent_id: d.parent_id,
    };
    await tx.put(SEARCH_CONTENTS, doc);
  };

  async function refile(reader: DocumentReader, contentId: string): Promise<void> {
    const doc = await reader.get<SearchContentDoc>(SEARCH_CONTENTS, contentId);
    if (!doc?.indexed_version_id) return;
    await index.updateContent(doc.org_id, contentId, await metaOf(reader, doc));
  }

  /** Content nodes under a folder (the folder's whole subtree), for re-filing after a move. */
  async function contentUnder(reader: DocumentReader, folderId: string): Promise<string[]> {
    const out: string[] = [];
    const queue = [folderId];
    while (queue.length > 0 && out.length < 100_000) {
      const children = await reader.find<KbNodeDoc>(KB_NODES, { where: { parent_id: queue.shift()! } });
      for (const c of children) {
        if (c.content_id !== undefined) out.push(c.content_id);
        else queue.push(c.kb_node_id);
      }
    }
    return out;
  }

  const handlers: EventHandlers = {
    'content.created': versionAccepted,
    'content.version_added': versionAccepted,

    'content.chunks_added': async (tx, event) => {
      const d = event.data;
      const first = d.chunks.reduce((min, c) => Math.min(min, c.chunk_index), Number.MAX_SAFE_INTEGER);
      const batch: ChunkBatchDoc = {
        id: `${d.version_id}:${first}`,
        org_id: d.org_id,
        content_id: d.content_id,
        version_id: d.version_id,
        first_index: first,
        chunks: d.chunks,
      };
      await tx.put(SEARCH_CHUNKS, batch);
    },

    'content.extracted': async (tx, event) => {
      const d = event.data;
      const doc = await tx.get<SearchContentDoc>(SEARCH_CONTENTS, d.content_id);
      // A newer version was accepted meanwhile: this one is never indexed.
      if (!doc || doc.org_id !== d.org_id || doc.version_id !== d.version_id) {
        await dropChunks(tx, { version_id: d.version_id });
        return;
      }
      // The content's kept batches, read once (each holds up to 200k characters): this version's
      // are indexed and kept for re-indexing, the others' (the version indexed before) dropped.
      const batches = await tx.find<ChunkBatchDoc>(SEARCH_CHUNKS, { where: { content_id: d.content_id } });
      const count = await indexCurrent(tx, doc, d.version_id, chunksIn(batches.filter((b) => b.version_id === d.version_id)));
      for (const b of batches) if (b.version_id !== d.version_id) await tx.delete(SEARCH_CHUNKS, b.id);
      await tx.put(SEARCH_CONTENTS, { ...doc, indexed_version_id: d.version_id });
      // Searchable by its words from now on; its vectors are computed in the background.
      if (embeddings) await queueVectors(tx, { org_id: d.org_id, content_id: d.content_id, version_id: d.version_id, title: doc.title });
      lastIndexedAt = Date.now();
      onIndexed?.();
      logger.debug({ content_id: d.content_id, version_id: d.version_id, chunks: count }, 'content version indexed');
    },

    'content.failed': async (tx, event) => {
      const d = event.data;
      const doc = await tx.get<SearchContentDoc>(SEARCH_CONTENTS, d.content_id);
      if (doc?.indexed_version_id !== d.version_id) await dropChunks(tx, { version_id: d.version_id });
    },

    'content.updated': async (tx, event) => {
      const d = event.data;
      const doc = await tx.get<SearchContentDoc>(SEARCH_CONTENTS, d.content_id);
      if (!doc || doc.org_id !== d.org_id) return;
      const next: SearchContentDoc = {
        ...doc,
        ...(d.title !== undefined && { title: d.title }),
        ...(d.category_id !== undefined && { category_id: d.category_id }),
        ...(d.topic_id !== undefined && { topic_id: d.topic_id }),
      };
      await tx.put(SEARCH_CONTENTS, next);
      if (next.indexed_version_id) {
        await index.updateContent(d.org_id, d.content_id, { title: next.title, category_id: next.category_id, topic_id: next.topic_id });
      }
    },

    'content.deleted': async (tx, event) => {
      const d = event.data;
      const doc = await tx.get<SearchContentDoc>(SEARCH_CONTENTS, d.content_id);
      if (doc && doc.org_id !== d.org_id) return;
      await index.removeContent(d.org_id, d.content_id);
      await dropChunks(tx, { content_id: d.content_id });
      await dropVectorJob(tx, d.content_id);
      await tx.delete(SEARCH_CONTENTS, d.content_id);
    },

    // Filing changes of this service's own tree and tags.
    'tags.set': async (tx, event) => {
      const d = event.data;
      if (d.target_type !== 'content') return;
      const doc = await tx.get<SearchContentDoc>(SEARCH_CONTENTS, d.target_id);
      if (doc?.indexed_version_id && doc.org_id === d.org_id) await index.updateContent(d.org_id, d.target_id, { tags: d.tag_ids });
    },

    'kb_node.moved': async (tx, event) => {
      const d = event.data;
      const node = await tx.get<KbNodeDoc>(KB_NODES, d.kb_node_id);
      if (!node) return;
      const contents = node.content_id !== undefined ? [node.content_id] : await contentUnder(tx, node.kb_node_id);
      for (const contentId of contents) await refile(tx, contentId);
    },
  };

  /**
   * Rebuilds the whole index from the kept chunks (after a change of embedding
   * model or index adapter). Reports progress per content item.
   */
  async function reindex(store: Store, onProgress?: (done: number, total: number) => void): Promise<{ contents: number; chunks: number }> {
    await index.clear();
    const total = await store.count(SEARCH_CONTENTS);
    let done = 0;
    let chunks = 0;
    const page = 200;
    for (let offset = 0; ; offset += page) {
      const docs = await store.find<SearchContentDoc>(SEARCH_CONTENTS, { sort: [{ field: 'id', order: 'asc' }], limit: page, offset });
      for (const doc of docs) {
        if (doc.indexed_version_id) {
          chunks += await indexCurrent(store, doc, doc.indexed_version_id, undefined, true);
          if (embeddings)
            await store.transaction(async (tx) => {
              await tx.put(SEARCH_CONTENTS, { ...doc, vectors_version_id: doc.indexed_version_id });
              await dropVectorJob(tx, doc.content_id);
            });
        }
        onProgress?.(++done, total);
      }
      if (docs.length < page) break;
    }
    return { contents: done, chunks };
  }

  return {
    handlers,
    reindex,
    /** Whether keyword indexing wrote a version in the last two seconds (vectors then yield the cores). */
    keywordBusy: () => Date.now() - lastIndexedAt < 2000,
  };
}

export type SearchIndexer = ReturnType<typeof createSearchIndexer>;
