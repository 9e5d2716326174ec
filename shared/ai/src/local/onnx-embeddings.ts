import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { InferenceSession } from 'onnxruntime-node';
import type { EmbeddingPurpose, Embeddings } from '../ports.js';
import { createWordPieceTokenizer, wordPieceSpecOf, type WordPieceTokenizer } from './wordpiece.js';
import { padBatch, poolHidden, type Pooling } from './pooling.js';
import { startDocumentWorker } from './document-worker.js';

/**
 * A sentence-embedding model run in-process with ONNX Runtime (CPU): the files
 * scripts/fetch-embedding-model.sh unpacks (model.onnx, tokenizer.json and
 * config.json with pooling, query prefix and token budget). Nothing is
 * downloaded at run time.
 */
export interface LocalEmbeddingsOptions {
  /** Folder with model.onnx, tokenizer.json and (optional) config.json. */
  modelDir: string;
  /** ONNX Runtime intra-op threads of the indexing session (default 1: the machine is shared with the service); queries use one. */
  threads?: number;
  /** Texts per inference call when indexing (default 8; texts are sorted by length so padding stays small). */
  batchSize?: number;
  /**
   * Documents are embedded on a worker thread of their own, at this nice value (Linux, 0 to 19:
   * higher yields the CPU sooner), instead of on the calling thread. ONNX Runtime's Node binding
   * runs inference synchronously, so a batch embedded on the event loop's thread stalls everything
   * else the process serves (requests, consumers, heartbeats) for its whole duration; on its own
   * thread at a lower priority, indexing takes only the CPU that request work leaves. Queries stay
   * on the calling thread (a few tokens, and the caller waits for them). Undefined: documents are
   * embedded on the calling thread as well.
   */
  documentWorker?: { nice: number };
}

export interface ModelConfig {
  name: string;
  pooling: Pooling;
  /** Prepended to queries (BGE's retrieval instruction); documents are embedded as they are. */
  query_prefix: string;
  max_tokens: number;
}

export const MODEL_FILES = ['model.onnx', 'tokenizer.json'] as const;

/** Why the model folder cannot be used, or null when it has every file. */
export function missingModelFiles(modelDir: string): string | null {
  const missing = MODEL_FILES.filter((f) => !existsSync(join(modelDir, f)));
  return missing.length ? `${missing.join(', ')} not in ${modelDir} (run scripts/fetch-embedding-model.sh)` : null;
}

export interface LocalEmbeddings extends Embeddings {
  readonly dimensions: number;
  close(): Promise<void>;
}

/** One inference at a time per session: calls queue instead of competing for the cores. */
function serial() {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(fn: () => Promise<T>): Promise<T> => {
    const run = tail.then(fn, fn);
    tail = run.catch(() => undefined);
    return run;
  };
}

/** The model loaded with a session for each purpose asked (the worker thread holds only the documents' one). */
export interface LoadedModel {
  config: ModelConfig;
  embed(texts: string[], purpose: EmbeddingPurpose): Promise<number[][]>;
  release(): Promise<void>;
}

export async function loadModel(
  options: Pick<LocalEmbeddingsOptions, 'modelDir' | 'threads' | 'batchSize'>,
  purposes: readonly EmbeddingPurpose[],
): Promise<LoadedModel> {
  const why = missingModelFiles(options.modelDir);
  if (why) throw new Error(`local embeddings: ${why}`);
  const ort = await import('onnxruntime-node');
  const configPath = join(options.modelDir, 'config.json');
  const fileConfig = existsSync(configPath) ? (JSON.parse(await readFile(configPath, 'utf8')) as Partial<ModelConfig>) : {};
  const config: ModelConfig = {
    name: fileConfig.name ?? options.modelDir.split('/').filter(Boolean).pop() ?? 'local',
    pooling: fileConfig.pooling ?? 'mean',
    query_prefix: fileConfig.query_prefix ?? '',
    max_tokens: fileConfig.max_tokens ?? 512,
  };
  const tokenizer: WordPieceTokenizer = createWordPieceTokenizer(
    wordPieceSpecOf(JSON.parse(await readFile(join(options.modelDir, 'tokenizer.json'), 'utf8'))),
  );
  const modelBytes = await readFile(join(options.modelDir, 'model.onnx'));
  const sessionOptions = (threads: number): InferenceSession.SessionOptions => ({
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    // Idle pool threads sleep instead of spinning: they would take the cores from the service between calls.
    extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
  });
  // Queries get a session of their own (one thread: a query is a few tokens) so that a query never waits behind a batch being indexed.
  const sessions = new Map<EmbeddingPurpose, InferenceSession>();
  for (const purpose of purposes)
    sessions.set(
      purpose,
      await ort.InferenceSession.create(modelBytes, sessionOptions(purpose === 'document' ? (options.threads ?? 1) : 1)),
    );
  const queue = { document: serial(), query: serial() };
  const batchSize = options.batchSize ?? 8;

  async function run(session: InferenceSession, rows: number[][]): Promise<number[][]> {
    const { ids, mask, types, seq } = padBatch(rows, tokenizer.spec.padId);
    const shape = [rows.length, seq];
    const feeds: Record<string, InstanceType<typeof ort.Tensor>> = {
      input_ids: new ort.Tensor('int64', ids, shape),
      attention_mask: new ort.Tensor('int64', mask, shape),
    };
    if (session.inputNames.includes('token_type_ids')) feeds.token_type_ids = new ort.Tensor('int64', types, shape);
    const out = await session.run(feeds);
    const hidden = out[session.outputNames[0]!]!;
    const [, , dim] = hidden.dims as number[];
    return poolHidden(hidden.data as Float32Array, mask, { batch: rows.length, seq, dim: dim! }, config.pooling);
  }

  async function embed(texts: string[], purpose: EmbeddingPurpose): Promise<number[][]> {
    const session = sessions.get(purpose);
    if (!session) throw new Error(`local embeddings: no ${purpose} session here`);
    const rows = texts.map((t) => tokenizer.encode(purpose === 'query' ? config.query_prefix + t : t, config.max_tokens).ids);
    const order = rows.map((_, i) => i).sort((a, b) => rows[a]!.length - rows[b]!.length);
    const out = new Array<number[]>(texts.length);
    for (let i = 0; i < order.length; i += batchSize) {
      const part = order.slice(i, i + batchSize);
      const vectors = await queue[purpose](() =>
        run(
          session,
          part.map((j) => rows[j]!),
        ),
      );
      part.forEach((j, k) => (out[j] = vectors[k]!));
    }
    return out;
  }

  return {
    config,
    embed,
    async release() {
      await Promise.all([...sessions.values()].map((x) => x.release()));
    },
  };
}

export async function createLocalEmbeddings(options: LocalEmbeddingsOptions): Promise<LocalEmbeddings> {
  if (!options.documentWorker) {
    const model = await loadModel(options, ['document', 'query']);
    const dimensions = (await model.embed(['dimension probe'], 'query'))[0]!.length;
    return {
      model: model.config.name,
      dimensions,
      embed: (texts, purpose = 'document') => model.embed(texts, purpose),
      close: () => model.release(),
    };
  }
  const [loaded, started] = await Promise.allSettled([
    loadModel(options, ['query']),
    startDocumentWorker({
      modelDir: options.modelDir,
      threads: options.threads,
      batchSize: options.batchSize,
      nice: options.documentWorker.nice,
    }),
  ]);
  // One half failed: the other is released rather than left holding a model.
  if (loaded.status === 'rejected' || started.status === 'rejected') {
    if (loaded.status === 'fulfilled') await loaded.value.release();
    if (started.status === 'fulfilled') await started.value.close();
    throw loaded.status === 'rejected' ? loaded.reason : (started as PromiseRejectedResult).reason;
  }
  const [model, documents] = [loaded.value, started.value];
  const dimensions = (await model.embed(['dimension probe'], 'query'))[0]!.length;
  return {
    model: model.config.name,
    dimensions,
    embed: (texts, purpose = 'document') => (purpose === 'query' ? model.embed(texts, 'query') : documents.embed(texts)),
    async close() {
      await Promise.all([model.release(), documents.close()]);
    },
  };
}
