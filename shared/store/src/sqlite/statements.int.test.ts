import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { statementCache } from './statements.js';

describe('sqlite statement cache', () => {
  it('reuses a statement per SQL text, evicts the least recently used, and follows schema changes', () => {
    const db = new Database(':memory:');
    try {
      db.exec('CREATE TABLE t (a INTEGER)');
      let prepares = 0;
      const counting = new Proxy(db, {
        get: (target, key) => (key === 'prepare' ? (sql: string) => (prepares++, target.prepare(sql)) : Reflect.get(target, key)),
      });
      const prepared = statementCache(counting, 2);
      const q1 = 'SELECT count(*) AS n FROM t';
      const q2 = 'SELECT a FROM t ORDER BY a';
      const q3 = 'SELECT a FROM t WHERE a = ?';
      assert.equal(prepared(q1), prepared(q1));
      assert.equal(prepares, 1);
      prepared(q2);
      prepared(q1); // q1 used last: q2 is now the least recently used
      prepared(q3); // evicts q2
      assert.equal(prepares, 3);
      prepared(q1);
      assert.equal(prepares, 3, 'q1 stayed');
      prepared(q2);
      assert.equal(prepares, 4, 'q2 was evicted');
      db.exec('INSERT INTO t VALUES (1), (2)');
      db.exec('CREATE INDEX t_a ON t (a)');
      assert.deepEqual(prepared(q2).all(), [{ a: 1 }, { a: 2 }], 'a cached statement still runs after a schema change');
    } finally {
      db.close();
    }
  });
});
