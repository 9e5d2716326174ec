import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { DuplicateKeyError } from '../port.js';
import { createSqliteStore } from './sqlite-store.js';

/** The documents table as stores created before 2026-11 have it. */
function createOldStore(path: string): void {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec(`
    CREATE TABLE documents (
      collection TEXT NOT NULL,
      id         TEXT NOT NULL,
      data       TEXT NOT NULL,
      PRIMARY KEY (collection, id)
    ) WITHOUT ROWID;
    CREATE INDEX idx_items_org_id ON documents(json_extract(data, '$.org_id')) WHERE collection = 'items';
  `);
  const put = db.prepare('INSERT INTO documents (collection, id, data) VALUES (?, ?, ?)');
  for (let i = 0; i < 50; i++)
    put.run('items', `item-${String(i).padStart(2, '0')}`, JSON.stringify({ id: `item-${i}`, org_id: `org-${i % 3}`, n: i }));
  put.run('other', 'x', JSON.stringify({ id: 'x', org_id: 'org-0' }));
  db.close();
}

const tableSql = (path: string) => {
  const db = new Database(path, { readonly: true });
  try {
    return {
      table: db.prepare<[], { sql: string }>("SELECT sql FROM sqlite_master WHERE name = 'documents'").get()!.sql,
      indexes: db
        .prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'documents' AND sql IS NOT NULL")
        .all()
        .map((r) => r.name),
    };
  } finally {
    db.close();
  }
};

describe('sqlite store schema', () => {
  it('moves the documents of a store created with the WITHOUT ROWID table to a rowid table, keeping every document and field index', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kb-store-schema-'));
    const path = join(dir, 'store.db');
    try {
      createOldStore(path);
      assert.match(tableSql(path).table, /WITHOUT ROWID/);

      const store = createSqliteStore({ path });
      try {
        const after = tableSql(path);
        assert.doesNotMatch(after.table, /WITHOUT ROWID/);
        assert.deepEqual(after.indexes, ['idx_items_org_id']);
        assert.equal(await store.count('items'), 50);
        assert.deepEqual(await store.get('items', 'item-07'), { id: 'item-7', org_id: 'org-1', n: 7 });
        const org2 = await store.find<{ id: string; n: number }>('items', {
          where: { org_id: 'org-2' },
          sort: [{ field: 'n', order: 'desc' }],
        });
        assert.deepEqual(
          org2.map((d) => d.n),
          [47, 44, 41, 38, 35, 32, 29, 26, 23, 20, 17, 14, 11, 8, 5, 2],
        );
        // Writes behave as before: put replaces, insert of an existing id is a DuplicateKeyError.
        await store.transaction(async (tx) => {
          await tx.put('items', { id: 'item-07', org_id: 'org-1', n: 700 });
          await assert.rejects(tx.insert('other', { id: 'x' }), DuplicateKeyError);
        });
        assert.deepEqual(await store.get('items', 'item-07'), { id: 'item-07', org_id: 'org-1', n: 700 });
      } finally {
        await store.close();
      }

      // Opening it again finds nothing to move.
      const again = createSqliteStore({ path });
      assert.equal(await again.count('items'), 50);
      await again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('makes a new file with the page size asked for; a file that exists keeps its own and still works', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kb-store-page-'));
    const pageSizeOf = (path: string) => {
      const db = new Database(path, { readonly: true });
      try {
        return db.pragma('page_size', { simple: true });
      } finally {
        db.close();
      }
    };
    try {
      const fresh = join(dir, 'fresh.db');
      const store = createSqliteStore({ path: fresh, pageSize: 16384 });
      await store.transaction((tx) => tx.put('items', { id: 'a', n: 1 }));
      await store.close();
      assert.equal(pageSizeOf(fresh), 16384);

      // Made with SQLite's default; asking for another size later changes nothing and loses nothing.
      const old = join(dir, 'old.db');
      const first = createSqliteStore({ path: old });
      await first.transaction((tx) => tx.put('items', { id: 'a', n: 1 }));
      await first.close();
      const reopened = createSqliteStore({ path: old, pageSize: 16384 });
      await reopened.transaction((tx) => tx.put('items', { id: 'b', n: 2 }));
      assert.deepEqual(await reopened.get('items', 'a'), { id: 'a', n: 1 });
      assert.equal(await reopened.count('items'), 2);
      await reopened.close();
      assert.equal(pageSizeOf(old), 4096);

      // A size SQLite would silently ignore is refused before any file is made.
      for (const pageSize of [1000, 256, 131072, 16384.5]) {
        const path = join(dir, `bad-${pageSize}.db`);
        assert.throws(() => createSqliteStore({ path, pageSize }), /power of two from 512 to 65536/);
        assert.equal(existsSync(path), false);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
