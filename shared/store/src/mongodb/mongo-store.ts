import { transactionScope } from '../transaction-scope.js';
import { MongoClient, type ClientSession, type TransactionOptions } from 'mongodb';
import { systemClock, type Clock, type Logger } from '@kb/platform';
import { NestedTransactionError, type DocLike, type Query, type Store, type StoreTransaction } from '../port.js';
import { documentOps } from './documents.js';
import { eventOps } from './events.js';
import { inboxOps } from './inbox.js';
import { ensureSchema } from './schema.js';
import { createSerialQueue } from './serial.js';
import { docOfJson } from '../json-doc.js';

export interface MongoStoreOptions {
  /** A replica set (transactions need one), e.g. mongodb://mongo:27017/?replicaSet=rs0 */
  url: string;
  /** One database per service. */
  database: string;
  clock?: Clock;
  logger?: Logger;
}

/**
 * Snapshot reads make every read in a transaction see one point in time, and
 * a write to a document another transaction changed since then is a write
 * conflict (retried by withTransaction). This is snapshot isolation, not the
 * serial order SQLite gives: two transactions that read the same documents and
 * write different ones both commit, so an invariant across documents (e.g. a
 * unique name) needs one document or stream that both must write. Majority
 * commit means an acknowledged write survives a failover.
 */
const TRANSACTION_OPTIONS: TransactionOptions = {
  readConcern: { level: 'snapshot' },
  writeConcern: { w: 'majority' },
  readPreference: 'primary',
};

/**
 * MongoDB Store: events, documents and inbox in one database, written together
 * in multi-document transactions. Reads outside a transaction use majority read
 * concern, so they see only committed data that cannot be rolled back (the relay
 * never publishes an event a failover would undo).
 */
export async function createMongoStore(options: MongoStoreOptions): Promise<Store> {
  const clock = options.clock ?? systemClock;
  const client = new MongoClient(options.url, {
    readConcern: { level: 'majority' },
    writeConcern: { w: 'majority' },
    // JSON semantics, as in the SQLite adapter: an undefined field is absent, not null.
    ignoreUndefined: true,
  });
  const db = client.db(options.database);
  try {
    await client.connect();
    await ensureSchema(db);
  } catch (err) {
    await client.close();
    throw err;
  }
  options.logger?.info({ database: options.database }, 'mongodb store ready');

  const now = () => clock.now().toISOString();
  const docs = documentOps(db);
  const events = eventOps(db, now);
  const inbox = inboxOps(db, now);
  const inTransaction = transactionScope();

  /** A StoreTransaction bound to one attempt of a session's transaction. */
  function transactionFor(session: ClientSession): StoreTransaction {
    const serial = createSerialQueue();
    return {
      get: <T extends DocLike>(c: string, id: string) => serial(() => docs.get<T>(c, id, session)),
      find: <T extends DocLike>(c: string, q?: Query) => serial(() => docs.find<T>(c, q, session)),
      count: (c, where) => serial(() => docs.count(c, where, session)),
      insert: (c, doc) => serial(() => docs.insert(c, doc, session)),
      put: (c, doc) => serial(() => docs.put(c, doc, session)),
      putJson: (c, id, json) => serial(() => docs.put(c, docOfJson(id, json), session)),
      delete: (c, id) => serial(() => docs.delete(c, id, session)),
      readStream: (streamId) => serial(() => events.readStream(streamId, session)),
      append: (streamId, expected, newEvents) => serial(() => events.append(streamId, expected, newEvents, session)),
      markProcessed: (consumer, eventId) => serial(() => inbox.markProcessed(consumer, eventId, session)),
    };
  }

  return {
    async transaction<T>(fn: (tx: StoreTransaction) => Promise<T>): Promise<T> {
      // A nested call would be a second, independent transaction: it would commit
      // even if the outer one rolled back, and a write to a document the outer one
      // wrote would conflict and retry until withTransaction's 120 s deadline.
      if (inTransaction.active()) throw new NestedTransactionError();
      return inTransaction.run(() =>
        client.withSession((session) => {
          let attempt = 0;
          // withTransaction re-runs fn on TransientTransactionError (write
          // conflicts included): that is why the port forbids side effects in fn.
          return session.withTransaction(async () => {
            attempt += 1;
            if (attempt > 1) options.logger?.debug({ attempt }, 'mongodb transaction retried after a transient error');
            return fn(transactionFor(session));
          }, TRANSACTION_OPTIONS);
        }),
      );
    },
    get: <T extends DocLike>(c: string, id: string) => docs.get<T>(c, id),
    find: <T extends DocLike>(c: string, q?: Query) => docs.find<T>(c, q),
    count: (c, where) => docs.count(c, where),
    readStream: (streamId) => events.readStream(streamId),
    readAll: (after, limit) => events.readAll(after, limit),
    ensureIndex: (c, fields) => docs.ensureIndex(c, fields),
    dropCollections: (collections) => docs.drop(collections),
    close: () => client.close(),
  };
}
