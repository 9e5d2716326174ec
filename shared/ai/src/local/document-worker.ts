import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '@kb/platform';

/** What the embedding thread is started with. */
export interface EmbeddingThreadSettings {
  modelDir: string;
  threads?: number | undefined;
  batchSize?: number | undefined;
  /** Nice value of the thread and of ONNX Runtime's pool threads (Linux). */
  nice: number;
}

export interface EmbedRequest {
  id: number;
  texts: string[];
}

export type EmbedReply =
  | { id: number; dims: number; vectors: Float32Array }
  | { id: number; error: string }
  | { ready: true; nice: number | null }
  | { failed: string };

export interface DocumentWorker {
  embed(texts: string[]): Promise<number[][]>;
  /** The nice value the thread runs at (null: the process's own priority). */
  readonly nice: number | null;
  close(): Promise<void>;
}

const threadUrl = new URL(import.meta.url.endsWith('.ts') ? './embedding-thread.ts' : './embedding-thread.js', import.meta.url);

/**
 * Documents embedded on a thread of their own (client side). The thread starts with the model
 * loaded or the start fails; a thread that dies later fails the calls in flight and is started
 * again by the next call. It keeps the process alive only while a call is in flight.
 */
export async function startDocumentWorker(settings: EmbeddingThreadSettings): Promise<DocumentWorker> {
  let thread: { worker: Worker; ready: Promise<number | null> } | undefined;
  const pending = new Map<number, { resolve: (v: number[][]) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let closed = false;

  function spawn() {
    // Referenced until it has loaded the model (a process waiting for that alone must not exit), then
    // only while a call is in flight.
    const worker = startModuleWorker(threadUrl, { workerData: settings });
    const ready = new Promise<number | null>((resolve, reject) => {
      worker.on('message', (reply: EmbedReply) => {
        if ('ready' in reply) {
          if (pending.size === 0) worker.unref();
          return resolve(reply.nice);
        }
        if ('failed' in reply) return reject(new Error(`local embeddings: ${reply.failed}`));
        const call = pending.get(reply.id);
        if (!call) return;
        pending.delete(reply.id);
        if (pending.size === 0) worker.unref();
        if ('error' in reply) return call.reject(new Error(`local embeddings: ${reply.error}`));
        const out: number[][] = [];
        for (let i = 0; i < reply.vectors.length; i += reply.dims) out.push(Array.from(reply.vectors.subarray(i, i + reply.dims)));
        call.resolve(out);
      });
      const fail = (err: Error) => {
        if (thread?.worker === worker) thread = undefined;
        reject(err);
        for (const call of pending.values()) call.reject(err);
        pending.clear();
      };
      worker.on('error', (err) => fail(new Error(`local embeddings: the embedding thread failed: ${err.message}`)));
      worker.on('exit', (code) => fail(new Error(`local embeddings: the embedding thread stopped (exit code ${code})`)));
    });
    ready.catch(() => undefined);
    thread = { worker, ready };
    return thread;
  }

  const first = spawn();
  const nice = await first.ready;
  return {
    nice,
    async embed(texts) {
      if (closed) throw new Error('local embeddings: closed');
      if (texts.length === 0) return [];
      const { worker, ready } = thread ?? spawn();
      await ready;
      // It stopped meanwhile: the caller retries (a message to a stopped thread is never answered).
      if (thread?.worker !== worker) throw new Error('local embeddings: the embedding thread stopped');
      const id = nextId++;
      return new Promise<number[][]>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        worker.ref();
        worker.postMessage({ id, texts } satisfies EmbedRequest);
      });
    },
    async close() {
      closed = true;
      const current = thread;
      thread = undefined;
      if (!current) return;
      const exited = new Promise<void>((resolve) => current.worker.once('exit', () => resolve()));
      current.worker.postMessage('close');
      // A thread that does not stop on its own within a few seconds is stopped.
      const timer = setTimeout(() => void current.worker.terminate(), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
