import { afterAll, describe, it, vi } from 'vitest';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as StoreSqlite from '@kb/store/sqlite';

// The real checkpointer, watched: which files it took over and which it let go.
const seen = vi.hoisted(() => ({ registered: [] as string[], unregistered: [] as string[] }));
vi.mock('@kb/store/sqlite', async (importOriginal) => {
  const real = await importOriginal<typeof StoreSqlite>();
  return {
    ...real,
    registerForCheckpoints: (path: string, setPragma: (pragma: string) => void) => {
      seen.registered.push(path);
      const registration = real.registerForCheckpoints(path, setPragma);
      return {
        ...registration,
        unregister: async () => {
          seen.unregistered.push(path);
          await registration.unregister();
        },
      };
    },
  };
});

const { createSqliteSearchIndex } = await import('./sqlite-index.js');

const dir = mkdtempSync(join(tmpdir(), 'kb-search-checkpoints-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the SQLite search index and WAL checkpoints', () => {
  it('leaves its checkpoints to the worker thread, and a closed index keeps every chunk', async () => {
    const path = join(dir, 'search.db');
    const index = createSqliteSearchIndex({ path });
    assert.deepEqual(seen.registered, [path], 'the index file is handed to the checkpointer when opened');
    const text = (i: number) => `Chunk ${i} about invoices and delivery terms. `.repeat(200);
    for (let n = 0; n < 20; n++) {
      await index.indexVersion({
        org_id: 'org-1',
        content_id: `c-${n}`,
        version_id: `v-${n}`,
        title: `Document ${n}`,
        category_id: null,
        topic_id: null,
        tags: [],
        folder_path: ['root'],
        chunks: Array.from({ length: 50 }, (_, i) => ({ chunk_index: i, text: text(i) })),
      });
    }
    await index.close();
    assert.deepEqual(seen.unregistered, [path], 'closing the index lets the checkpointer go first');
    assert.ok(!existsSync(`${path}-wal`), 'the last connection closed cleans the WAL up');

    const reopened = createSqliteSearchIndex({ path });
    try {
      assert.equal(await reopened.countChunks('org-1'), 1000);
      const { hits } = await reopened.search({ org_id: 'org-1', query: 'invoices', limit: 5, filters: { folder_scope: null } });
      assert.equal(hits.length, 5);
    } finally {
      await reopened.close();
    }
  });

  it('checkpoints nothing for an index in memory', async () => {
    const before = seen.registered.length;
    const index = createSqliteSearchIndex({ path: ':memory:' });
    await index.close();
    assert.equal(seen.registered.length, before);
  });
});
