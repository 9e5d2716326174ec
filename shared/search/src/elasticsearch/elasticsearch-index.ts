import { Client } from '@elastic/elasticsearch';
import { queryTerms, stem, words } from '../analysis.js';
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
  /**
   * How a new index analyzes text; default: Porter stemming by the node where it has
   * analysis-common, client stems where it has not. An existing index keeps its own.
   */
  analysis?: ElasticsearchAnalysis;
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
  title_stems?: string;
  heading_stems?: string;
  body_stems?: string;
}

/**
 * How an index analyzes text, fixed when it is created (kept in its mapping's _meta):
 *
 * - `porter`: like the embedded index's porter tokenizer (lowercase, accents folded,
 *   Porter stems), by Elasticsearch's analysis-common module (porter_stem, asciifolding).
 * - `client-stems`: for a node without that module (the server core alone): the adapter
 *   folds, lowercases and Porter-stems the words itself (analysis.ts, the stemmer query
 *   parsing uses) and the node indexes those stems with the core's standard tokenizer
 *   and lowercase filter, in `*_stems` fields beside the original text.
 *
 * Neither has a stopword filter: stopwords are dropped from the query by the shared
 * queryTerms, which keeps them when nothing else is left (a question made only of
 * stopwords still finds something, as on SQLite).
 */
export type ElasticsearchAnalysis = 'porter' | 'client-stems';

const PORTER_SETTINGS = {
  analysis: {
    analyzer: { kb_text: { type: 'custom', tokenizer: 'standard', filter: ['lowercase', 'asciifolding', 'porter_stem'] } },
  },
} as const;
/** Only what every node has: the standard tokenizer and the lowercase filter. */
const CORE_SETTINGS = {
  analysis: { analyzer: { kb_text: { type: 'custom', tokenizer: 'standard', filter: ['lowercase'] } } },
} as const;

/** The text fields a query searches (the title counts double). */
const TEXT_FIELDS = ['title', 'heading', 'body'] as const;
type TextField = (typeof TEXT_FIELDS)[number];
const stemsField = (field: TextField) => `${field}_stems` as const;

/** Folded, lowercased Porter stems of a text, space-separated: what a `*_stems` field holds. */
export const stemsOf = (text: string): string => words(text).map(stem).join(' ');

function mappingsFor(analysis: ElasticsearchAnalysis) {
  const text = { type: 'text', analyzer: 'kb_text' };
  const stems = analysis === 'client-stems';
  return {
    _meta: { kb_analysis: analysis },
    properties: {
      org_id: { type: 'keyword' },
      content_id: { type: 'keyword' },
      version_id: { type: 'keyword' },
      chunk_index: { type: 'integer' },
      // With client stems the text is kept for the hits and its stems are what is searched.
      ...Object.fromEntries(TEXT_FIELDS.map((f) => [f, stems ? { type: 'text', index: false } : text])),
      ...(stems ? Object.fromEntries(TEXT_FIELDS.map((f) => [stemsField(f), text])) : {}),
      heading_path: { type: 'keyword', index: false },
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
  };
}

interface EsError {
  meta?: { statusCode?: number; body?: { error?: { type?: string; reason?: string } } };
}
const errorOf = (err: unknown) => (err as EsError).meta?.body?.error;
/** The node lacks an analysis component the settings name (no analysis-common module). */
const isMissingAnalysis = (err: unknown) =>
  errorOf(err)?.type === 'illegal_argument_exception' &&
  /failed to find (global )?(filter|analyzer|tokenizer)/.test(errorOf(err)?.reason ?? '');

const STEMS_FIELDS = [`${stemsField('title')}^2`, stemsField('heading'), stemsField('body')];
const STEMS_EXCLUDED = TEXT_FIELDS.map(stemsField);

/** Chunks listed per request when the adapter walks a content item's chunks. */
const PAGE = 1000;

/**
 * SearchIndex on Elasticsearch: BM25 (Porter-stemmed text) over title^2, heading, body, plus
 * dense_vector kNN, fused by RRF. It needs only the server core: the analysis is chosen when the
 * index is created (ElasticsearchAnalysis), and chunks are removed and re-filed by listing them
 * and writing in bulk, not by _delete_by_query / _update_by_query (the reindex module) or scripts
 * (painless).
 */
export function createElasticsearchIndex(options: ElasticsearchIndexOptions): SearchIndex & {
  /** How the index analyzes text (creating it if it does not exist). */
  analysis(): Promise<ElasticsearchAnalysis>;
} {
  const client = new Client({ node: options.url });
  const index = options.index;
  const refresh = options.refresh ?? false;
  const candidates = options.candidates ?? 100;
  let ready: Promise<ElasticsearchAnalysis> | undefined;

  /** Creates the index with Porter stemming by the node, or with client stems where the node cannot stem. */
  async function create(): Promise<void> {
    const attempt = (analysis: ElasticsearchAnalysis) =>
      client.indices.create({
        index,
        settings: (analysis === 'porter' ? PORTER_SETTINGS : CORE_SETTINGS) as never,
        mappings: mappingsFor(analysis) as never,
      });
    try {
      await attempt(options.analysis ?? 'porter');
    } catch (err) {
      if (errorOf(err)?.type === 'resource_already_exists_exception') return;
      if (options.analysis !== undefined || !isMissingAnalysis(err)) throw err;
      await attempt('client-stems').catch((again: unknown) => {
        if (errorOf(again)?.type !== 'resource_already_exists_exception') throw again;
      });
    }
  }

  const ensureIndex = () =>
    (ready ??= (async () => {
      if (!(await client.indices.exists({ index }))) await create();
      const mapping = await client.indices.getMapping({ index });
      const meta = Object.values(mapping)[0]?.mappings?._meta as { kb_analysis?: ElasticsearchAnalysis } | undefined;
      // An index made before the choice was recorded analyzes with porter_stem.
      return meta?.kb_analysis ?? 'porter';
    })().catch((err) => {
      ready = undefined;
      throw err;
    }));

  /** The ids of a content item's chunks, a page at a time (in chunk order). */
  async function* chunkIds(org: string, contentId: string): AsyncGenerator<string[]> {
    let after: number | undefined;
    for (;;) {
      const res = await client.search({
        index,
        size: PAGE,
        _source: false,
        query: ofContent(org, contentId),
        sort: [{ chunk_index: 'asc' }],
        ...(after !== undefined && { search_after: [after] }),
      });
      const hits = res.hits.hits;
      if (hits.length === 0) return;
      yield hits.map((h) => h._id!);
      if (hits.length < PAGE) return;
      after = hits[hits.length - 1]!.sort![0] as number;
    }
  }

  /** Runs bulk operations; a missing document (already gone) is not a failure. */
  async function bulk(operations: object[], refreshAfter: boolean | 'wait_for' = refresh): Promise<number> {
    if (operations.length === 0) return 0;
    const res = await client.bulk({ operations, refresh: refreshAfter });
    let done = 0;
    for (const item of res.items) {
      const result = Object.values(item)[0]!;
      if (result.status === 404) continue;
      if (result.error) throw new Error(`Elasticsearch bulk operation failed: ${result.error.type}: ${result.error.reason}`);
      done++;
    }
    return done;
  }

  /** Deletes every chunk of a content item; the number deleted. */
  async function deleteChunks(org: string, contentId: string): Promise<number> {
    // Listing sees what the last refresh made visible, as _delete_by_query would.
    const ids: string[] = [];
    for await (const page of chunkIds(org, contentId)) ids.push(...page);
    return bulk(
      ids.map((id) => ({ delete: { _index: index, _id: id } })),
      true,
    );
  }

  const chunkId = (org: string, contentId: string, chunkIndex: number) => `${org}:${contentId}:${chunkIndex}`;
  const ofVersion = (org: string, contentId: string, versionId: string) => ({
    bool: { filter: [{ term: { org_id: org } }, { term: { content_id: contentId } }, { term: { version_id: versionId } }] },
  });
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
      const analysis = await ensureIndex();
      await deleteChunks(c.org_id, c.content_id);
      if (c.chunks.length === 0) return;
      const titleStems = analysis === 'client-stems' ? stemsOf(c.title) : '';
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
        if (analysis === 'client-stems') {
          doc.title_stems = titleStems;
          doc.heading_stems = stemsOf(doc.heading);
          doc.body_stems = stemsOf(doc.body);
        }
        return [{ index: { _index: index, _id: chunkId(c.org_id, c.content_id, chunk.chunk_index) } }, doc];
      });
      await bulk(operations);
    },

    async setVectors(org, contentId, versionId, vectors) {
      await ensureIndex();
      if (vectors.length === 0) return (await client.count({ index, query: ofVersion(org, contentId, versionId) })).count > 0;
      // Real-time gets by id (no refresh needed), each with its sequence number.
      const got = await client.mget<Pick<ChunkDoc, 'version_id'>>({
        index,
        ids: vectors.map((v) => chunkId(org, contentId, v.chunk_index)),
        _source: ['version_id'],
      });
      const current = got.docs.map((d) => ('found' in d && d.found && d._source?.version_id === versionId ? d : undefined));
      if (current.every((d) => d === undefined)) return false;
      // Each update holds only if the chunk is still the one read (a new version reuses the ids): never a stale vector.
      const operations = vectors.flatMap((v, i) => {
        const d = current[i];
        return d
          ? [
              { update: { _index: index, _id: d._id, if_seq_no: d._seq_no!, if_primary_term: d._primary_term! } },
              { doc: { embedding: v.embedding } },
            ]
          : [];
      });
      const out = await client.bulk({ operations, refresh });
      const results = out.items.map((i) => Object.values(i)[0]!);
      const failed = results.find((r) => r.error && r.status !== 409 && r.status !== 404);
      if (failed?.error) throw new Error(`Elasticsearch bulk operation failed: ${failed.error.type}: ${failed.error.reason}`);
      return results.every((r) => r.status !== 409 && r.status !== 404);
    },

    async updateContent(org, contentId, meta: Partial<ContentMeta>) {
      const analysis = await ensureIndex();
      const doc: Partial<ChunkDoc> = {};
      for (const key of ['title', 'category_id', 'topic_id', 'tags', 'folder_path'] as const) {
        if (meta[key] !== undefined) (doc as Record<string, unknown>)[key] = meta[key];
      }
      if (meta.title !== undefined && analysis === 'client-stems') doc.title_stems = stemsOf(meta.title);
      let found = false;
      for await (const ids of chunkIds(org, contentId)) {
        found = true;
        if (Object.keys(doc).length === 0) continue;
        await bulk(
          ids.flatMap((id) => [{ update: { _index: index, _id: id } }, { doc }]),
          true,
        );
      }
      return found;
    },

    async removeContent(org, contentId) {
      await ensureIndex();
      return (await deleteChunks(org, contentId)) > 0;
    },

    async search(req) {
      const analysis = await ensureIndex();
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
              _source: { excludes: ['embedding', ...STEMS_EXCLUDED] },
              query: {
                bool: {
                  // combined_fields takes the text as text (no query syntax reaches the parser; OR of the
                  // words) and scores the fields as one weighted field (BM25F), as FTS5's bm25() with
                  // column weights does on the embedded index.
                  must: [
                    {
                      combined_fields:
                        analysis === 'client-stems'
                          ? { query: terms.map(stem).join(' '), fields: STEMS_FIELDS, operator: 'or' }
                          : { query: terms.join(' '), fields: ['title^2', 'heading', 'body'], operator: 'or' },
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
        _source: { excludes: ['embedding', ...STEMS_EXCLUDED] },
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
      // A page at a time, each deleted and refreshed before the next is listed (the index stays, for other readers).
      for (;;) {
        const res = await client.search({ index, size: PAGE, _source: false, query: { match_all: {} } });
        if (res.hits.hits.length === 0) return;
        await bulk(
          res.hits.hits.map((h) => ({ delete: { _index: index, _id: h._id! } })),
          true,
        );
      }
    },

    async close() {
      await client.close();
    },

    analysis: ensureIndex,
  };
}
