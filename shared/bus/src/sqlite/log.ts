import { partitionFor, type OutgoingMessage, type ReceivedMessage } from '../port.js';
import type { BusDatabase } from './database.js';

interface MessageRow {
  topic: string;
  partition: number;
  offset: number;
  key: string;
  /** null: a type the reader does not want. */
  value: string | null;
  headers: string;
  timestamp: string;
}

export interface PartitionHead {
  topic: string;
  partition: number;
  /** Offset the next appended message gets. */
  nextOffset: number;
}

/**
 * The durable log: topics, their partitions and messages, and the offsets each
 * consumer group committed. Every method is one short statement or one
 * IMMEDIATE transaction (taking the write lock up front avoids the busy-snapshot
 * failure a deferred read-then-write transaction hits when another process
 * wrote in between).
 */
export function createLog(db: BusDatabase) {
  const insertTopic = db.prepare('INSERT OR IGNORE INTO bus_topics (name, partitions) VALUES (?, ?)');
  const selectTopic = db.prepare<[string], { partitions: number }>('SELECT partitions FROM bus_topics WHERE name = ?');
  const selectTopics = db.prepare<[], { name: string; partitions: number }>('SELECT name, partitions FROM bus_topics');
  const insertPartition = db.prepare('INSERT OR IGNORE INTO bus_partitions (topic, partition) VALUES (?, ?)');
  const selectHeads = db.prepare<[string], { topic: string; partition: number; next_offset: number }>(
    'SELECT topic, partition, next_offset FROM bus_partitions WHERE topic IN (SELECT value FROM json_each(?))',
  );
  const selectNextOffset = db.prepare<[string, number], { next_offset: number }>(
    'SELECT next_offset FROM bus_partitions WHERE topic = ? AND partition = ?',
  );
  const updateNextOffset = db.prepare('UPDATE bus_partitions SET next_offset = ? WHERE topic = ? AND partition = ?');
  const insertMessage = db.prepare(
    'INSERT INTO bus_messages (topic, partition, offset, key, value, headers, timestamp) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  // With a type filter, the value of a message of another type is not read (NULL):
  // content events carry up to a megabyte of chunk text, which most groups skip.
  const selectMessages = db.prepare<[string | null, string | null, string, number, number, number], MessageRow>(
    `SELECT topic, partition, offset, key,
       CASE WHEN ? IS NULL OR json_extract(headers, '$.type') IS NULL
              OR json_extract(headers, '$.type') IN (SELECT value FROM json_each(?)) THEN value END AS value,
       headers, timestamp FROM bus_messages
     WHERE topic = ? AND partition = ? AND offset >= ? ORDER BY offset LIMIT ?`,
  );
  const selectCommitted = db.prepare<[string, string, number], { next_offset: number }>(
    'SELECT next_offset FROM bus_group_offsets WHERE group_id = ? AND topic = ? AND partition = ?',
  );
  const insertOffsetsAtEnd = db.prepare(
    `INSERT OR IGNORE INTO bus_group_offsets (group_id, topic, partition, next_offset)
     SELECT ?, topic, partition, next_offset FROM bus_partitions WHERE topic IN (SELECT value FROM json_each(?))`,
  );
  const upsertCommitted = db.prepare(
    `INSERT INTO bus_group_offsets (group_id, topic, partition, next_offset) VALUES (?, ?, ?, ?)
     ON CONFLICT (group_id, topic, partition) DO UPDATE SET next_offset = excluded.next_offset`,
  );

  // Partition counts never change once a topic exists, so caching them is safe.
  const partitionCounts = new Map<string, number>();

  const ensureTopics = db.transaction((topics: string[], partitions: number) => {
    for (const topic of topics) {
      insertTopic.run(topic, partitions);
      const actual = selectTopic.get(topic)!.partitions;
      for (let p = 0; p < actual; p++) insertPartition.run(topic, p);
      partitionCounts.set(topic, actual);
    }
  });

  const append = db.transaction((topic: string, messages: OutgoingMessage[], partitions: number, timestamp: string) => {
    const next = new Map<number, number>();
    for (const message of messages) {
      const partition = partitionFor(message.key, partitions);
      const offset = next.get(partition) ?? selectNextOffset.get(topic, partition)!.next_offset;
      insertMessage.run(topic, partition, offset, message.key, message.value, JSON.stringify(message.headers ?? {}), timestamp);
      next.set(partition, offset + 1);
    }
    for (const [partition, offset] of next) updateNextOffset.run(offset, topic, partition);
  });

  return {
    ensureTopics(topics: string[], partitions: number): void {
      const missing = topics.filter((t) => !partitionCounts.has(t));
      if (missing.length > 0) ensureTopics.immediate(missing, partitions);
    },

    /** Partition count of every topic (all processes must see the same set to agree on assignment). */
    allPartitionCounts(): Map<string, number> {
      for (const row of selectTopics.all()) partitionCounts.set(row.name, row.partitions);
      return new Map(partitionCounts);
    },

    append(topic: string, messages: OutgoingMessage[], timestamp: string): void {
      const partitions = partitionCounts.get(topic);
      if (partitions === undefined) throw new Error(`topic ${topic} does not exist`);
      append.immediate(topic, messages, partitions, timestamp);
    },

    heads(topics: string[]): PartitionHead[] {
      return selectHeads.all(JSON.stringify(topics)).map((r) => ({ topic: r.topic, partition: r.partition, nextOffset: r.next_offset }));
    },

    /**
     * Up to `limit` messages from `fromOffset`, stopping once their values reach `maxBytes`
     * (always at least one). Every consumer group holds its batch in memory until it is
     * handled, and content events carry up to a megabyte of chunk text each: a count alone
     * let five groups hold hundreds of megabytes during an upload flood. With `types`,
     * messages of other types (by the `type` header) are passed over unread; `end` is the
     * offset after the last message looked at, wanted or not (undefined: none).
     */
    read(
      topic: string,
      partition: number,
      fromOffset: number,
      limit: number,
      maxBytes = Infinity,
      types?: readonly string[],
    ): { messages: ReceivedMessage[]; end: number | undefined } {
      const messages: ReceivedMessage[] = [];
      let end: number | undefined;
      let bytes = 0;
      const filter = types ? JSON.stringify(types) : null;
      for (const r of selectMessages.iterate(filter, filter, topic, partition, fromOffset, limit)) {
        end = r.offset + 1;
        if (r.value === null) continue;
        messages.push({
          topic: r.topic,
          partition: r.partition,
          offset: String(r.offset),
          key: r.key,
          value: r.value,
          headers: JSON.parse(r.headers) as Record<string, string>,
          timestamp: r.timestamp,
        });
        bytes += r.value.length;
        if (bytes >= maxBytes) break;
      }
      return { messages, end };
    },

    committed(groupId: string, topic: string, partition: number): number | undefined {
      return selectCommitted.get(groupId, topic, partition)?.next_offset;
    },

    /** A group that never committed on a partition starts there at the current end. */
    startAtEndWhereUncommitted(groupId: string, topics: string[]): void {
      insertOffsetsAtEnd.run(groupId, JSON.stringify(topics));
    },

    /** Unconditional write; callers check their claim in the same transaction. */
    writeCommitted(groupId: string, topic: string, partition: number, nextOffset: number): void {
      upsertCommitted.run(groupId, topic, partition, nextOffset);
    },
  };
}

export type Log = ReturnType<typeof createLog>;
