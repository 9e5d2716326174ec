import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { systemClock, type Clock } from '@kb/platform';
import { NestedTransactionError, type DocLike, type Query, type Store, type StoreTransaction } from '../port.js';
import { transactionScope } from '../transaction-scope.js';
import { createMutex } from './mutex.js';
import { migrate } from './schema.js';
import { registerForCheckpoints } from './checkpointer.js';
import { documentOps } from './documents.js';
import { eventOps } from './events.js';

export interface SqliteStoreOptions {
  /** Database file; created with its folder when missing. */
  path: string;
  clock?: Clock;
  /**
   * Page size in bytes of a file this creates: a power of two from 512 to
   * 65536. A file that exists keeps the size it was made with (only VACUUM,
   * outside WAL mode, changes it). Default: SQLite's, 4096. A store of large
   * documents rewritten often (analytics' roll-up rows) writes fewer WAL frames
   * per commit with larger pages; one of small documents in small commits
   * writes more bytes per commit.
   */
  pageSize?: number;
}

/** Throws unless `size` is a page size SQLite accepts (it ignores any other silently). */
function checkPageSize(size: number): void {
  if (!Number.isInteger(size) || size < 512 || size > 65536 || (size & (size - 1)) !== 0)
    throw new Error(`pageSize must be a power of two from 512 to 65536, not ${size}`);
}

function open(path: string, pageSize?: number): Database.Database {
  if (pageSize !== undefined) checkPageSize(pageSize);
  mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  // Takes effect only on a file that has no table yet, and must come before WAL mode, which fixes the size.
  if (pageSize !== undefined) db.pragma(`page_size = ${pageSize}`);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  return db;
}

/**
 * SQLite Store. WAL checkpoints run in a worker thread (checkpointer.ts). One writer connection whose transactions are serialised by an
 * async mutex (a transaction spans awaits, and better-sqlite3 has one connection
 * state), plus a reader connection for reads outside transactions: with WAL it
 * sees only committed data, so a request never reads another's uncommitted write.
 */
export function createSqliteStore(options: SqliteStoreOptions): Store {
  const clock = options.clock ?? systemClock;
  const writer = open(options.path, options.pageSize);
  migrate(writer);
  const checkpoints = registerForCheckpoints(options.path, (pragma) => writer.pragma(pragma));
  const reader = open(options.path);
  reader.pragma('query_only = ON');

  const now = () => clock.now().toISOString();
  const w = { docs: documentOps(writer), events: eventOps(writer, now) };
  const r = { docs: documentOps(reader), events: eventOps(reader, now) };
  const markStmt = writer.prepare('INSERT OR IGNORE INTO inbox (consumer, event_id) VALUES (?, ?)');
  const mutex = createMutex();
  const inTransaction = transactionScope();
  let closed = false;

  const tx: StoreTransaction = {
    get: async <T extends DocLike>(c: string, id: string) => w.docs.get<T>(c, id),
    find: async <T extends DocLike>(c: string, q?: Query) => w.docs.find<T>(c, q),
    count: async (c, where) => w.docs.count(c, where),
    insert: async (c, doc) => w.docs.insert(c, doc),
    put: async (c, doc) => w.docs.put(c, doc),
    putJson: async (c, id, json) => w.docs.putJson(c, id, json),
    file: options.path,
    delete: async (c, id) => w.docs.delete(c, id),
    readStream: async (id) => w.events.readStream(id),
    append: async (id, expected, events) => w.events.append(id, expected, events),
    markProcessed: async (consumer, eventId) => markStmt.run(consumer, eventId).changes > 0,
  };

  return {
    transaction<T>(fn: (tx: StoreTransaction) => Promise<T>): Promise<T> {
      if (inTransaction.active()) return Promise.reject(new NestedTransactionError());
      return mutex.run(() =>
        inTransaction.run(async () => {
          if (closed) throw new Error('store is closed');
          writer.exec('BEGIN IMMEDIATE');
          try {
            const result = await fn(tx);
            writer.exec('COMMIT');
            return result;
          } catch (err) {
            if (writer.inTransaction) writer.exec('ROLLBACK');
            throw err;
          }
        }),
      );
    },
    get: async <T extends DocLike>(c: string, id: string) => r.docs.get<T>(c, id),
    find: async <T extends DocLike>(c: string, q?: Query) => r.docs.find<T>(c, q),
    count: async (c, where) => r.docs.count(c, where),
    readStream: async (id) => r.events.readStream(id),
    readAll: async (after, limit) => r.events.readAll(after, limit),
    ensureIndex: async (c, fields) => mutex.run(async () => w.docs.ensureIndex(c, fields)),
    dropCollections: async (cs) => mutex.run(async () => w.docs.drop(cs)),
    async close() {
      await mutex.run(async () => {
        if (closed) return;
        closed = true;
        await checkpoints.unregister();
        reader.close();
        writer.close();
      });
    },
  };
}
