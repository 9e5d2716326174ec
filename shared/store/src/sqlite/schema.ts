import type Database from 'better-sqlite3';

/**
 * Documents live in a rowid table with (collection, id) as its unique key. Until
 * 2026-11 it was a WITHOUT ROWID table: there every row (JSON of hundreds of
 * bytes to a megabyte) sits in the key's b-tree, so a new id landing between
 * existing ones moves whole rows around in page splits; SQLite advises WITHOUT
 * ROWID only for rows under about a twentieth of a page. As a rowid table a new
 * document is appended and only its small key entry goes in order: inserts 2.5x
 * cheaper, updates (an upsert in place) as cheap, files about a fifth smaller
 * (`npm run bench:analytics`; docs/performance.md).
 */
const documentsTable = (name: string) => `
  CREATE TABLE IF NOT EXISTS ${name} (
    collection TEXT NOT NULL,
    id         TEXT NOT NULL,
    data       TEXT NOT NULL,
    PRIMARY KEY (collection, id)
  )`;

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
    ${documentsTable('documents')};
    CREATE TABLE IF NOT EXISTS inbox (
      consumer     TEXT NOT NULL,
      event_id     TEXT NOT NULL,
      PRIMARY KEY (consumer, event_id)
    ) WITHOUT ROWID;
  `);
  if (documentsWithoutRowid(db)) convertDocumentsToRowid(db);
}

function documentsWithoutRowid(db: Database.Database): boolean {
  const row = db.prepare<[], { sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'documents'").get();
  return row !== undefined && /WITHOUT\s+ROWID/i.test(row.sql);
}

/**
 * A store created before documents moved to a rowid table: its documents are
 * copied over in key order and its field indexes (ensureIndex) made again on
 * the new table, all in one transaction, so a crash leaves the old table whole.
 * Another process opening the same file waits for the lock and then finds the
 * work done.
 */
function convertDocumentsToRowid(db: Database.Database): void {
  db.exec('BEGIN IMMEDIATE');
  try {
    if (documentsWithoutRowid(db)) {
      const indexes = db
        .prepare<[], { sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'documents' AND sql IS NOT NULL")
        .all();
      db.exec(`
        ${documentsTable('documents_rowid')};
        INSERT INTO documents_rowid (collection, id, data) SELECT collection, id, data FROM documents ORDER BY collection, id;
        DROP TABLE documents;
        ALTER TABLE documents_rowid RENAME TO documents;
      `);
      for (const index of indexes) db.exec(index.sql);
    }
    db.exec('COMMIT');
  } catch (err) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw err;
  }
}
