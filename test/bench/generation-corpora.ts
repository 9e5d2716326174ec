/**
 * The knowledge bases the generation benchmark drafts from, indexed in process
 * the way the service indexes them: the Fastify documentation (Markdown files
 * extracted and chunked by ingest's own code, heading paths kept) and the
 * SciFact train abstracts (one chunk each). Retrieval is the service's default:
 * hybrid (FTS5 BM25 fused with the bundled embedding model's vectors, each chunk
 * embedded from its title, headings and text as the vector worker does) when the
 * model is there, BM25 alone with EMBEDDINGS=none or without it.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import type { Embeddings, EvidencePassage } from '@kb/ai';
import { createLocalEmbeddings, missingModelFiles } from '@kb/ai/local';
import { createSqliteSearchIndex } from '@kb/search/sqlite';
import { DEFAULT_LIMITS, extractFile } from '@kb/ingest/extract';
// Ingest's chunker, as the processor runs it (not part of @kb/ingest's exports: a bench reads it from source).
import { chunkBlocks } from '../../services/ingest/src/domain/chunking.js';
// What the knowledge base's vector worker embeds for a chunk.
import { embeddingTextOf } from '../../services/knowledge-base/src/app/search-vectors.js';
import { diskCachedEmbeddings } from './cached-embeddings.js';

export const ORG = '00000000-0000-4000-8000-000000000000';
export type Retrieve = (query: string, limit: number) => Promise<EvidencePassage[]>;

export interface Corpus {
  name: string;
  documents: number;
  chunks: number;
  retrieve: Retrieve;
  /** Each chunk's heading path, by chunk id (what the index searched besides the text). */
  headings: Map<string, string[]>;
}

/** The default's embedding model (vectors cached under .cache/), or undefined with the reason retrieval is BM25 alone. */
export async function defaultEmbeddings(): Promise<{ embeddings?: Embeddings & { close(): Promise<void> }; why?: string }> {
  if (process.env.EMBEDDINGS === 'none') return { why: 'EMBEDDINGS=none' };
  const modelDir = process.env.EMBEDDINGS_MODEL_DIR ?? join(import.meta.dirname, '../../.models/bge-small-en-v1.5-q');
  const missing = missingModelFiles(modelDir);
  if (missing) return { why: missing };
  const model = await createLocalEmbeddings({ modelDir, threads: Number(process.env.EMBEDDINGS_THREADS ?? 2) });
  const cached = diskCachedEmbeddings(model, join(import.meta.dirname, '../../.cache/generation-bench-embeddings.bin'));
  return { embeddings: { ...cached, close: () => model.close() } };
}

/** A chunk as the index is given it, with its vector when retrieval is hybrid. */
async function withVectors<C extends { text: string; heading_path?: string[] }>(
  title: string,
  chunks: C[],
  embeddings: Embeddings | undefined,
): Promise<(C & { embedding?: number[] })[]> {
  if (!embeddings) return chunks;
  const vectors = await embeddings.embed(
    chunks.map((c) => embeddingTextOf(title, c)),
    'document',
  );
  return chunks.map((c, i) => ({ ...c, embedding: vectors[i]! }));
}

/** The Fastify documentation shipped in node_modules/fastify/docs (Reference and Guides). */
export async function fastifyDocs(embeddings?: Embeddings): Promise<Corpus> {
  const root = join(dirname(createRequire(import.meta.url).resolve('fastify/package.json')), 'docs');
  const files = ['Reference', 'Guides'].flatMap((dir) =>
    readdirSync(join(root, dir))
      .filter((f) => f.endsWith('.md'))
      .map((f) => join(root, dir, f)),
  );
  const index = createSqliteSearchIndex({ path: ':memory:' });
  const headings = new Map<string, string[]>();
  let chunks = 0;
  for (const [i, file] of files.entries()) {
    const id = `00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`;
    const { blocks } = await extractFile({ bytes: readFileSync(file), filename: basename(file) }, DEFAULT_LIMITS);
    const chunked = chunkBlocks(blocks, { targetChars: 1200, overlapChars: 150 });
    for (const c of chunked) headings.set(`${id}:${c.chunk_index}`, c.heading_path ?? []);
    chunks += chunked.length;
    const title = basename(file, '.md');
    await index.indexVersion({
      org_id: ORG,
      content_id: id,
      version_id: id,
      title,
      category_id: null,
      topic_id: null,
      tags: [],
      folder_path: [],
      chunks: await withVectors(
        title,
        chunked.map((c) => ({ chunk_index: c.chunk_index, text: c.text, ...(c.heading_path && { heading_path: c.heading_path }) })),
        embeddings,
      ),
    });
  }
  return { name: 'Fastify docs', documents: files.length, chunks, retrieve: retrieverOf(index, embeddings), headings };
}

/** SciFact abstracts, one chunk each, titled as ingest titles them. */
export async function scifactAbstracts(
  corpus: { _id: string; title: string; text: string }[],
  embeddings?: Embeddings,
): Promise<{ index: ReturnType<typeof createSqliteSearchIndex>; retrieve: Retrieve }> {
  const index = createSqliteSearchIndex({ path: ':memory:' });
  const BATCH = 64;
  for (let i = 0; i < corpus.length; i += BATCH) {
    const docs = corpus.slice(i, i + BATCH);
    const vectors = embeddings
      ? await embeddings.embed(
          docs.map((d) => embeddingTextOf(d.title, { text: d.text })),
          'document',
        )
      : [];
    for (const [k, d] of docs.entries())
      await index.indexVersion({
        org_id: ORG,
        content_id: d._id,
        version_id: d._id,
        title: d.title,
        category_id: null,
        topic_id: null,
        tags: [],
        folder_path: [],
        chunks: [{ chunk_index: 0, text: d.text, ...(vectors[k] && { embedding: vectors[k] }) }],
      });
  }
  return { index, retrieve: retrieverOf(index, embeddings) };
}

export function retrieverOf(index: ReturnType<typeof createSqliteSearchIndex>, embeddings?: Embeddings): Retrieve {
  return async (query, limit) => {
    const text = query.slice(0, 2000);
    // The query embedded as the knowledge base's search embeds it (the model's retrieval instruction).
    const vector = embeddings ? (await embeddings.embed([text], 'query'))[0] : undefined;
    const res = await index.search({ org_id: ORG, query: text, filters: { folder_scope: null }, limit, ...(vector && { vector }) });
    return res.hits.map((h) => ({
      content_id: h.content_id,
      version_id: h.version_id,
      chunk_id: `${h.version_id}:${h.chunk_index}`,
      text: h.chunk_text,
      title: h.title,
      score: h.score,
      ...(h.heading_path?.length && { heading_path: h.heading_path }),
    }));
  };
}
