import type Database from 'better-sqlite3';

export function migrate(db: Database.Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS events (
      position    INTEGER PRIMARY KEY AUTOINCREMENT,
      id          TEXT NOT NULL UNIQUE,
      stream_id   TEXT NOT NULL,
      version     INTEGER NOT NULL,
      type        TEXT NOT NULL,
      schema      INTEGER NOT NULL,
      data        TEXT NOT NULL,
      metadata    TEXT NOT NULL,
      recorded_at TEXT NOT NULL,
      UNIQUE (stream_id, version)
    );
    CREATE TABLE IF NOT EXISTS documents (
      collection TEXT NOT NULL,
      id         TEXT NOT NULL,
      data       TEXT NOT NULL,
      PRIMARY KEY (collection, id)
    ) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS inbox (
      consumer     TEXT NOT NULL,
      event_id     TEXT NOT NULL,
      PRIMARY KEY (consumer, event_id)
    ) WITHOUT ROWID;
  `);
}
