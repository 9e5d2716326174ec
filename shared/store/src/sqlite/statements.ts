import type Database from 'better-sqlite3';

/**
 * Prepared statements by SQL text, the most recently used `size` of them. Queries
 * built per call (document finds and counts: their filters, sort and `$in`
 * lengths vary) were compiled by SQLite on every call, which cost more than
 * running most of them; the variety is small, so nearly every call now reuses a
 * statement. SQLite re-prepares a cached statement itself when the schema
 * changed (a new index, say).
 */
export function statementCache(db: Database.Database, size = 256) {
  const cache = new Map<string, Database.Statement>();
  return (sql: string): Database.Statement => {
    let stmt = cache.get(sql);
    if (stmt) {
      // Most recently used last, so the first entry is the one to evict.
      cache.delete(sql);
    } else {
      stmt = db.prepare(sql);
      if (cache.size >= size) cache.delete(cache.keys().next().value!);
    }
    cache.set(sql, stmt);
    return stmt;
  };
}
