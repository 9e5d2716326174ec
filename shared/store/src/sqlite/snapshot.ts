import Database from 'better-sqlite3';
import type { DocLike } from '../port.js';

/** Documents as one read transaction sees them; close ends it. */
export interface SnapshotReader {
  get<T extends DocLike>(collection: string, id: string): T | undefined;
  /** A document's stored JSON text, unparsed (to compare, or to skip the parse when only its existence matters). */
  getJson(collection: string, id: string): string | undefined;
  close(): void;
}

/** A read-only connection to a store's file that begins snapshots one after another (each ended before the next). */
export interface SnapshotSource {
  readonly file: string;
  /** Begins a read transaction: every read of it sees the state current at its first read. */
  begin(): SnapshotReader;
  close(): void;
}

/**
 * A read-only connection to a store's file, for another thread, kept for many
 * snapshots (opening one per snapshot re-reads the schema each time). Between
 * snapshots it holds no transaction, so it never holds back a checkpoint.
 */
export function snapshotSource(file: string): SnapshotSource {
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
    return {
      file,
      begin() {
        if (db.inTransaction) throw new Error('a snapshot of this source is still open');
        db.exec('BEGIN');
        let open = true;
        const json = (collection: string, id: string) => {
          if (!open) throw new Error('the snapshot is closed');
          return getStmt.get(collection, id)?.data;
        };
        return {
          get<T extends DocLike>(collection: string, id: string): T | undefined {
            const text = json(collection, id);
            return text === undefined ? undefined : (JSON.parse(text) as T);
          },
          getJson: json,
          close() {
            if (!open) return;
            open = false;
            if (db.inTransaction) db.exec('COMMIT');
          },
        };
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

/**
 * One snapshot on a connection of its own: every get sees the same committed
 * state (WAL), the one current at its first read, however the writer goes on.
 * Opened with a transaction's `file` while that transaction runs, it sees what
 * the transaction started from (see StoreTransaction.file). Close ends the
 * snapshot and the connection.
 */
export function openSnapshot(file: string): SnapshotReader {
  const source = snapshotSource(file);
  try {
    const reader = source.begin();
    return {
      ...reader,
      close() {
        reader.close();
        source.close();
      },
    };
  } catch (err) {
    source.close();
    throw err;
  }
}
