import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { loadModel } from './onnx-embeddings.js';
import type { EmbedReply, EmbedRequest, EmbeddingThreadSettings } from './document-worker.js';

/**
 * The worker thread that embeds documents (see LocalEmbeddingsOptions.documentWorker): it lowers
 * its own priority before ONNX Runtime starts its pool threads, which inherit it, loads the
 * documents' session and embeds one request at a time (requests queue in the model's own queue).
 */
const settings = workerData as EmbeddingThreadSettings;
// Linux keeps a nice value per thread and pid 0 names the calling thread; elsewhere (macOS,
// Windows) the priority is the whole process's, so it is left alone there.
let nice: number | null = null;
if (settings.nice > 0 && process.platform === 'linux') {
  try {
    setPriority(settings.nice);
    nice = settings.nice;
  } catch {
    // A sandbox that forbids it: documents are embedded at the process's own priority.
  }
}

const port = parentPort!;
try {
  const model = await loadModel(settings, ['document']);
  port.on('message', (request: EmbedRequest | 'close') => {
    if (request === 'close') {
      void model.release().finally(() => port.close());
      return;
    }
    model.embed(request.texts, 'document').then(
      (vectors) => {
        // One buffer for the batch, moved rather than copied.
        const dims = vectors[0]?.length ?? 0;
        const flat = new Float32Array(vectors.length * dims);
        vectors.forEach((v, i) => flat.set(v, i * dims));
        port.postMessage({ id: request.id, dims, vectors: flat } satisfies EmbedReply, [flat.buffer]);
      },
      (err: unknown) => port.postMessage({ id: request.id, error: err instanceof Error ? err.message : String(err) } satisfies EmbedReply),
    );
  });
  port.postMessage({ ready: true, nice } satisfies EmbedReply);
} catch (err) {
  port.postMessage({ failed: err instanceof Error ? err.message : String(err) } satisfies EmbedReply);
}
