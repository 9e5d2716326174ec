import type Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { hammingNearest, orgBits, type OrgBits } from './bit-scan.js';

/**
 * The sign bits of every stored chunk vector: the coarse pass of dense retrieval (one
 * bit a dimension, 48 bytes for 384; the exact floats stay on disk and the caller
 * rescores the candidates). Kept on disk in a sqlite-vec `vec0` table partitioned by
 * organization, and scanned from a compact copy in memory, read from that table at an
 * organization's first dense query and kept in step with every committed write.
 * (sqlite-vec's own KNN costs time in proportion to k: at 100k vectors and the ~1,700
 * candidates a search rescores it took 650 ms, against a few ms for this scan.)
 * The table is made by the first vector written, with that vector's dimensions (one
 * embedding model per index: `drop` removes it for the next).
 */
export interface BitVectors {
  /** Whether any vector was ever written (the table exists). */
  ready(): boolean;
  put(org: string, rowid: number, vector: ArrayLike<number>): void;
  remove(org: string, rowid: number): void;
  /** Up to k rowids of the organization, nearest first by Hamming distance to the query's sign bits. */
  nearest(org: string, query: ArrayLike<number>, k: number): number[];
  drop(): void;
  /** Runs a write transaction: its changes reach the copies in memory only once it committed. */
  write<T>(fn: () => T): T;
}

const META = 'CREATE TABLE IF NOT EXISTS vector_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)';

/** Sign bits of a vector, zero-padded to a whole number of bytes. */
export function signBits(v: ArrayLike<number>, bytes: number): Buffer {
  const out = Buffer.alloc(bytes);
  const n = Math.min(v.length, bytes * 8);
  for (let i = 0; i < n; i++) if (v[i]! > 0) out[i >> 3]! |= 1 << (i & 7);
  return out;
}

type Change = { org: string; rowid: number; bits?: Buffer };

export function openBitVectors(db: Database.Database): BitVectors {
  sqliteVec.load(db);
  db.exec(META);
  const getDims = db.prepare<[], { value: string }>("SELECT value FROM vector_meta WHERE key = 'dimensions'");
  let dims = Number(getDims.get()?.value ?? 0);
  let st: { insert: Database.Statement; remove: Database.Statement; ofOrg: Database.Statement } | undefined;
  const bytes = () => Math.ceil(dims / 8);
  /** Bytes padded to whole 32-bit words, as the scan reads them. */
  const words = () => Math.ceil(dims / 32);
  const loaded = new Map<string, OrgBits>();
  let pending: Change[] = [];

  const statements = () =>
    (st ??= {
      insert: db.prepare('INSERT INTO chunk_bits (rowid, org_id, bits) VALUES (?, ?, vec_bit(?))'),
      remove: db.prepare('DELETE FROM chunk_bits WHERE rowid = ?'),
      ofOrg: db.prepare('SELECT rowid, bits FROM chunk_bits WHERE org_id = ?'),
    });

  function create(d: number) {
    dims = d;
    db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS chunk_bits USING vec0 (org_id TEXT PARTITION KEY, bits BIT[${bytes() * 8}])`);
    db.prepare("INSERT OR REPLACE INTO vector_meta (key, value) VALUES ('dimensions', ?)").run(String(d));
  }

  function orgOf(org: string): OrgBits {
    let m = loaded.get(org);
    if (!m) {
      m = orgBits(words());
      for (const r of statements().ofOrg.iterate(org) as Iterable<{ rowid: number | bigint; bits: Buffer }>) m.set(Number(r.rowid), r.bits);
      loaded.set(org, m);
    }
    return m;
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
      const bits = signBits(vector, bytes());
      s.remove.run(BigInt(rowid));
      s.insert.run(BigInt(rowid), org, bits);
      pending.push({ org, rowid, bits });
    },
    remove(org, rowid) {
      if (dims === 0) return;
      statements().remove.run(BigInt(rowid));
      pending.push({ org, rowid });
    },
    nearest(org, query, k) {
      if (dims === 0 || k <= 0) return [];
      const m = orgOf(org);
      return hammingNearest(m, new Uint32Array(signBits(query, words() * 4).buffer.slice(0)), k);
    },
    drop() {
      db.exec("DROP TABLE IF EXISTS chunk_bits; DELETE FROM vector_meta WHERE key = 'dimensions'");
      dims = 0;
      st = undefined;
      loaded.clear();
      pending = [];
    },
    write(fn) {
      pending = [];
      let out;
      try {
        out = db.transaction(fn)();
      } catch (err) {
        // What the copies would have become is unknown: they are read again when next needed.
        for (const c of pending) loaded.delete(c.org);
        pending = [];
        throw err;
      }
      for (const c of pending) {
        const m = loaded.get(c.org);
        if (!m) continue;
        if (c.bits) m.set(c.rowid, c.bits);
        else m.remove(c.rowid);
      }
      pending = [];
      return out;
    },
  };

  // An index written before the bits existed: derive them once from the stored floats.
  if (dims === 0) {
    const rows = db.prepare<[], { rowid: number; org_id: string; embedding: Buffer }>(
      'SELECT rowid, org_id, embedding FROM chunks WHERE embedding IS NOT NULL',
    );
    bitVectors.write(() => {
      for (const r of rows.all()) {
        const e = r.embedding;
        bitVectors.put(r.org_id, r.rowid, new Float32Array(e.buffer.slice(e.byteOffset, e.byteOffset + e.byteLength)));
      }
    });
  }
  return bitVectors;
}
