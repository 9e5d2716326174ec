import type { ClientSession, Collection, Db, Document } from 'mongodb';
import { DuplicateKeyError, type DocLike, type Query, type Where } from '../port.js';
import { mongoField, toMongoFilter, toMongoSort } from './filter.js';
import { docCollectionName } from './schema.js';

export interface StoredDoc extends Document {
  _id: string;
}

/** Stored as the document plus `_id` = id; `_id` never leaves this module. */
const toStored = (doc: DocLike): StoredDoc => ({ ...doc, _id: doc.id });

function fromStored<T extends DocLike>(stored: StoredDoc): T {
  const { _id, ...doc } = stored;
  return { id: _id, ...doc } as unknown as T;
}

/**
 * Insert unless a document with that _id exists; returns whether it inserted.
 * An upsert with $setOnInsert instead of insertOne: a duplicate-key error inside
 * a transaction aborts it on the server, and the caller could not catch it and
 * carry on (the commit would fail and withTransaction would retry forever). The
 * upsert answers "exists" without failing; a concurrent insert of the same id is
 * a write conflict, which withTransaction retries.
 */
export async function insertIfAbsent(
  collection: Collection<StoredDoc>,
  id: string,
  fields: Document,
  session: ClientSession,
): Promise<boolean> {
  const result = await collection.updateOne({ _id: id }, { $setOnInsert: fields }, { upsert: true, session });
  return result.upsertedCount === 1;
}

/** Document operations; with a session they run inside its transaction, without one they read committed data. */
export function documentOps(db: Db) {
  const coll = (collection: string) => db.collection<StoredDoc>(docCollectionName(collection));

  return {
    async get<T extends DocLike>(collection: string, id: string, session?: ClientSession): Promise<T | undefined> {
      const stored = await coll(collection).findOne({ _id: id }, { session });
      return stored ? fromStored<T>(stored) : undefined;
    },
    async find<T extends DocLike>(collection: string, query: Query = {}, session?: ClientSession): Promise<T[]> {
      // Mongo reads limit 0 as "no limit"; the port means none.
      if (query.limit === 0) return [];
      const cursor = coll(collection).find(toMongoFilter(query.where), {
        session,
        sort: toMongoSort(query.sort),
        ...(query.offset ? { skip: query.offset } : {}),
        ...(query.limit !== undefined && query.limit > 0 ? { limit: query.limit } : {}),
      });
      return (await cursor.toArray()).map((d) => fromStored<T>(d));
    },
    count(collection: string, where?: Where, session?: ClientSession): Promise<number> {
      return coll(collection).countDocuments(toMongoFilter(where), { session });
    },
    async insert(collection: string, doc: DocLike, session: ClientSession): Promise<void> {
      if (!(await insertIfAbsent(coll(collection), doc.id, doc, session))) {
        throw new DuplicateKeyError(collection, doc.id);
      }
    },
    async put(collection: string, doc: DocLike, session: ClientSession): Promise<void> {
      await coll(collection).replaceOne({ _id: doc.id }, toStored(doc), { upsert: true, session });
    },
    async delete(collection: string, id: string, session: ClientSession): Promise<boolean> {
      return (await coll(collection).deleteOne({ _id: id }, { session })).deletedCount > 0;
    },
    /** Removes documents but keeps the collection and its indexes, so a rebuild needs no re-declaration. */
    async drop(collections: string[]): Promise<void> {
      for (const c of collections) await coll(c).deleteMany({});
    },
    async ensureIndex(collection: string, fields: string[]): Promise<void> {
      const keys = Object.fromEntries(fields.map((f) => [mongoField(f), 1 as const]));
      // `id` alone is `_id`, indexed already; asking again under another name is an error.
      if (Object.keys(keys).join() === '_id') return;
      await coll(collection).createIndex(keys);
    },
  };
}

export type DocumentOps = ReturnType<typeof documentOps>;
