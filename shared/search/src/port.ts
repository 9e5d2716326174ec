/**
 * The SearchIndex port: chunks of the current version of each content item,
 * searchable by BM25 over title, heading path and text, optionally by vector,
 * always inside one organization and filtered by filing and folder scope.
 * Adapters: sqlite/ (FTS5, embedded) and elasticsearch/ (distributed).
 */

export interface ChunkInput {
  chunk_index: number;
  text: string;
  heading_path?: string[];
  page?: number;
  sheet?: string;
  slide?: number;
  /**
   * The chunk's vector when it is known at indexing time (re-indexing, tests); otherwise
   * vectors come later through setVectors. Every chunk of a version has one or none does.
   */
  embedding?: number[];
}

/** The vector of one chunk of a version, written after its text was indexed. */
export interface ChunkVector {
  chunk_index: number;
  embedding: number[];
}

/** Where a content item is filed; searchable as filters. */
export interface ContentMeta {
  title: string;
  category_id: string | null;
  topic_id: string | null;
  tags: string[];
  /** Ids of every KB folder the content sits under, nearest last (empty: the root). */
  folder_path: string[];
}

/** One version of one content item, with all its chunks. */
export interface IndexedContent extends ContentMeta {
  org_id: string;
  content_id: string;
  version_id: string;
  chunks: ChunkInput[];
}

export interface SearchFilters {
  category_id?: string;
  topic_id?: string;
  /** Content carrying at least one of these tag ids. */
  tags?: string[];
  /** Content under at least one of these folders (the caller's own filter). */
  folder_ids?: string[];
  /**
   * The credential's folder scope: null is the whole knowledge base, [] nothing,
   * otherwise content under at least one of these folders. Always applied.
   */
  folder_scope: string[] | null;
}

export interface SearchRequest {
  org_id: string;
  /** The user's text, verbatim: the adapter parses it safely (never as query syntax). */
  query: string;
  /** Query embedding for dense retrieval over the chunks that have vectors; fused with BM25 when present. */
  vector?: number[];
  filters: SearchFilters;
  /** Hits to return, best first. */
  limit: number;
}

export interface SearchHit {
  content_id: string;
  version_id: string;
  chunk_index: number;
  chunk_text: string;
  title: string;
  heading_path: string[];
  page?: number;
  sheet?: string;
  slide?: number;
  /** Higher is better; BM25 when lexical only, RRF score when fused. */
  score: number;
  /** Stable id of the chunk's entry (and of its vector, when it has one). */
  vector_id: string;
}

export interface SearchResponse {
  hits: SearchHit[];
  /** Chunks matching the query under the same filters and scope (not only the returned ones). */
  total: number;
}

export interface SearchIndex {
  /** Replaces every chunk of the content with this version's (old versions retired atomically). */
  indexVersion(content: IndexedContent): Promise<void>;
  /**
   * Adds the vectors of a version's chunks to dense retrieval (its text was indexed before).
   * False, and nothing written, when that version is no longer the content's indexed one
   * (replaced or removed meanwhile): a stale version never gets vectors.
   */
  setVectors(org_id: string, content_id: string, version_id: string, vectors: ChunkVector[]): Promise<boolean>;
  /** Re-files an indexed content item; false when nothing of it is indexed. */
  updateContent(org_id: string, content_id: string, meta: Partial<ContentMeta>): Promise<boolean>;
  /** Removes the content and all its chunks; false when it was not indexed. */
  removeContent(org_id: string, content_id: string): Promise<boolean>;
  search(request: SearchRequest): Promise<SearchResponse>;
  /** Number of chunks indexed for the organization. */
  countChunks(org_id: string): Promise<number>;
  /** Drops everything (the re-index command rebuilds from the store). */
  clear(): Promise<void>;
  close(): Promise<void>;
}

export const vectorIdOf = (version_id: string, chunk_index: number): string => `${version_id}:${chunk_index}`;
