import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { FALLBACK_PAGES, registerForCheckpoints } from './checkpointer.js';
import { createSqliteStore } from './sqlite-store.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'kb-checkpoint-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('WAL checkpoints in a worker thread', () => {
  it('leave commits to the WAL, copy them into the database file off the writer, and keep every row', async () => {
    const path = join(dir, 'a.db');
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
    const registration = registerForCheckpoints(path, (p) => db.pragma(p));
    try {
      assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), FALLBACK_PAGES, 'the writer only checkpoints as a fallback');
      const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
      // About 2000 pages, twice what made the committing thread checkpoint before.
      for (let i = 0; i < 80; i++) db.transaction(() => insert.run('x'.repeat(100_000)))();
      await registration.checkpointNow();
      assert.ok(statSync(path).size > 8_000_000, `the rows are in the database file (${statSync(path).size} bytes)`);
      // Nothing left for a checkpoint: the worker's copied every frame of the WAL.
      const [result] = db.pragma('wal_checkpoint(PASSIVE)') as { busy: number; log: number; checkpointed: number }[];
      assert.equal(result!.log, result!.checkpointed);
    } finally {
      await registration.unregister();
      db.close();
    }
    assert.ok(!existsSync(`${path}-wal`), 'the last connection closed cleans the WAL up');
    const again = new Database(path, { readonly: true });
    assert.equal((again.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n, 80);
    again.close();
  });

  it('serve every store of the process, and a closed store leaves its data complete', async () => {
    const stores = [createSqliteStore({ path: join(dir, 's1.db') }), createSqliteStore({ path: join(dir, 's2.db') })];
    for (const [n, store] of stores.entries())
      for (let i = 0; i < 50; i++) await store.transaction((tx) => tx.put('docs', { id: `${n}-${i}`, text: 'y'.repeat(50_000) }));
    await Promise.all(stores.map((s) => s.close()));
    for (const n of [0, 1]) {
      assert.ok(!existsSync(join(dir, `s${n + 1}.db-wal`)), 'closed cleanly');
      const reopened = createSqliteStore({ path: join(dir, `s${n + 1}.db`) });
      assert.equal(await reopened.count('docs'), 50);
      assert.equal((await reopened.get<{ id: string; text: string }>('docs', `${n}-49`))?.text.length, 50_000);
      await reopened.close();
    }
  });
});

describe('the checkpointer and the process', () => {
  // In a fresh process: one store opened and written, then (CLOSE=1) closed or left open.
  const run = (close: boolean) => {
    const store = JSON.stringify(fileURLToPath(new URL('./sqlite-store.ts', import.meta.url)));
    const script = `
      const { createSqliteStore } = await import(${store});
      const s = await createSqliteStore({ path: ${JSON.stringify(join(dir, `process-${close}.db`))} });
      await s.transaction(async (tx) => { await tx.put('things', { id: 'a', n: 1 }); });
      ${close ? 'await s.close();' : ''}
      console.log('written');`;
    const file = join(dir, `process-${close}.mjs`);
    writeFileSync(file, script);
    const started = Date.now();
    const out = spawnSync(process.execPath, ['--conditions=source', '--import', 'tsx', file], { encoding: 'utf8', timeout: 10_000 });
    return { ...out, seconds: (Date.now() - started) / 1000 };
  };

  it('never holds the process open: a script that leaves its store open still exits', () => {
    const left = run(false);
    assert.equal(left.signal, null, `the process was still running after ${left.seconds} s`);
    assert.equal(left.status, 0, left.stderr);
    assert.match(left.stdout, /written/);
  });

  it('keeps the process alive while a close waits for it', () => {
    const closed = run(true);
    assert.equal(closed.status, 0, closed.stderr);
    assert.match(closed.stdout, /written/);
  });
});
