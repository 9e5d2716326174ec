import type Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';

/**
 * The sign bits of every stored chunk vector in a sqlite-vec `vec0` table, partitioned by
 * organization: the coarse, on-disk pass of dense retrieval (one bit a dimension; the
 * exact floats are rescored by the caller). The table is made by the first vector written,
 * with that vector's dimensions (one embedding model per index: `clear` drops it).
 */
export interface BitVectors {
  /** Whether any vector was ever written (the table exists). */
  ready(): boolean;
  put(org: string, rowid: number, vector: ArrayLike<number>): void;
  remove(rowid: number): void;
  /** Up to k rowids of the organization, nearest first by Hamming distance to the query's sign bits. */
  nearest(org: string, query: ArrayLike<number>, k: number): number[];
  drop(): void;
}

const META = 'CREATE TABLE IF NOT EXISTS vector_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)';

/** Sign bits of a vector, zero-padded to a whole number of bytes. */
export function signBits(v: ArrayLike<number>, bytes: number): Buffer {
  const out = Buffer.alloc(bytes);
  const n = Math.min(v.length, bytes * 8);
  for (let i = 0; i < n; i++) if (v[i]! > 0) out[i >> 3]! |= 1 << (i & 7);
  return out;
}

export function openBitVectors(db: Database.Database): BitVectors {
  sqliteVec.load(db);
  db.exec(META);
  const getDims = db.prepare<[], { value: string }>("SELECT value FROM vector_meta WHERE key = 'dimensions'");
  let dims = Number(getDims.get()?.value ?? 0);
  let st: { insert: Database.Statement; remove: Database.Statement; knn: Database.Statement } | undefined;
  const bytes = () => Math.ceil(dims / 8);

  const statements = () =>
    (st ??= {
      insert: db.prepare('INSERT INTO chunk_bits (rowid, org_id, bits) VALUES (?, ?, vec_bit(?))'),
      remove: db.prepare('DELETE FROM chunk_bits WHERE rowid = ?'),
      knn: db.prepare('SELECT rowid FROM chunk_bits WHERE bits MATCH vec_bit(?) AND k = ? AND org_id = ?').pluck(),
    });

  function create(d: number) {
    dims = d;
    db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS chunk_bits USING vec0 (org_id TEXT PARTITION KEY, bits BIT[${bytes() * 8}])`);
    db.prepare("INSERT OR REPLACE INTO vector_meta (key, value) VALUES ('dimensions', ?)").run(String(d));
  }

  const bitVectors: BitVectors = {
    ready: () => dims > 0,
    put(org, rowid, vector) {
      if (dims === 0) create(vector.length);
      if (vector.length !== dims) {
        throw new Error(
          `a vector of ${vector.length} dimensions in an index of ${dims}: re-index after changing the model (npm run reindex:search)`,
        );
      }
      const s = statements();
      s.remove.run(BigInt(rowid));
      s.insert.run(BigInt(rowid), org, signBits(vector, bytes()));
    },
    remove(rowid) {
      if (dims > 0) statements().remove.run(BigInt(rowid));
    },
    nearest(org, query, k) {
      if (dims === 0 || k <= 0) return [];
      return (statements().knn.all(signBits(query, bytes()), k, org) as (number | bigint)[]).map(Number);
    },
    drop() {
      db.exec("DROP TABLE IF EXISTS chunk_bits; DELETE FROM vector_meta WHERE key = 'dimensions'");
      dims = 0;
      st = undefined;
    },
  };

  // An index written before the bits existed: derive them once from the stored floats.
  if (dims === 0) {
    const rows = db.prepare<[], { rowid: number; org_id: string; embedding: Buffer }>(
      'SELECT rowid, org_id, embedding FROM chunks WHERE embedding IS NOT NULL',
    );
    db.transaction(() => {
      for (const r of rows.all()) {
        bitVectors.put(
          r.org_id,
          r.rowid,
          new Float32Array(r.embedding.buffer.slice(r.embedding.byteOffset, r.embedding.byteOffset + r.embedding.byteLength)),
        );
      }
    })();
  }
  return bitVectors;
}
