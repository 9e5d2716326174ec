import type { Db } from 'mongodb';

/** Collection names of one service's database. Document collections get a prefix so no name can clash with these. */
export const EVENTS = 'events';
export const COUNTERS = '_counters';
export const INBOX = '_inbox';
export const POSITION_COUNTER = 'events.position';
/** Named, so a duplicate-key error can tell which constraint it broke. */
export const STREAM_VERSION_INDEX = 'stream_version';

const COLLECTION_RE = /^[A-Za-z0-9_.-]+$/;

export function docCollectionName(collection: string): string {
  if (!COLLECTION_RE.test(collection)) throw new Error(`Invalid collection name: ${collection}`);
  return `doc_${collection}`;
}

/**
 * Idempotent setup at start. The counter document is created here, outside any
 * transaction, so the first concurrent appends only ever increment it instead of
 * racing to insert it.
 */
export async function ensureSchema(db: Db): Promise<void> {
  const events = db.collection(EVENTS);
  await events.createIndex({ stream_id: 1, version: 1 }, { unique: true, name: STREAM_VERSION_INDEX });
  await events.createIndex({ position: 1 }, { unique: true, name: 'position' });
  await db
    .collection<{ _id: string; value: number }>(COUNTERS)
    .updateOne({ _id: POSITION_COUNTER }, { $setOnInsert: { value: 0 } }, { upsert: true });
}
