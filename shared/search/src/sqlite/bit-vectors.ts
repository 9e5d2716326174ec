import type Database from 'better-sqlite3';
import { hammingNearest, orgBits, type OrgBits } from './bit-scan.js';

/**
 * The sign bits of every stored chunk vector: the coarse pass of dense retrieval (one
 * bit a dimension, 48 bytes for 384; the exact floats stay on disk and the caller
 * rescores the candidates). Kept on disk in `chunk_bits` beside the chunks, and scanned
 * from a compact copy in memory, read from that table at an organization's first dense
 * query and kept in step with every committed write. (sqlite-vec was measured for this
 * and not kept: its KNN costs time in proportion to k, 650 ms at 100k vectors for the
 * ~1,700 candidates a search rescores, against a few ms for this scan, and reading its
 * vec0 table back was 2.5 times slower than a plain table.) The dimensions are those of
 * the first vector written (one embedding model per index: `drop` forgets them).
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

const SCHEMA = `
CREATE TABLE IF NOT EXISTS vector_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunk_bits (rowid INTEGER PRIMARY KEY, org_id TEXT NOT NULL, bits BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS chunk_bits_org ON chunk_bits (org_id);
`;

/** Sign bits of a vector, zero-padded to a whole number of bytes. */
export function signBits(v: ArrayLike<number>, bytes: number): Buffer {
  const out = Buffer.alloc(bytes);
  const n = Math.min(v.length, bytes * 8);
  for (let i = 0; i < n; i++) if (v[i]! > 0) out[i >> 3]! |= 1 << (i & 7);
  return out;
}

type Change = { org: string; rowid: number; bits?: Buffer };

export function openBitVectors(db: Database.Database): BitVectors {
  db.exec(SCHEMA);
  const getDims = db.prepare<[], { value: string }>("SELECT value FROM vector_meta WHERE key = 'dimensions'");
  let dims = Number(getDims.get()?.value ?? 0);
  const st = {
    insert: db.prepare('INSERT OR REPLACE INTO chunk_bits (rowid, org_id, bits) VALUES (?, ?, ?)'),
    remove: db.prepare('DELETE FROM chunk_bits WHERE rowid = ?'),
    ofOrg: db.prepare('SELECT rowid, bits FROM chunk_bits WHERE org_id = ?').raw(),
  };
  const bytes = () => Math.ceil(dims / 8);
  /** Bytes padded to whole 32-bit words, as the scan reads them. */
  const words = () => Math.ceil(dims / 32);
  const loaded = new Map<string, OrgBits>();
  let pending: Change[] = [];

  function create(d: number) {
    dims = d;
    db.prepare("INSERT OR REPLACE INTO vector_meta (key, value) VALUES ('dimensions', ?)").run(String(d));
  }

  function orgOf(org: string): OrgBits {
    let m = loaded.get(org);
    if (!m) {
      m = orgBits(words());
      for (const [rowid, bits] of st.ofOrg.iterate(org) as Iterable<[number, Buffer]>) m.set(rowid, bits);
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
      const bits = signBits(vector, bytes());
      st.insert.run(rowid, org, bits);
      pending.push({ org, rowid, bits });
    },
    remove(org, rowid) {
      if (dims === 0) return;
      st.remove.run(rowid);
      pending.push({ org, rowid });
    },
    nearest(org, query, k) {
      if (dims === 0 || k <= 0) return [];
      const m = orgOf(org);
      return hammingNearest(m, new Uint32Array(signBits(query, words() * 4).buffer.slice(0)), k);
    },
    drop() {
      db.exec("DELETE FROM chunk_bits; DELETE FROM vector_meta WHERE key = 'dimensions'");
      dims = 0;
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

  // An index written before the bits existed: derive them once from the stored floats (and never look again).
  if (!db.prepare("SELECT 1 FROM vector_meta WHERE key = 'bits_derived'").get()) {
    const rows = db.prepare<[], { rowid: number; org_id: string; embedding: Buffer }>(
      'SELECT rowid, org_id, embedding FROM chunks WHERE embedding IS NOT NULL',
    );
    bitVectors.write(() => {
      if (dims === 0)
        for (const r of rows.iterate()) {
          const e = r.embedding;
          bitVectors.put(r.org_id, r.rowid, new Float32Array(e.buffer.slice(e.byteOffset, e.byteOffset + e.byteLength)));
        }
      db.exec("INSERT OR REPLACE INTO vector_meta (key, value) VALUES ('bits_derived', '1')");
    });
  }
  return bitVectors;
}
