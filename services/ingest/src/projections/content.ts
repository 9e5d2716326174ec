import type { StoreTransaction } from '@kb/store';
import type { Projection, Stored } from '@kb/eventsourcing';
import type { ContentChunksAdded, ContentVersionAccepted } from '@kb/events';
import type { ProcessingStatus, Source } from '../domain/content.js';

export const CONTENT = 'content_items';
export const VERSIONS = 'content_versions';
/** One document per chunk: how versions accepted before chunk batches keep their chunks (new versions never write here). */
export const CHUNKS = 'content_chunks';
/** One document per content.chunks_added event: a version's chunks as extraction sent them. */
export const CHUNK_BATCHES = 'content_chunk_batches';
/** One document per (organization, sha256) of live uploaded file or raw text: the dedupe index. */
export const HASHES = 'content_hashes';

export interface ContentDoc {
  id: string;
  org_id: string;
  type: ContentVersionAccepted['type'];
  title: string;
  summary?: string;
  version_num: number;
  version_id: string;
  processing_status: ProcessingStatus;
  failure_reason?: string;
  attempts: number;
  parent_id: string | null;
  category_id?: string;
  topic_id?: string;
  tags: string[];
  source: Source;
  created_at: string;
  updated_at: string;
  deleted: boolean;
  /** Event position of the creation: a stable creation order. */
  seq: number;
}

export interface VersionDoc {
  id: string;
  content_id: string;
  org_id: string;
  version_num: number;
  title: string;
  source: Source;
  processing_status: ProcessingStatus;
  failure_reason?: string;
  attempts: number;
  chunk_count: number;
  characters: number;
  created_at: string;
  completed_at?: string;
  /**
   * The version's chunk batches (CHUNK_BATCHES) in order, with their sizes, so a page of
   * chunks reads only the batches it spans. Absent on versions accepted before batches,
   * whose chunks are one document each (CHUNKS).
   */
  chunk_batches?: ChunkBatchRef[];
}

export interface ChunkBatchRef {
  first_index: number;
  count: number;
}

export interface ChunkBatchDoc {
  id: string;
  content_id: string;
  version_id: string;
  org_id: string;
  chunks: ContentChunksAdded['chunks'];
}

export interface ChunkDoc extends Omit<ContentChunksAdded['chunks'][number], 'text'> {
  id: string;
  content_id: string;
  version_id: string;
  org_id: string;
  text: string;
}

export const hashId = (orgId: string, sha256: string): string => `${orgId}:${sha256}`;
export const chunkId = (versionId: string, index: number): string => `${versionId}:${String(index).padStart(6, '0')}`;
/** A batch is named by its version and its first chunk, so a replayed event writes the same document. */
export const chunkBatchId = chunkId;

/** Applies a version's status change, and to the item when the version is its current one. */
async function setStatus(
  tx: StoreTransaction,
  d: { content_id: string; version_id: string; at: string },
  change: Partial<VersionDoc> & { processing_status: ProcessingStatus },
): Promise<void> {
  const version = await tx.get<VersionDoc>(VERSIONS, d.version_id);
  if (version) await tx.put(VERSIONS, { ...version, ...change });
  const item = await tx.get<ContentDoc>(CONTENT, d.content_id);
  if (!item || item.version_id !== d.version_id) return;
  const next: ContentDoc = { ...item, processing_status: change.processing_status, updated_at: d.at };
  if (change.attempts !== undefined) next.attempts = change.attempts;
  if (change.failure_reason !== undefined) next.failure_reason = change.failure_reason;
  else delete next.failure_reason;
  await tx.put(CONTENT, next);
}

/** A file sent without an extension learns its format from extraction. */
async function recordFormat(tx: StoreTransaction, d: { content_id: string; version_id: string }, format: string): Promise<void> {
  const version = await tx.get<VersionDoc>(VERSIONS, d.version_id);
  if (!version || version.source.format) return;
  await tx.put(VERSIONS, { ...version, source: { ...version.source, format } });
  const item = await tx.get<ContentDoc>(CONTENT, d.content_id);
  if (item && item.version_id === d.version_id) await tx.put(CONTENT, { ...item, source: { ...item.source, format } });
}

export const contentProjection: Projection = {
  name: 'content',
  collections: [CONTENT, VERSIONS, CHUNKS, CHUNK_BATCHES, HASHES],
  indexes: [
    { collection: CONTENT, fields: ['org_id', 'deleted', 'seq'] },
    { collection: VERSIONS, fields: ['content_id'] },
    { collection: CHUNKS, fields: ['version_id'] },
  ],
  async apply(tx: StoreTransaction, event: Stored): Promise<void> {
    switch (event.type) {
      case 'content.created':
      case 'content.version_added': {
        const d = event.data;
        const previous = await tx.get<ContentDoc>(CONTENT, d.content_id);
        const item: ContentDoc = {
          id: d.content_id,
          org_id: d.org_id,
          type: d.type,
          title: d.title,
          version_num: d.version_num,
          version_id: d.version_id,
          processing_status: 'queued',
          attempts: 0,
          parent_id: d.parent_id,
          tags: d.tags,
          source: d.source,
          created_at: previous?.created_at ?? d.at,
          updated_at: d.at,
          deleted: false,
          seq: previous?.seq ?? event.position,
          ...(d.summary !== undefined && { summary: d.summary }),
          ...(d.category_id !== undefined && { category_id: d.category_id }),
          ...(d.topic_id !== undefined && { topic_id: d.topic_id }),
        };
        await tx.put(CONTENT, item);
        await tx.put<VersionDoc>(VERSIONS, {
          id: d.version_id,
          content_id: d.content_id,
          org_id: d.org_id,
          version_num: d.version_num,
          title: d.title,
          source: d.source,
          processing_status: 'queued',
          attempts: 0,
          chunk_count: 0,
          characters: 0,
          created_at: d.at,
          chunk_batches: [],
        });
        if (d.source.kind === 'file' || d.source.kind === 'raw') {
          await tx.put(HASHES, { id: hashId(d.org_id, d.source.sha256), content_id: d.content_id, version_id: d.version_id });
        }
        return;
      }
      case 'content.processing_started': {
        const d = event.data;
        await setStatus(tx, d, { processing_status: 'processing', attempts: d.attempt });
        return;
      }
      case 'content.chunks_added': {
        const d = event.data;
        const version = await tx.get<VersionDoc>(VERSIONS, d.version_id);
        if (version?.chunk_batches) {
          // One document for the batch (57 chunks of an ordinary document: 57 writes before).
          const first = d.chunks.reduce((min, c) => Math.min(min, c.chunk_index), Number.MAX_SAFE_INTEGER);
          await tx.put<ChunkBatchDoc>(CHUNK_BATCHES, {
            id: chunkBatchId(d.version_id, first),
            content_id: d.content_id,
            version_id: d.version_id,
            org_id: d.org_id,
            chunks: d.chunks,
          });
          const batches = version.chunk_batches.filter((b) => b.first_index !== first);
          batches.push({ first_index: first, count: d.chunks.length });
          batches.sort((a, b) => a.first_index - b.first_index);
          await tx.put<VersionDoc>(VERSIONS, { ...version, chunk_batches: batches });
          return;
        }
        // A version accepted before chunk batches keeps one document per chunk.
        for (const chunk of d.chunks) {
          await tx.put<ChunkDoc>(CHUNKS, {
            ...chunk,
            id: chunkId(d.version_id, chunk.chunk_index),
            content_id: d.content_id,
            version_id: d.version_id,
            org_id: d.org_id,
          });
        }
        return;
      }
      case 'content.extracted': {
        const d = event.data;
        await setStatus(tx, d, {
          processing_status: 'completed',
          chunk_count: d.chunk_count,
          characters: d.characters,
          completed_at: d.at,
        });
        if (d.format) await recordFormat(tx, d, d.format);
        return;
      }
      case 'content.failed': {
        const d = event.data;
        await setStatus(tx, d, { processing_status: 'failed', failure_reason: d.reason, attempts: d.attempts, completed_at: d.at });
        // A failed file does not block uploading the same bytes again.
        const version = await tx.get<VersionDoc>(VERSIONS, d.version_id);
        const hash = version && (await tx.get<{ id: string; version_id: string }>(HASHES, hashId(d.org_id, version.source.sha256)));
        if (hash && hash.version_id === d.version_id) await tx.delete(HASHES, hash.id);
        return;
      }
      case 'content.updated': {
        const d = event.data;
        const item = await tx.get<ContentDoc>(CONTENT, d.content_id);
        if (!item) return;
        const next: ContentDoc = { ...item, updated_at: d.at };
        if (d.title !== undefined) next.title = d.title;
        for (const field of ['summary', 'category_id', 'topic_id'] as const) {
          const value = d[field];
          if (value === null) delete next[field];
          else if (value !== undefined) next[field] = value;
        }
        await tx.put(CONTENT, next);
        return;
      }
      case 'content.moved': {
        const d = event.data;
        const item = await tx.get<ContentDoc>(CONTENT, d.content_id);
        if (item) await tx.put(CONTENT, { ...item, parent_id: d.parent_id, updated_at: d.at });
        return;
      }
      case 'content.deleted': {
        const d = event.data;
        const item = await tx.get<ContentDoc>(CONTENT, d.content_id);
        if (!item) return;
        await tx.put(CONTENT, { ...item, deleted: true, updated_at: d.at });
        // The file may be uploaded again as new content once this is gone.
        for (const version of await tx.find<VersionDoc>(VERSIONS, { where: { content_id: d.content_id } })) {
          const hash = await tx.get<{ id: string; content_id: string }>(HASHES, hashId(version.org_id, version.source.sha256));
          if (hash?.content_id === d.content_id) await tx.delete(HASHES, hash.id);
        }
        return;
      }
      default:
        return;
    }
  },
};
