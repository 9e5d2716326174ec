import { errors } from '@kb/platform';
import { postJson, type OpenAiHttpOptions } from './openai-http.js';
import type { Embeddings } from './ports.js';

interface EmbeddingsResponse {
  data: { index: number; embedding: number[] }[];
}

/** Any OpenAI-compatible POST /embeddings endpoint; texts go in batches. */
export function createOpenAiEmbeddings(options: OpenAiHttpOptions & { batchSize?: number }): Embeddings {
  const batchSize = options.batchSize ?? 64;
  return {
    model: options.model,
    async embed(texts) {
      const out: number[][] = [];
      for (let i = 0; i < texts.length; i += batchSize) {
        const batch = texts.slice(i, i + batchSize);
        const res = await postJson<EmbeddingsResponse>(options, '/embeddings', { model: options.model, input: batch });
        if (!Array.isArray(res.data) || res.data.length !== batch.length)
          throw errors.downstream('/embeddings returned a wrong number of vectors');
        out.push(...[...res.data].sort((a, b) => a.index - b.index).map((d) => d.embedding));
      }
      return out;
    },
  };
}
