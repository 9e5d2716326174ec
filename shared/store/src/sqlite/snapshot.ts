import Database from 'better-sqlite3';
import type { DocLike } from '../port.js';

/** Documents as one read transaction sees them; close ends it. */
export interface SnapshotReader {
  get<T extends DocLike>(collection: string, id: string): T | undefined;
  close(): void;
}

/**
 * A read-only connection to a store's file, for another thread, holding one
 * read transaction: every get sees the same committed state (WAL), the one
 * current at its first read, however the writer goes on. Opened with a
 * transaction's `file` while that transaction runs, it sees what the
 * transaction started from (see StoreTransaction.file).
 */
export function openSnapshot(file: string): SnapshotReader {
  let db: Database.Database;
  try {
    db = new Database(file, { fileMustExist: true });
  } catch (err) {
    throw new Error(`cannot open the store file ${file}: ${(err as Error).message}`, { cause: err });
  }
  try {
    db.pragma('busy_timeout = 5000');
    db.pragma('query_only = ON');
    const getStmt = db.prepare<[string, string], { data: string }>('SELECT data FROM documents WHERE collection = ? AND id = ?');
    db.exec('BEGIN');
    return {
      get<T extends DocLike>(collection: string, id: string): T | undefined {
        const row = getStmt.get(collection, id);
        return row ? (JSON.parse(row.data) as T) : undefined;
      },
      close() {
        if (db.inTransaction) db.exec('COMMIT');
        db.close();
      },
    };
  } catch (err) {
    db.close();
    throw err;
  }
}
