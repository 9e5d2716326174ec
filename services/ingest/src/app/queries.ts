import { errors } from '@kb/platform';
import type { Store, Where } from '@kb/store';
import type { CallContext } from '@kb/rpc';
import {
  CHUNKS,
  CHUNK_BATCHES,
  CONTENT,
  VERSIONS,
  chunkBatchId,
  chunkId,
  type ChunkBatchDoc,
  type ChunkBatchRef,
  type ChunkDoc,
  type ContentDoc,
  type VersionDoc,
} from '../projections/content.js';

const BY_CREATION = [{ field: 'seq', order: 'asc' as const }];

/**
 * A folder-scoped key sees content filed directly in its folders; an empty scope
 * sees none (spec 5.2). Deeper subfolders are the knowledge-base tree's to resolve.
 */
function scopeWhere(ctx: CallContext): Where {
  if (ctx.folder_scope === null) return {};
  if (ctx.folder_scope.length === 0)
    throw errors.forbidden('This credential (API key or OAuth grant) has no knowledge-base folders', { code: 'folder_scope' });
  return { parent_id: { $in: ctx.folder_scope } };
}

/** Reads of content items, versions and chunks (read models only). */
export function createContentQueries(store: Store) {
  /** A page of a version's chunks, reading only the batches it spans. */
  async function pageOfBatches(version: VersionDoc, refs: ChunkBatchRef[], page: { limit: number; offset: number }) {
    const end = page.offset + page.limit;
    const spanned: { ref: ChunkBatchRef; start: number }[] = [];
    let start = 0;
    for (const ref of refs) {
      if (start < end && start + ref.count > page.offset) spanned.push({ ref, start });
      start += ref.count;
    }
    const batches = await Promise.all(
      spanned.map(({ ref }) => store.get<ChunkBatchDoc>(CHUNK_BATCHES, chunkBatchId(version.id, ref.first_index))),
    );
    const chunks: ChunkDoc[] = [];
    for (const [i, batch] of batches.entries()) {
      if (!batch) continue;
      const ordered = [...batch.chunks].sort((a, b) => a.chunk_index - b.chunk_index);
      const from = Math.max(0, page.offset - spanned[i]!.start);
      for (const chunk of ordered.slice(from, from + page.limit - chunks.length)) {
        chunks.push({
          ...chunk,
          id: chunkId(version.id, chunk.chunk_index),
          content_id: batch.content_id,
          version_id: batch.version_id,
          org_id: batch.org_id,
        });
      }
    }
    return { chunks, total_count: start };
  }

  async function readItem(ctx: CallContext, contentId: string): Promise<ContentDoc> {
    const item = await store.get<ContentDoc>(CONTENT, contentId);
    if (!item || item.org_id !== ctx.org_id || item.deleted) throw errors.notFound('Content');
    return item;
  }

  return {
    readItem,

    async list(ctx: CallContext, page: { limit: number; offset: number }, filter: { category_id?: string; topic_id?: string } = {}) {
      const where: Where = { org_id: ctx.org_id, deleted: false, ...scopeWhere(ctx) };
      if (filter.category_id) where.category_id = filter.category_id;
      if (filter.topic_id) where.topic_id = filter.topic_id;
      const [items, total_count] = await Promise.all([
        store.find<ContentDoc>(CONTENT, { where, sort: BY_CREATION, ...page }),
        store.count(CONTENT, where),
      ]);
      return { items, total_count };
    },

    async detail(ctx: CallContext, contentId: string) {
      const item = await readItem(ctx, contentId);
      const versions = await store.find<VersionDoc>(VERSIONS, {
        where: { content_id: contentId },
        sort: [{ field: 'version_num', order: 'desc' }],
      });
      return { item, versions };
    },

    async chunks(ctx: CallContext, contentId: string, versionId: string | undefined, page: { limit: number; offset: number }) {
      const item = await readItem(ctx, contentId);
      const version = versionId ?? item.version_id;
      const owned = await store.get<VersionDoc>(VERSIONS, version);
      if (!owned || owned.content_id !== contentId) throw errors.notFound('Content version');
      if (owned.chunk_batches)
        return { content_id: contentId, version_id: version, ...(await pageOfBatches(owned, owned.chunk_batches, page)) };
      const where = { version_id: version };
      const [chunks, total_count] = await Promise.all([
        store.find<ChunkDoc>(CHUNKS, { where, sort: [{ field: 'chunk_index', order: 'asc' }], ...page }),
        store.count(CHUNKS, where),
      ]);
      return { content_id: contentId, version_id: version, chunks, total_count };
    },
  };
}

export type ContentQueries = ReturnType<typeof createContentQueries>;
