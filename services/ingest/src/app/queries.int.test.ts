import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallContext } from '@kb/rpc';
import type { Store } from '@kb/store';
import type { Stored } from '@kb/eventsourcing';
import { createSqliteStore } from '@kb/store/sqlite';
import { CHUNKS, CHUNK_BATCHES, VERSIONS, contentProjection, type VersionDoc } from '../projections/content.js';
import { createContentQueries } from './queries.js';

let dir: string;
let store: Store;
let position = 0;
const org = randomUUID();
const ctx = { org_id: org, folder_scope: null } as unknown as CallContext;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'kb-chunk-pages-'));
  store = createSqliteStore({ path: join(dir, 'ingest.db') });
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const apply = (type: string, data: Record<string, unknown>) =>
  store.transaction((tx) =>
    contentProjection.apply(tx, {
      id: randomUUID(),
      type,
      schema: 1,
      data,
      metadata: { org_id: org },
      stream_id: `content-${String(data.content_id)}`,
      version: 1,
      position: ++position,
      recorded_at: new Date().toISOString(),
    } as Stored),
  );

const chunk = (i: number) => ({ chunk_index: i, text: `Chunk number ${i}.`, heading_path: ['Part'], ...(i % 2 === 0 && { page: i + 1 }) });

/** A text item whose ten chunks arrive in three batches (out of order): 0-3, 7-9, 4-6. */
async function itemWithChunks(options: { before_batches?: boolean } = {}) {
  const ids = { content_id: randomUUID(), version_id: randomUUID(), org_id: org };
  await apply('content.created', {
    ...ids,
    version_num: 1,
    type: 'raw',
    title: 'Paged',
    source: { kind: 'raw', size_bytes: 10, sha256: 'a'.repeat(64) },
    parent_id: null,
    tags: [],
    at: new Date().toISOString(),
  });
  if (options.before_batches) {
    // A version as the projection wrote it before chunk batches.
    await store.transaction(async (tx) => {
      const { chunk_batches: _, ...old } = (await tx.get<VersionDoc>(VERSIONS, ids.version_id))!;
      await tx.put(VERSIONS, old);
    });
  }
  for (const range of [
    [0, 1, 2, 3],
    [7, 8, 9],
    [4, 5, 6],
  ]) {
    await apply('content.chunks_added', { ...ids, chunks: range.map(chunk), at: new Date().toISOString() });
  }
  return ids;
}

describe("a version's chunks, paged", () => {
  it('are kept as one document per batch and paged across batches as one list', async () => {
    const ids = await itemWithChunks();
    assert.equal(await store.count(CHUNK_BATCHES, { version_id: ids.version_id }), 3);
    assert.equal(await store.count(CHUNKS, { version_id: ids.version_id }), 0);
    const queries = createContentQueries(store);
    const page = (offset: number, limit: number) => queries.chunks(ctx, ids.content_id, undefined, { offset, limit });

    const all = await page(0, 100);
    assert.equal(all.total_count, 10);
    assert.deepEqual(
      all.chunks.map((c) => c.chunk_index),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    );
    assert.deepEqual(all.chunks[2], {
      ...chunk(2),
      id: `${ids.version_id}:000002`,
      content_id: ids.content_id,
      version_id: ids.version_id,
      org_id: org,
    });
    for (const [offset, limit, expected] of [
      [2, 3, [2, 3, 4]],
      [3, 5, [3, 4, 5, 6, 7]],
      [4, 3, [4, 5, 6]],
      [9, 5, [9]],
      [10, 5, []],
      [0, 1, [0]],
    ] as const) {
      const got = await page(offset, limit);
      assert.deepEqual(
        got.chunks.map((c) => c.chunk_index),
        expected,
        `offset ${offset}, limit ${limit}`,
      );
      assert.equal(got.total_count, 10);
    }
  });

  it('of a version stored one document per chunk (before batches) read the same', async () => {
    const batched = await itemWithChunks();
    const legacy = await itemWithChunks({ before_batches: true });
    assert.equal(await store.count(CHUNKS, { version_id: legacy.version_id }), 10);
    assert.equal(await store.count(CHUNK_BATCHES, { version_id: legacy.version_id }), 0);
    const queries = createContentQueries(store);
    const strip = (r: Awaited<ReturnType<typeof queries.chunks>>) => ({
      total_count: r.total_count,
      chunks: r.chunks.map(({ id: _id, content_id: _c, version_id: _v, ...c }) => c),
    });
    for (const [offset, limit] of [
      [0, 100],
      [2, 3],
      [9, 5],
    ] as const) {
      assert.deepEqual(
        strip(await queries.chunks(ctx, legacy.content_id, undefined, { offset, limit })),
        strip(await queries.chunks(ctx, batched.content_id, undefined, { offset, limit })),
      );
    }
  });

  it('are the same batch again when an event is replayed', async () => {
    const ids = await itemWithChunks();
    await apply('content.chunks_added', { ...ids, chunks: [7, 8, 9].map(chunk), at: new Date().toISOString() });
    assert.equal(await store.count(CHUNK_BATCHES, { version_id: ids.version_id }), 3);
    const all = await createContentQueries(store).chunks(ctx, ids.content_id, undefined, { offset: 0, limit: 100 });
    assert.equal(all.total_count, 10);
    assert.equal(all.chunks.length, 10);
  });
});
