import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteStore } from './sqlite-store.js';
import { openSnapshot, snapshotSource } from './snapshot.js';

describe('sqlite snapshot reader', () => {
  it('sees what a running transaction started from, and keeps that state after it commits', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kb-snapshot-'));
    const store = createSqliteStore({ path: join(dir, 's.db') });
    try {
      await store.transaction((tx) => tx.put('rows', { id: 'r', v: 1 }));
      let during: unknown;
      const snapshot = await store.transaction(async (tx) => {
        await tx.put('rows', { id: 'r', v: 2 });
        assert.ok(tx.file);
        const s = openSnapshot(tx.file);
        during = s.get('rows', 'r');
        return s;
      });
      assert.deepEqual(during, { id: 'r', v: 1 });
      // Committed since its first read: the snapshot still sees the state it began with.
      assert.deepEqual(snapshot.get('rows', 'r'), { id: 'r', v: 1 });
      assert.equal(snapshot.getJson('rows', 'r'), JSON.stringify({ id: 'r', v: 1 }));
      assert.equal(snapshot.get('rows', 'missing'), undefined);
      assert.equal(snapshot.getJson('rows', 'missing'), undefined);
      snapshot.close();
      const next = openSnapshot(join(dir, 's.db'));
      assert.deepEqual(next.get('rows', 'r'), { id: 'r', v: 2 });
      next.close();
      assert.throws(() => openSnapshot(join(dir, 'absent.db')), /cannot open the store file .*absent\.db/);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a source begins one snapshot after another on one connection, each seeing the state of its own start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kb-snapshot-'));
    const store = createSqliteStore({ path: join(dir, 's.db') });
    const source = snapshotSource(join(dir, 's.db'));
    try {
      await store.transaction((tx) => tx.put('rows', { id: 'r', v: 1 }));
      const first = source.begin();
      assert.deepEqual(first.get('rows', 'r'), { id: 'r', v: 1 });
      assert.throws(() => source.begin(), /still open/);
      await store.transaction((tx) => tx.put('rows', { id: 'r', v: 2 }));
      assert.deepEqual(first.get('rows', 'r'), { id: 'r', v: 1 });
      first.close();
      assert.throws(() => first.get('rows', 'r'), /closed/);
      // Between snapshots the source holds no transaction: the next one sees the later write.
      await store.transaction((tx) => tx.put('rows', { id: 'r', v: 3 }));
      const second = source.begin();
      assert.deepEqual(second.get('rows', 'r'), { id: 'r', v: 3 });
      second.close();
    } finally {
      source.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
