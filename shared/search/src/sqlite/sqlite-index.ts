import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { registerForCheckpoints } from '@kb/store/sqlite';
import { queryTerms } from '../analysis.js';
import { DEFAULT_FUSION, fuseRanked, type FusionOptions } from '../fusion.js';
import { openBitVectors } from './bit-vectors.js';
import { dot, topK } from './top-k.js';
import {
  vectorIdOf,
  type ChunkVector,
  type ContentMeta,
  type IndexedContent,
  type SearchFilters,
  type SearchHit,
  type SearchIndex,
  type SearchRequest,
} from '../port.js';

export interface SqliteSearchIndexOptions {
  /** Database file (created with its folder), or ':memory:'. */
  path: string;
  /** bm25() column weights for title, heading path and chunk text (default 2, 1, 1: tuned on SciFact). */
  weights?: { title: number; heading: number; text: number };
  /** How many candidates each retriever brings to the fusion (at least the limit). */
  candidates?: number;
  /** How BM25 and dense candidates are fused when the request has a vector (default: DEFAULT_FUSION). */
  fusion?: FusionOptions;
}

/*
 * One row per chunk in `chunks` (metadata, text, optional embedding) and the
 * same rowid in a contentless FTS5 table holding the searchable columns, stemmed
 * by SQLite's porter tokenizer. The FTS row also carries the chunk's filing as
 * tokens (organization, folders, tags, category, topic) in a `filing` column of
 * weight 0, so every filter, the folder scope included, is part of the MATCH
 * and the full-text index does the filtering: no join per matching row.
 * Filing is also kept per content item in side tables (dense retrieval filters
 * with SQL); re-filing rewrites the content's FTS rows.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS contents (
  org_id TEXT NOT NULL, content_id TEXT NOT NULL, version_id TEXT NOT NULL, title TEXT NOT NULL,
  category_id TEXT, topic_id TEXT, PRIMARY KEY (org_id, content_id)
);
CREATE INDEX IF NOT EXISTS contents_category ON contents (org_id, category_id);
CREATE INDEX IF NOT EXISTS contents_topic ON contents (org_id, topic_id);
CREATE TABLE IF NOT EXISTS content_tags (org_id TEXT NOT NULL, content_id TEXT NOT NULL, tag TEXT NOT NULL, PRIMARY KEY (org_id, tag, content_id));
CREATE TABLE IF NOT EXISTS content_folders (org_id TEXT NOT NULL, content_id TEXT NOT NULL, folder_id TEXT NOT NULL, PRIMARY KEY (org_id, folder_id, content_id));
CREATE TABLE IF NOT EXISTS chunks (
  rowid INTEGER PRIMARY KEY, org_id TEXT NOT NULL, content_id TEXT NOT NULL, version_id TEXT NOT NULL,
  chunk_index INTEGER NOT NULL, text TEXT NOT NULL, heading_path TEXT NOT NULL, page INTEGER, sheet TEXT, slide INTEGER,
  embedding BLOB
);
CREATE INDEX IF NOT EXISTS chunks_content ON chunks (org_id, content_id);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5 (
  title, heading, body, filing, content='', contentless_delete=1, tokenize='porter unicode61 remove_diacritics 2'
);
`;

interface ChunkRow {
  rowid: number;
  content_id: string;
  version_id: string;
  chunk_index: number;
  text: string;
  heading_path: string;
  page: number | null;
  sheet: string | null;
  slide: number | null;
  title: string;
  score: number;
}

/** A filing token: one letter for the kind, the id without separators (one token for the tokenizer). */
const token = (kind: 'o' | 'f' | 't' | 'c' | 'p', id: string): string => `${kind}${id.toLowerCase().replace(/[^a-z0-9]/g, '')}`;

function filingTokens(
  org: string,
  f: { category_id: string | null; topic_id: string | null; tags: string[]; folder_path: string[] },
): string {
  return [
    token('o', org),
    ...f.folder_path.map((id) => token('f', id)),
    ...f.tags.map((id) => token('t', id)),
    ...(f.category_id ? [token('c', f.category_id)] : []),
    ...(f.topic_id ? [token('p', f.topic_id)] : []),
  ].join(' ');
}

const anyOf = (tokens: string[]) => `filing : (${tokens.map((t) => `"${t}"`).join(' OR ')})`;

/** The filters as an FTS5 expression on the filing column; null when nothing can match. */
function filingMatch(org: string, f: SearchFilters): string | null {
  if (f.folder_scope !== null && f.folder_scope.length === 0) return null;
  const parts = [anyOf([token('o', org)])];
  if (f.category_id) parts.push(anyOf([token('c', f.category_id)]));
  if (f.topic_id) parts.push(anyOf([token('p', f.topic_id)]));
  if (f.tags?.length) parts.push(anyOf(f.tags.map((id) => token('t', id))));
  if (f.folder_ids?.length) parts.push(anyOf(f.folder_ids.map((id) => token('f', id))));
  if (f.folder_scope !== null) parts.push(anyOf(f.folder_scope.map((id) => token('f', id))));
  return parts.join(' AND ');
}

/** Quoted terms joined by OR: user text can never be query syntax, and a question is never an AND of its words. */
export function ftsQuery(text: string): string | null {
  const terms = queryTerms(text);
  return terms.length === 0 ? null : terms.map((t) => `"${t.replaceAll('"', '""')}"`).join(' OR ');
}

function open(path: string): Database.Database {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.exec(SCHEMA);
  return db;
}

const toBlob = (v: ArrayLike<number>): Buffer => Buffer.from(Float32Array.from(v).buffer);
const fromBlob = (b: Buffer): Float32Array => new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));

/** How many stored vectors a query's binary scan brings to the exact rescoring, per hit wanted. */
const OVERSAMPLE = 8;
/** Candidates of the sign-bit scan for a filter too wide to score exactly (those it allows are rescored). */
const MAX_KNN = 8192;
/** A filtered dense query over at most this many vectors scores them all exactly instead of scanning the organization's. */
const EXACT_SCAN_MAX = 20_000;

/**
 * SearchIndex on SQLite: FTS5 (BM25) for words, and for meaning the chunks' vectors on disk:
 * each vector's float32 blob beside its chunk, and its sign bits (bit-vectors.ts). A dense
 * query scans the organization's sign bits (Hamming distance, 48 bytes a chunk for 384
 * dimensions, the only part held in memory) for OVERSAMPLE times the candidates it needs and
 * rescores those by exact cosine over their blobs read from disk.
 */
export function createSqliteSearchIndex(options: SqliteSearchIndexOptions): SearchIndex {
  const db = open(options.path);
  // Indexing writes every chunk's text and its postings: checkpointing that inside a COMMIT
  // (every 1000 pages) stalled the event loop with a copy and an fsync, as for the stores.
  const checkpoints = options.path === ':memory:' ? undefined : registerForCheckpoints(options.path, (pragma) => db.pragma(pragma));
  const w = options.weights ?? { title: 2, heading: 1, text: 1 };
  const candidates = options.candidates ?? 100;
  const fusion = options.fusion ?? DEFAULT_FUSION;
  const bits = openBitVectors(db);

  const s = {
    chunkRowsOf: db.prepare<[string, string], { rowid: number; text: string; heading_path: string }>(
      'SELECT rowid, text, heading_path FROM chunks WHERE org_id = ? AND content_id = ?',
    ),
    chunkRowsOfVersion: db.prepare<[string, string, string], { rowid: number; chunk_index: number }>(
      'SELECT rowid, chunk_index FROM chunks WHERE org_id = ? AND content_id = ? AND version_id = ?',
    ),
    setEmbedding: db.prepare<[Buffer, number]>('UPDATE chunks SET embedding = ? WHERE rowid = ?'),
    deleteFts: db.prepare<[number]>('DELETE FROM chunks_fts WHERE rowid = ?'),
    deleteChunks: db.prepare<[string, string]>('DELETE FROM chunks WHERE org_id = ? AND content_id = ?'),
    deleteContent: db.prepare<[string, string]>('DELETE FROM contents WHERE org_id = ? AND content_id = ?'),
    deleteTags: db.prepare<[string, string]>('DELETE FROM content_tags WHERE org_id = ? AND content_id = ?'),
    deleteFolders: db.prepare<[string, string]>('DELETE FROM content_folders WHERE org_id = ? AND content_id = ?'),
    insertContent: db.prepare(
      'INSERT INTO contents (org_id, content_id, version_id, title, category_id, topic_id) VALUES (@org_id, @content_id, @version_id, @title, @category_id, @topic_id)',
    ),
    insertTag: db.prepare<[string, string, string]>('INSERT OR IGNORE INTO content_tags (org_id, content_id, tag) VALUES (?, ?, ?)'),
    insertFolder: db.prepare<[string, string, string]>(
      'INSERT OR IGNORE INTO content_folders (org_id, content_id, folder_id) VALUES (?, ?, ?)',
    ),
    insertChunk: db.prepare(
      `INSERT INTO chunks (org_id, content_id, version_id, chunk_index, text, heading_path, page, sheet, slide, embedding)
       VALUES (@org_id, @content_id, @version_id, @chunk_index, @text, @heading_path, @page, @sheet, @slide, @embedding)`,
    ),
    insertFts: db.prepare<[number | bigint, string, string, string, string]>(
      'INSERT INTO chunks_fts (rowid, title, heading, body, filing) VALUES (?, ?, ?, ?, ?)',
    ),
    tagsOf: db.prepare<[string, string], { tag: string }>('SELECT tag FROM content_tags WHERE org_id = ? AND content_id = ?'),
    foldersOf: db.prepare<[string, string], { folder_id: string }>(
      'SELECT folder_id FROM content_folders WHERE org_id = ? AND content_id = ?',
    ),
    getContent: db.prepare<[string, string], { title: string; category_id: string | null; topic_id: string | null }>(
      'SELECT title, category_id, topic_id FROM contents WHERE org_id = ? AND content_id = ?',
    ),
    indexedVersion: db.prepare<[string, string], { version_id: string }>(
      'SELECT version_id FROM contents WHERE org_id = ? AND content_id = ?',
    ),
    updateFiling: db.prepare(
      'UPDATE contents SET title = @title, category_id = @category_id, topic_id = @topic_id WHERE org_id = @org_id AND content_id = @content_id',
    ),
    countChunks: db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM chunks WHERE org_id = ?'),
  };

  const removeChunks = (org: string, contentId: string): void => {
    const rows = s.chunkRowsOf.all(org, contentId);
    for (const row of rows) {
      s.deleteFts.run(row.rowid);
      bits.remove(org, row.rowid);
    }
    s.deleteChunks.run(org, contentId);
  };

  const writeFiling = (org: string, contentId: string, meta: Pick<ContentMeta, 'tags' | 'folder_path'>) => {
    s.deleteTags.run(org, contentId);
    s.deleteFolders.run(org, contentId);
    for (const tag of meta.tags) s.insertTag.run(org, contentId, tag);
    for (const folder of meta.folder_path) s.insertFolder.run(org, contentId, folder);
  };

  const indexVersion = (c: IndexedContent): void => {
    removeChunks(c.org_id, c.content_id);
    s.deleteContent.run(c.org_id, c.content_id);
    s.insertContent.run({ ...c });
    writeFiling(c.org_id, c.content_id, c);
    const filing = filingTokens(c.org_id, c);
    for (const chunk of c.chunks) {
      const heading = chunk.heading_path ?? [];
      const { lastInsertRowid } = s.insertChunk.run({
        org_id: c.org_id,
        content_id: c.content_id,
        version_id: c.version_id,
        chunk_index: chunk.chunk_index,
        text: chunk.text,
        heading_path: JSON.stringify(heading),
        page: chunk.page ?? null,
        sheet: chunk.sheet ?? null,
        slide: chunk.slide ?? null,
        embedding: chunk.embedding ? toBlob(chunk.embedding) : null,
      });
      if (chunk.embedding) bits.put(c.org_id, Number(lastInsertRowid), chunk.embedding);
      s.insertFts.run(lastInsertRowid, c.title, heading.join(' '), chunk.text, filing);
    }
  };

  const setVectors = (org: string, contentId: string, versionId: string, vectors: ChunkVector[]): boolean => {
    if (s.indexedVersion.get(org, contentId)?.version_id !== versionId) return false;
    const rowOf = new Map(s.chunkRowsOfVersion.all(org, contentId, versionId).map((r) => [r.chunk_index, r.rowid]));
    for (const v of vectors) {
      const rowid = rowOf.get(v.chunk_index);
      if (rowid === undefined) continue;
      s.setEmbedding.run(toBlob(v.embedding), rowid);
      bits.put(org, rowid, v.embedding);
    }
    return true;
  };

  const updateContent = db.transaction((org: string, contentId: string, meta: Partial<ContentMeta>): boolean => {
    const current = s.getContent.get(org, contentId);
    if (!current) return false;
    const next = {
      org_id: org,
      content_id: contentId,
      title: meta.title ?? current.title,
      category_id: meta.category_id === undefined ? current.category_id : meta.category_id,
      topic_id: meta.topic_id === undefined ? current.topic_id : meta.topic_id,
    };
    s.updateFiling.run(next);
    if (meta.tags) {
      s.deleteTags.run(org, contentId);
      for (const tag of meta.tags) s.insertTag.run(org, contentId, tag);
    }
    if (meta.folder_path) {
      s.deleteFolders.run(org, contentId);
      for (const folder of meta.folder_path) s.insertFolder.run(org, contentId, folder);
    }
    // Title and filing are columns of every chunk's FTS row: rewrite them.
    const filing = filingTokens(org, {
      category_id: next.category_id,
      topic_id: next.topic_id,
      tags: s.tagsOf.all(org, contentId).map((r) => r.tag),
      folder_path: s.foldersOf.all(org, contentId).map((r) => r.folder_id),
    });
    for (const row of s.chunkRowsOf.all(org, contentId)) {
      s.deleteFts.run(row.rowid);
      s.insertFts.run(row.rowid, next.title, (JSON.parse(row.heading_path) as string[]).join(' '), row.text, filing);
    }
    return true;
  });

  const removeContent = (org: string, contentId: string): boolean => {
    const existed = s.getContent.get(org, contentId) !== undefined;
    removeChunks(org, contentId);
    s.deleteContent.run(org, contentId);
    s.deleteTags.run(org, contentId);
    s.deleteFolders.run(org, contentId);
    return existed;
  };

  /** SQL conditions on `c` (chunks) and `ct` (contents) for the filters; null when nothing can match. */
  function filterSql(org: string, f: SearchFilters): { sql: string; params: unknown[]; needsContents: boolean; orgOnly: boolean } | null {
    if (f.folder_scope !== null && f.folder_scope.length === 0) return null;
    const parts = ['c.org_id = ?'];
    const params: unknown[] = [org];
    if (f.category_id) {
      parts.push('ct.category_id = ?');
      params.push(f.category_id);
    }
    if (f.topic_id) {
      parts.push('ct.topic_id = ?');
      params.push(f.topic_id);
    }
    const within = (table: string, column: string, values: string[]) => {
      parts.push(
        `c.content_id IN (SELECT content_id FROM ${table} WHERE org_id = ? AND ${column} IN (${values.map(() => '?').join(',')}))`,
      );
      params.push(org, ...values);
    };
    if (f.tags && f.tags.length > 0) within('content_tags', 'tag', f.tags);
    if (f.folder_ids && f.folder_ids.length > 0) within('content_folders', 'folder_id', f.folder_ids);
    if (f.folder_scope !== null) within('content_folders', 'folder_id', f.folder_scope);
    return { sql: parts.join(' AND '), params, needsContents: Boolean(f.category_id || f.topic_id), orgOnly: parts.length === 1 };
  }

  const COLUMNS = `c.rowid, c.content_id, c.version_id, c.chunk_index, c.text, c.heading_path, c.page, c.sheet, c.slide, ct.title`;
  const statementCache = new Map<string, Database.Statement>();
  const prepared = (sql: string) => {
    let st = statementCache.get(sql);
    if (!st) {
      st = db.prepare(sql);
      if (statementCache.size > 500) statementCache.clear();
      statementCache.set(sql, st);
    }
    return st;
  };

  /** Top rowids by BM25 from the full-text index alone (filters are in the expression), then the total. */
  function lexical(match: string, limit: number): { rows: ChunkRow[]; total: number } {
    const { ranked, total } = lexicalRanked(match, limit);
    return { rows: ranked.length === 0 ? [] : detailsOf(ranked), total };
  }

  /** Top rowids and BM25 scores only (fusion needs no more; details are read for the fused top only). */
  function lexicalRanked(match: string, limit: number): { ranked: { rowid: number; score: number }[]; total: number } {
    const ranked = prepared(
      `SELECT rowid, -bm25(chunks_fts, ${w.title}, ${w.heading}, ${w.text}, 0) AS score FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY score DESC LIMIT ?`,
    ).all(match, limit) as { rowid: number; score: number }[];
    if (ranked.length === 0) return { ranked, total: 0 };
    const total =
      ranked.length < limit
        ? ranked.length
        : (prepared('SELECT count(*) AS n FROM chunks_fts WHERE chunks_fts MATCH ?').get(match) as { n: number }).n;
    return { ranked, total };
  }

  /** Chunk rows with their content's title, in the order given. */
  function detailsOf(ranked: { rowid: number; score: number }[]): ChunkRow[] {
    const full = prepared(
      `SELECT ${COLUMNS}, 0 AS score FROM chunks c JOIN contents ct ON ct.org_id = c.org_id AND ct.content_id = c.content_id WHERE c.rowid IN (${ranked.map(() => '?').join(',')})`,
    ).all(...ranked.map((r) => r.rowid)) as ChunkRow[];
    const byRow = new Map(full.map((r) => [r.rowid, r]));
    return ranked.flatMap((r) => {
      const row = byRow.get(r.rowid);
      return row ? [{ ...row, score: r.score }] : [];
    });
  }

  /**
   * The best `limit` chunks by cosine to the query vector among those with vectors under the
   * filters: candidates by Hamming distance of sign bits (the organization's partition), then
   * exact cosine over their stored floats. A narrow filter (a folder scope, a tag) is scored
   * exactly over every vector it allows instead.
   */
  function denseRanked(
    org: string,
    vector: number[],
    where: { sql: string; params: unknown[]; needsContents: boolean; orgOnly: boolean },
    limit: number,
  ): { rowid: number; score: number }[] {
    const q = Float32Array.from(vector);
    const qNorm = Math.sqrt(dot(q, q));
    if (qNorm === 0 || limit <= 0 || !bits.ready()) return [];
    const top = topK(limit);
    const score = (rowid: number, blob: Buffer) => {
      const v = fromBlob(blob);
      const norm = Math.sqrt(dot(v, v));
      if (norm > 0) top.offer(rowid, dot(q, v) / (norm * qNorm));
    };
    const join = where.needsContents ? 'JOIN contents ct ON ct.org_id = c.org_id AND ct.content_id = c.content_id' : '';
    const want = Math.min(MAX_KNN, limit * OVERSAMPLE);
    let candidates: number[];
    if (where.orgOnly) candidates = bits.nearest(org, q, want);
    else {
      const allowed = (
        prepared(`SELECT count(*) AS n FROM chunks c ${join} WHERE c.embedding IS NOT NULL AND ${where.sql}`).get(...where.params) as {
          n: number;
        }
      ).n;
      if (allowed <= EXACT_SCAN_MAX) {
        const rows = prepared(`SELECT c.rowid, c.embedding FROM chunks c ${join} WHERE c.embedding IS NOT NULL AND ${where.sql}`);
        for (const r of rows.iterate(...where.params) as Iterable<{ rowid: number; embedding: Buffer }>) score(r.rowid, r.embedding);
        return top.sorted();
      }
      // A wide filter: the organization's nearest MAX_KNN by their bits, then only those the filter allows.
      const near = bits.nearest(org, q, MAX_KNN);
      candidates = [];
      for (let i = 0; i < near.length; i += 500) {
        const part = near.slice(i, i + 500);
        const ok = prepared(
          `SELECT c.rowid FROM chunks c ${join} WHERE c.rowid IN (${part.map(() => '?').join(',')}) AND ${where.sql}`,
        ).all(...part, ...where.params) as { rowid: number }[];
        candidates.push(...ok.map((r) => r.rowid));
      }
    }
    for (let i = 0; i < candidates.length; i += 500) {
      const part = candidates.slice(i, i + 500);
      const rows = prepared(
        `SELECT rowid, embedding FROM chunks WHERE rowid IN (${part.map(() => '?').join(',')}) AND embedding IS NOT NULL`,
      ).all(...part) as { rowid: number; embedding: Buffer }[];
      for (const r of rows) score(r.rowid, r.embedding);
    }
    return top.sorted();
  }

  const toHit = (r: ChunkRow, score: number): SearchHit => ({
    content_id: r.content_id,
    version_id: r.version_id,
    chunk_index: r.chunk_index,
    chunk_text: r.text,
    title: r.title,
    heading_path: JSON.parse(r.heading_path) as string[],
    ...(r.page !== null && { page: r.page }),
    ...(r.sheet !== null && { sheet: r.sheet }),
    ...(r.slide !== null && { slide: r.slide }),
    score,
    vector_id: vectorIdOf(r.version_id, r.chunk_index),
  });

  return {
    async indexVersion(content) {
      bits.write(() => indexVersion(content));
    },
    async setVectors(org, contentId, versionId, vectors) {
      return bits.write(() => setVectors(org, contentId, versionId, vectors));
    },
    async updateContent(org, contentId, meta) {
      return updateContent(org, contentId, meta);
    },
    async removeContent(org, contentId) {
      return bits.write(() => removeContent(org, contentId));
    },
    async search(req: SearchRequest) {
      const where = filterSql(req.org_id, req.filters);
      if (!where || req.limit <= 0) return { hits: [], total: 0 };
      const text = ftsQuery(req.query);
      const filing = filingMatch(req.org_id, req.filters)!;
      const pool = Math.max(req.limit, candidates);
      if (!req.vector) {
        const lex = text ? lexical(`${filing} AND {title heading body} : (${text})`, req.limit) : { rows: [], total: 0 };
        return { hits: lex.rows.map((r) => toHit(r, r.score)), total: lex.total };
      }
      const lexIds = text ? lexicalRanked(`${filing} AND {title heading body} : (${text})`, pool) : { ranked: [], total: 0 };
      const vec = denseRanked(req.org_id, req.vector, where, pool);
      const fused = fuseRanked(
        lexIds.ranked.map((r) => ({ item: r.rowid, score: r.score })),
        vec.map((r) => ({ item: r.rowid, score: r.score })),
        String,
        fusion,
      );
      const top = fused.slice(0, req.limit).map((f) => ({ rowid: f.item, score: f.score }));
      return {
        hits: top.length === 0 ? [] : detailsOf(top).map((r) => toHit(r, r.score)),
        total: Math.max(lexIds.total, fused.length),
      };
    },
    async countChunks(org) {
      return s.countChunks.get(org)!.n;
    },
    async clear() {
      bits.write(() => {
        db.exec('DELETE FROM chunks_fts; DELETE FROM chunks; DELETE FROM contents; DELETE FROM content_tags; DELETE FROM content_folders;');
        // The next vectors may come from another model, of other dimensions.
        bits.drop();
      });
    },
    async close() {
      await checkpoints?.unregister();
      db.close();
    },
  };
}
