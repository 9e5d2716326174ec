import type { CallContext, RpcClient } from '@kb/rpc';
import type { HeadedPassage } from './drafting/passages.js';

/** What generation may draw on: the knowledge base's scope filters. */
export interface RetrievalScope {
  folder_ids: string[];
  tags: string[];
  category_ids: string[];
  /** One topic (the category/topic API's /generate). */
  topic_id?: string;
}

/** The knowledge base's passages for a query, within the caller's folder scope and the filters (port). */
export interface Retriever {
  retrieve(ctx: CallContext, query: string, scope: RetrievalScope, limit: number): Promise<HeadedPassage[]>;
}

interface ChunkMessage {
  content_id: string;
  version_id: string;
  chunk_index: number;
  chunk_text: string;
  score: number;
  title: string;
  heading_path?: string[];
}

/** The adapter over knowledge-base's Search.Retrieve RPC; one call per category when the scope names several. */
export function createKnowledgeBaseRetriever(search: RpcClient): Retriever {
  const toPassage = (c: ChunkMessage): HeadedPassage => ({
    content_id: c.content_id,
    version_id: c.version_id,
    chunk_id: `${c.version_id}:${c.chunk_index}`,
    text: c.chunk_text,
    title: c.title,
    score: c.score,
    // The headings the chunk sits under: drafting reads them as what its paragraphs answer.
    ...(c.heading_path?.length && { heading_path: c.heading_path }),
  });
  return {
    async retrieve(ctx, query, scope, limit) {
      const text = query.trim().slice(0, 2000);
      if (!text) return [];
      const base = {
        query: text,
        max_results: Math.min(100, Math.max(1, limit)),
        tags: scope.tags,
        folder_ids: scope.folder_ids,
        ...(scope.topic_id && { topic_id: scope.topic_id }),
      };
      const calls = scope.category_ids.length ? scope.category_ids.map((category_id) => ({ ...base, category_id })) : [base];
      const results = await Promise.all(calls.map((req) => search.call<{ results?: ChunkMessage[] }>('Retrieve', req, ctx)));
      const seen = new Set<string>();
      return results
        .flatMap((r) => r.results ?? [])
        .sort((a, b) => b.score - a.score)
        .filter((c) => {
          const id = `${c.version_id}:${c.chunk_index}`;
          if (seen.has(id)) return false;
          seen.add(id);
          return true;
        })
        .slice(0, limit)
        .map(toPassage);
    },
  };
}
