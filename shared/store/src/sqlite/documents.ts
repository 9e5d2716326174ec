import type Database from 'better-sqlite3';
import { DuplicateKeyError, type DocLike, type Query, type Where } from '../port.js';
import { statementCache } from './statements.js';

const FIELD_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

function fieldPath(field: string): string {
  // Field names are interpolated into SQL (json paths cannot be bound), so only
  // plain identifiers are allowed.
  if (!FIELD_RE.test(field)) throw new Error(`Invalid document field name: ${field}`);
  return `'$.${field}'`;
}

/** JSON booleans come back from json_extract as 1/0. */
const bindable = (v: string | number | boolean): string | number => (typeof v === 'boolean' ? (v ? 1 : 0) : v);

function whereSql(collection: string, where: Where | undefined): { sql: string; params: unknown[] } {
  const clauses = ['collection = ?'];
  const params: unknown[] = [collection];
  for (const [field, filter] of Object.entries(where ?? {})) {
    const expr = `json_extract(data, ${fieldPath(field)})`;
    if (filter === null) {
      clauses.push(`${expr} IS NULL`);
    } else if (typeof filter === 'object') {
      if (filter.$in.length === 0) {
        clauses.push('0');
      } else {
        clauses.push(`${expr} IN (${filter.$in.map(() => '?').join(', ')})`);
        params.push(...filter.$in.map(bindable));
      }
    } else {
      clauses.push(`${expr} = ?`);
      params.push(bindable(filter));
    }
  }
  return { sql: clauses.join(' AND '), params };
}

/** Document operations over one connection; used by both the writer (in transactions) and the reader. */
export function documentOps(db: Database.Database) {
  const getStmt = db.prepare<[string, string], { data: string }>('SELECT data FROM documents WHERE collection = ? AND id = ?');
  const insertStmt = db.prepare('INSERT INTO documents (collection, id, data) VALUES (?, ?, ?)');
  // An upsert, not INSERT OR REPLACE: a replace deletes the row and inserts it again under a new rowid.
  const putStmt = db.prepare(
    'INSERT INTO documents (collection, id, data) VALUES (?, ?, ?) ON CONFLICT (collection, id) DO UPDATE SET data = excluded.data',
  );
  const deleteStmt = db.prepare('DELETE FROM documents WHERE collection = ? AND id = ?');
  const prepared = statementCache(db);

  return {
    get<T extends DocLike>(collection: string, id: string): T | undefined {
      const row = getStmt.get(collection, id);
      return row ? (JSON.parse(row.data) as T) : undefined;
    },
    find<T extends DocLike>(collection: string, query: Query = {}): T[] {
      const { sql, params } = whereSql(collection, query.where);
      // With field filters, `+id` keeps the primary key (collection, id) from being
      // chosen just to avoid sorting: that walks the whole collection and ignores the
      // expression indexes the filters could use.
      const tieBreak = Object.keys(query.where ?? {}).length > 0 ? '+id ASC' : 'id ASC';
      const order = (query.sort ?? [])
        .map(({ field, order }) => `json_extract(data, ${fieldPath(field)}) ${order === 'desc' ? 'DESC' : 'ASC'}`)
        .concat(tieBreak)
        .join(', ');
      const limit = query.limit ?? -1;
      const offset = query.offset ?? 0;
      const rows = prepared(`SELECT data FROM documents WHERE ${sql} ORDER BY ${order} LIMIT ? OFFSET ?`).all(...params, limit, offset) as {
        data: string;
      }[];
      return rows.map((r) => JSON.parse(r.data) as T);
    },
    count(collection: string, where?: Where): number {
      const { sql, params } = whereSql(collection, where);
      const row = prepared(`SELECT count(*) AS n FROM documents WHERE ${sql}`).get(...params) as { n: number };
      return row.n;
    },
    insert(collection: string, doc: DocLike): void {
      try {
        insertStmt.run(collection, doc.id, JSON.stringify(doc));
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE') throw new DuplicateKeyError(collection, doc.id);
        throw err;
      }
    },
    put(collection: string, doc: DocLike): void {
      putStmt.run(collection, doc.id, JSON.stringify(doc));
    },
    putJson(collection: string, id: string, json: string): void {
      putStmt.run(collection, id, json);
    },
    delete(collection: string, id: string): boolean {
      return deleteStmt.run(collection, id).changes > 0;
    },
    drop(collections: string[]): void {
      const stmt = db.prepare('DELETE FROM documents WHERE collection = ?');
      for (const c of collections) stmt.run(c);
    },
    ensureIndex(collection: string, fields: string[]): void {
      const name = `idx_${collection}_${fields.join('_')}`.replace(/[^A-Za-z0-9_]/g, '_');
      const cols = fields.map((f) => `json_extract(data, ${fieldPath(f)})`).join(', ');
      if (!/^[A-Za-z0-9_-]+$/.test(collection)) throw new Error(`Invalid collection name: ${collection}`);
      db.exec(`CREATE INDEX IF NOT EXISTS ${name} ON documents(${cols}) WHERE collection = '${collection}'`);
    },
  };
}
