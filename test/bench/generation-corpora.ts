/**
 * The knowledge bases the generation benchmark drafts from, indexed in process
 * the way the service indexes them: the Fastify documentation (Markdown files
 * extracted and chunked by ingest's own code, heading paths kept) and the
 * SciFact train abstracts (one chunk each). Retrieval is the FTS5 index.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import type { EvidencePassage } from '@kb/ai';
import { createSqliteSearchIndex } from '@kb/search/sqlite';
import { DEFAULT_LIMITS, extractFile } from '@kb/ingest/extract';
// Ingest's chunker, as the processor runs it (not part of @kb/ingest's exports: a bench reads it from source).
import { chunkBlocks } from '../../services/ingest/src/domain/chunking.js';

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

/** The Fastify documentation shipped in node_modules/fastify/docs (Reference and Guides). */
export async function fastifyDocs(): Promise<Corpus> {
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
    await index.indexVersion({
      org_id: ORG,
      content_id: id,
      version_id: id,
      title: basename(file, '.md'),
      category_id: null,
      topic_id: null,
      tags: [],
      folder_path: [],
      chunks: chunked.map((c) => ({ chunk_index: c.chunk_index, text: c.text, ...(c.heading_path && { heading_path: c.heading_path }) })),
    });
  }
  return { name: 'Fastify docs', documents: files.length, chunks, retrieve: retrieverOf(index), headings };
}

export function retrieverOf(index: ReturnType<typeof createSqliteSearchIndex>): Retrieve {
  return async (query, limit) => {
    const res = await index.search({ org_id: ORG, query: query.slice(0, 2000), filters: { folder_scope: null }, limit });
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
