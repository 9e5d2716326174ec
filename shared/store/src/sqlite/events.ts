import type Database from 'better-sqlite3';
import { ConcurrencyError } from '@kb/platform';
import type { NewEvent, StoredEvent } from '../port.js';

interface EventRow {
  position: number;
  id: string;
  stream_id: string;
  version: number;
  type: string;
  schema: number;
  data: string;
  metadata: string;
  recorded_at: string;
}

const toStored = (r: EventRow): StoredEvent => ({
  id: r.id,
  type: r.type,
  schema: r.schema,
  data: JSON.parse(r.data) as Record<string, unknown>,
  metadata: JSON.parse(r.metadata) as StoredEvent['metadata'],
  stream_id: r.stream_id,
  version: r.version,
  position: r.position,
  recorded_at: r.recorded_at,
});

export function eventOps(db: Database.Database, now: () => string) {
  const readStreamStmt = db.prepare<[string], EventRow>('SELECT * FROM events WHERE stream_id = ? ORDER BY version');
  const versionStmt = db.prepare<[string], { v: number | null }>('SELECT max(version) AS v FROM events WHERE stream_id = ?');
  const readAllStmt = db.prepare<[number, number], EventRow>('SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?');
  const insertStmt = db.prepare(
    `INSERT INTO events (id, stream_id, version, type, schema, data, metadata, recorded_at)
     VALUES (@id, @stream_id, @version, @type, @schema, @data, @metadata, @recorded_at)`,
  );

  return {
    readStream: (streamId: string): StoredEvent[] => readStreamStmt.all(streamId).map(toStored),
    readAll: (after: number, limit: number): StoredEvent[] => readAllStmt.all(after, limit).map(toStored),
    /** Must run inside the writer's transaction. */
    append(streamId: string, expectedVersion: number, events: NewEvent[]): StoredEvent[] {
      const actual = versionStmt.get(streamId)?.v ?? 0;
      if (actual !== expectedVersion) throw new ConcurrencyError(streamId, expectedVersion, actual);
      const recordedAt = now();
      return events.map((e, i) => {
        const version = expectedVersion + i + 1;
        const info = insertStmt.run({
          id: e.id,
          stream_id: streamId,
          version,
          type: e.type,
          schema: e.schema,
          data: JSON.stringify(e.data),
          metadata: JSON.stringify(e.metadata),
          recorded_at: recordedAt,
        });
        return { ...e, stream_id: streamId, version, position: Number(info.lastInsertRowid), recorded_at: recordedAt };
      });
    },
  };
}
