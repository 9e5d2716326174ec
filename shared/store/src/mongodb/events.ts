import type { ClientSession, Db } from 'mongodb';
import { ConcurrencyError } from '@kb/platform';
import type { EventMetadata, NewEvent, StoredEvent } from '../port.js';
import { isDuplicateKey } from './errors.js';
import { COUNTERS, EVENTS, POSITION_COUNTER, STREAM_VERSION_INDEX } from './schema.js';

interface EventDoc {
  _id: string;
  stream_id: string;
  version: number;
  position: number;
  type: string;
  schema: number;
  data: Record<string, unknown>;
  metadata: EventMetadata;
  recorded_at: string;
}

const toStored = ({ _id, ...rest }: EventDoc): StoredEvent => ({ id: _id, ...rest });

const toDoc = ({ id, ...rest }: StoredEvent): EventDoc => ({ _id: id, ...rest });

/** Event operations; with a session they run inside its transaction, without one they read committed data. */
export function eventOps(db: Db, now: () => string) {
  const events = db.collection<EventDoc>(EVENTS);
  const counters = db.collection<{ _id: string; value: number }>(COUNTERS);

  async function currentVersion(streamId: string, session?: ClientSession): Promise<number> {
    const last = await events.findOne({ stream_id: streamId }, { sort: { version: -1 }, projection: { version: 1 }, session });
    return last?.version ?? 0;
  }

  /**
   * Reserves `count` global positions, returning the first. The counter is
   * incremented inside the caller's transaction, so two transactions that both
   * append write the same document: the second gets a write conflict and is
   * retried by withTransaction after the first commits (or aborts, which undoes
   * its increment). Positions are therefore gap-free and assigned in commit
   * order, and the outbox relay, which reads position > checkpoint, can never
   * pass a position whose event commits later. A timestamp or ObjectId would be
   * taken before commit and could let a late committer slip behind the relay.
   */
  async function reservePositions(count: number, session: ClientSession): Promise<number> {
    const counter = await counters.findOneAndUpdate(
      { _id: POSITION_COUNTER },
      { $inc: { value: count } },
      { upsert: true, returnDocument: 'after', session },
    );
    if (!counter) throw new Error('position counter upsert returned no document');
    return counter.value - count + 1;
  }

  return {
    async readStream(streamId: string, session?: ClientSession): Promise<StoredEvent[]> {
      const docs = await events.find({ stream_id: streamId }, { sort: { version: 1 }, session }).toArray();
      return docs.map(toStored);
    },
    async readAll(afterPosition: number, limit: number): Promise<StoredEvent[]> {
      // Mongo reads limit 0 as "no limit".
      if (limit <= 0) return [];
      const docs = await events.find({ position: { $gt: afterPosition } }, { sort: { position: 1 }, limit }).toArray();
      return docs.map(toStored);
    },
    async append(streamId: string, expectedVersion: number, newEvents: NewEvent[], session: ClientSession): Promise<StoredEvent[]> {
      const actual = await currentVersion(streamId, session);
      if (actual !== expectedVersion) throw new ConcurrencyError(streamId, expectedVersion, actual);
      if (newEvents.length === 0) return [];

      const first = await reservePositions(newEvents.length, session);
      const recordedAt = now();
      const stored = newEvents.map((e, i): StoredEvent => ({
        id: e.id,
        type: e.type,
        schema: e.schema,
        data: e.data,
        metadata: e.metadata,
        stream_id: streamId,
        version: expectedVersion + i + 1,
        position: first + i,
        recorded_at: recordedAt,
      }));
      try {
        await events.insertMany(stored.map(toDoc), { session, ordered: true });
      } catch (err) {
        // A snapshot transaction normally sees a concurrent append as a write
        // conflict (retried); a duplicate (stream_id, version) still means we lost.
        // The transaction is aborted by now, so the actual version is read outside it.
        if (isDuplicateKey(err, STREAM_VERSION_INDEX)) {
          throw new ConcurrencyError(streamId, expectedVersion, await currentVersion(streamId));
        }
        throw err;
      }
      return stored;
    },
  };
}

export type EventOps = ReturnType<typeof eventOps>;
