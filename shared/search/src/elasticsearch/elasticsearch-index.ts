import { Client } from '@elastic/elasticsearch';
import { queryTerms } from '../analysis.js';
import { reciprocalRankFusion } from '../fusion.js';
import { vectorIdOf, type ContentMeta, type IndexedContent, type SearchFilters, type SearchHit, type SearchIndex } from '../port.js';

export interface ElasticsearchIndexOptions {
  url: string;
  /**
   * One index per deployment; every document carries org_id and every query
   * filters on it (cheaper than an index per organization, which Elasticsearch
   * pays for in shards and mappings; a very large tenant can get its own
   * deployment index name).
   */
  index: string;
  /** Refresh after writes so the next search sees them (tests, small deployments). */
  refresh?: boolean;
  candidates?: number;
}

interface ChunkDoc {
  org_id: string;
  content_id: string;
  version_id: string;
  chunk_index: number;
  title: string;
  heading: string;
  heading_path: string[];
  body: string;
  page?: number;
  sheet?: string;
  slide?: number;
  category_id: string | null;
  topic_id: string | null;
  tags: string[];
  folder_path: string[];
  embedding?: number[];
}

/*
 * Text is analyzed like the embedded index's porter tokenizer (lowercase, accents
 * folded, Porter stems) and without a stopword filter: stopwords are dropped from
 * the query by the shared queryTerms, which keeps them when nothing else is left
 * (a question made only of stopwords still finds something, as on SQLite).
 */
const SETTINGS = {
  analysis: {
    analyzer: { kb_text: { type: 'custom', tokenizer: 'standard', filter: ['lowercase', 'asciifolding', 'porter_stem'] } },
  },
} as const;

const MAPPINGS = {
  properties: {
    org_id: { type: 'keyword' },
    content_id: { type: 'keyword' },
    version_id: { type: 'keyword' },
    chunk_index: { type: 'integer' },
    title: { type: 'text', analyzer: 'kb_text' },
    heading: { type: 'text', analyzer: 'kb_text' },
    heading_path: { type: 'keyword', index: false },
    body: { type: 'text', analyzer: 'kb_text' },
    page: { type: 'integer', index: false },
    sheet: { type: 'keyword', index: false },
    slide: { type: 'integer', index: false },
    category_id: { type: 'keyword' },
    topic_id: { type: 'keyword' },
    tags: { type: 'keyword' },
    folder_path: { type: 'keyword' },
    // dims are fixed by the first vector written (one embedding model per index; re-index on change).
    embedding: { type: 'dense_vector', index: true, similarity: 'cosine' },
  },
} as const;

/** SearchIndex on Elasticsearch: BM25 (porter-stemmed text) over title^2, heading, body, plus dense_vector kNN, fused by RRF. */
export function createElasticsearchIndex(options: ElasticsearchIndexOptions): SearchIndex {
  const client = new Client({ node: options.url });
  const index = options.index;
  const refresh = options.refresh ?? false;
  const candidates = options.candidates ?? 100;
  let ready: Promise<void> | undefined;

  const ensureIndex = () =>
    (ready ??= (async () => {
      const exists = await client.indices.exists({ index });
      if (!exists) {
        await client.indices
          .create({ index, settings: SETTINGS as never, mappings: MAPPINGS as never })
          .catch((err: { meta?: { body?: { error?: { type?: string } } } }) => {
            if (err.meta?.body?.error?.type !== 'resource_already_exists_exception') throw err;
          });
      }
    })().catch((err) => {
      ready = undefined;
      throw err;
    }));

  const ofContent = (org: string, contentId: string) => ({
    bool: { filter: [{ term: { org_id: org } }, { term: { content_id: contentId } }] },
  });

  function filterClauses(org: string, f: SearchFilters): object[] | null {
    if (f.folder_scope !== null && f.folder_scope.length === 0) return null;
    const out: object[] = [{ term: { org_id: org } }];
    if (f.category_id) out.push({ term: { category_id: f.category_id } });
    if (f.topic_id) out.push({ term: { topic_id: f.topic_id } });
    if (f.tags?.length) out.push({ terms: { tags: f.tags } });
    if (f.folder_ids?.length) out.push({ terms: { folder_path: f.folder_ids } });
    if (f.folder_scope !== null) out.push({ terms: { folder_path: f.folder_scope } });
    return out;
  }

  const toHit = (d: ChunkDoc, score: number): SearchHit => ({
    content_id: d.content_id,
    version_id: d.version_id,
    chunk_index: d.chunk_index,
    chunk_text: d.body,
    title: d.title,
    heading_path: d.heading_path,
    ...(d.page !== undefined && d.page !== null && { page: d.page }),
    ...(d.sheet !== undefined && d.sheet !== null && { sheet: d.sheet }),
    ...(d.slide !== undefined && d.slide !== null && { slide: d.slide }),
    score,
    vector_id: vectorIdOf(d.version_id, d.chunk_index),
  });

  return {
    async indexVersion(c: IndexedContent) {
      await ensureIndex();
      await client.deleteByQuery({ index, query: ofContent(c.org_id, c.content_id), refresh: true, conflicts: 'proceed' });
      if (c.chunks.length === 0) return;
      const operations = c.chunks.flatMap((chunk) => {
        const doc: ChunkDoc = {
          org_id: c.org_id,
          content_id: c.content_id,
          version_id: c.version_id,
          chunk_index: chunk.chunk_index,
          title: c.title,
          heading: (chunk.heading_path ?? []).join(' '),
          heading_path: chunk.heading_path ?? [],
          body: chunk.text,
          ...(chunk.page !== undefined && { page: chunk.page }),
          ...(chunk.sheet !== undefined && { sheet: chunk.sheet }),
          ...(chunk.slide !== undefined && { slide: chunk.slide }),
          category_id: c.category_id,
          topic_id: c.topic_id,
          tags: c.tags,
          folder_path: c.folder_path,
          ...(chunk.embedding && { embedding: chunk.embedding }),
        };
        return [{ index: { _index: index, _id: `${c.org_id}:${c.content_id}:${chunk.chunk_index}` } }, doc];
      });
      const res = await client.bulk({ operations, refresh });
      if (res.errors) throw new Error('Elasticsearch bulk indexing failed for some chunks');
    },

    async updateContent(org, contentId, meta: Partial<ContentMeta>) {
      await ensureIndex();
      const params: Record<string, unknown> = {};
      const lines: string[] = [];
      for (const key of ['title', 'category_id', 'topic_id', 'tags', 'folder_path'] as const) {
        if (meta[key] === undefined) continue;
        params[key] = meta[key];
        lines.push(`ctx._source.${key} = params.${key};`);
      }
      const res = await client.updateByQuery({
        index,
        query: ofContent(org, contentId),
        script: { source: lines.join(' ') || 'ctx.op = "noop"', params },
        refresh: true,
        conflicts: 'proceed',
      });
      return (res.total ?? 0) > 0;
    },

    async removeContent(org, contentId) {
      await ensureIndex();
      const res = await client.deleteByQuery({ index, query: ofContent(org, contentId), refresh: true, conflicts: 'proceed' });
      return (res.deleted ?? 0) > 0;
    },

    async search(req) {
      await ensureIndex();
      const filter = filterClauses(req.org_id, req.filters);
      // The same terms as the embedded index: content words, OR-ed, never query syntax.
      const terms = queryTerms(req.query);
      if (!filter || req.limit <= 0 || (terms.length === 0 && !req.vector)) return { hits: [], total: 0 };
      const pool = req.vector ? Math.max(req.limit, candidates) : req.limit;
      const lexical =
        terms.length === 0
          ? undefined
          : await client.search<ChunkDoc>({
              index,
              size: pool,
              track_total_hits: true,
              _source: { excludes: ['embedding'] },
              query: {
                bool: {
                  // multi_match takes the text as text: no query syntax reaches the parser; OR of the words.
                  must: [
                    {
                      multi_match: { query: terms.join(' '), fields: ['title^2', 'heading', 'body'], type: 'most_fields', operator: 'or' },
                    },
                  ],
                  filter,
                },
              },
            });
      const lexHits = (lexical?.hits.hits ?? []).map((h) => ({ id: h._id!, doc: h._source!, score: h._score ?? 0 }));
      const total = typeof lexical?.hits.total === 'number' ? lexical.hits.total : (lexical?.hits.total?.value ?? 0);
      if (!req.vector) return { hits: lexHits.map((h) => toHit(h.doc, h.score)), total };
      const dense = await client.search<ChunkDoc>({
        index,
        size: pool,
        _source: { excludes: ['embedding'] },
        knn: { field: 'embedding', query_vector: req.vector, k: pool, num_candidates: pool * 2, filter: { bool: { filter } } },
      });
      const denseHits = dense.hits.hits.map((h) => ({ id: h._id!, doc: h._source!, score: h._score ?? 0 }));
      const fused = reciprocalRankFusion([lexHits, denseHits], (h) => h.id);
      return { hits: fused.slice(0, req.limit).map((f) => toHit(f.item.doc, f.score)), total: Math.max(total, fused.length) };
    },

    async countChunks(org) {
      await ensureIndex();
      await client.indices.refresh({ index });
      return (await client.count({ index, query: { term: { org_id: org } } })).count;
    },

    async clear() {
      await ensureIndex();
      await client.deleteByQuery({ index, query: { match_all: {} }, refresh: true, conflicts: 'proceed' });
    },

    async close() {
      await client.close();
    },
  };
}
