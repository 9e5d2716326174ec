import Database from 'better-sqlite3';

export type BusDatabase = Database.Database;

export interface OpenBusDatabaseOptions {
  /** How long a connection waits for another process's write lock before failing. */
  busyTimeoutMs?: number;
  /**
   * NORMAL (default) survives any process crash; FULL also survives power loss,
   * at the price of an fsync per publish and per committed offset.
   */
  synchronous?: 'NORMAL' | 'FULL';
}

// One row per message; committed offsets are "next offset to read", as in Kafka.
// Membership and claims coordinate consumer groups across processes: a member
// only consumes a partition whose claim it holds, so a hand-over never lets two
// members work on one partition at once.
const schema = `
CREATE TABLE IF NOT EXISTS bus_topics (
  name TEXT PRIMARY KEY,
  partitions INTEGER NOT NULL CHECK (partitions > 0)
);
CREATE TABLE IF NOT EXISTS bus_partitions (
  topic TEXT NOT NULL,
  partition INTEGER NOT NULL,
  next_offset INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (topic, partition)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS bus_messages (
  topic TEXT NOT NULL,
  partition INTEGER NOT NULL,
  offset INTEGER NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  headers TEXT NOT NULL,
  timestamp TEXT NOT NULL,
  PRIMARY KEY (topic, partition, offset)
);
CREATE TABLE IF NOT EXISTS bus_group_offsets (
  group_id TEXT NOT NULL,
  topic TEXT NOT NULL,
  partition INTEGER NOT NULL,
  next_offset INTEGER NOT NULL,
  PRIMARY KEY (group_id, topic, partition)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS bus_members (
  group_id TEXT NOT NULL,
  member_id TEXT NOT NULL,
  topics TEXT NOT NULL,
  heartbeat_at INTEGER NOT NULL,
  PRIMARY KEY (group_id, member_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS bus_claims (
  group_id TEXT NOT NULL,
  topic TEXT NOT NULL,
  partition INTEGER NOT NULL,
  member_id TEXT NOT NULL,
  PRIMARY KEY (group_id, topic, partition)
) WITHOUT ROWID;
`;

/** Opens (and if needed creates) the bus file; safe to call from several processes at once. */
export function openBusDatabase(path: string, options: OpenBusDatabaseOptions = {}): BusDatabase {
  const db = new Database(path);
  try {
    // busy_timeout first: switching to WAL and creating tables take locks that
    // another process opening the same file may hold for a moment.
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${options.synchronous ?? 'NORMAL'}`);
    db.transaction(() => db.exec(schema)).immediate();
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}
