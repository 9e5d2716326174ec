import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '@kb/platform';
import { startWithOwnThreadCompilation } from './own-thread-compilation.js';
import { ExtractionError, WORKER_READY, type ExtractionLimits, type ExtractionResult, type Format } from './types.js';
import type { ExtractRequest, WorkerSettings } from './worker.js';

/** A file to extract: its bytes, or the path of a stored file the worker reads itself. */
export type ExtractionInput = ({ bytes: Buffer } | { path: string }) & { filename: string; format?: Format };

export interface ExtractionPool {
  extract(input: ExtractionInput): Promise<ExtractionResult>;
  close(): Promise<void>;
}

type Reply = { id: number; ok: true; result: ExtractionResult } | { id: number; ok: false; permanent: boolean; message: string };

interface Task {
  request: ExtractRequest;
  /** The request's own copy of the file, moved to the worker (none when the worker reads the file). */
  transfer: ArrayBuffer[];
  resolve: (r: ExtractionResult) => void;
  reject: (e: Error) => void;
}

const workerUrl = new URL(import.meta.url.endsWith('.ts') ? './worker.ts' : './worker.js', import.meta.url);
const spawnWorker = (options: { resourceLimits: { maxOldGenerationSizeMb: number }; workerData: WorkerSettings }): Worker =>
  startModuleWorker(workerUrl, options);

export interface ExtractionPoolOptions {
  size: number;
  timeoutMs: number;
  memoryMb: number;
  /** Nice value of the worker threads (0 to 19, default 0): above 0 they yield the CPU to the main thread when the cores are busy. */
  nice?: number;
  /** Workers compile their hot code on their own thread, at their nice value, not on V8's shared helper threads (default false). */
  compileOnOwnThread?: boolean;
  limits: ExtractionLimits;
}

/**
 * Extraction in worker threads with a time and memory limit per file: a file
 * that hangs a parser is stopped (the worker is terminated and replaced), and
 * one that exhausts memory kills only its worker. Both fail the item for good:
 * the same bytes would hit the same limit again.
 */
export function createExtractionPool(options: ExtractionPoolOptions): ExtractionPool {
  const queue: Task[] = [];
  /** `ready`: the worker has loaded its extraction code (a start under load can take many seconds). */
  const slots: { worker?: Worker; ready?: Promise<void>; busy: boolean }[] = Array.from({ length: Math.max(1, options.size) }, () => ({
    busy: false,
  }));
  let nextId = 1;
  let closed = false;

  const start = options.compileOnOwnThread ? startWithOwnThreadCompilation : (spawn: () => Worker) => spawn();
  const spawn = () =>
    start(() => spawnWorker({ resourceLimits: { maxOldGenerationSizeMb: options.memoryMb }, workerData: { nice: options.nice ?? 0 } }));

  /** A new worker, and when it says it is ready. */
  function startWorker(slot: (typeof slots)[number]): Worker {
    const worker = spawn();
    slot.worker = worker;
    slot.ready = new Promise<void>((resolve) => {
      const onReady = (message: unknown) => {
        if (message !== WORKER_READY) return;
        worker.off('message', onReady);
        resolve();
      };
      worker.on('message', onReady);
    });
    return worker;
  }

  function run(slot: (typeof slots)[number], task: Task) {
    slot.busy = true;
    const worker = slot.worker ?? startWorker(slot);
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (outcome: () => void, replace: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      if (replace) {
        slot.worker = undefined;
        slot.ready = undefined;
        void worker.terminate();
      }
      slot.busy = false;
      outcome();
      pump();
    };
    const onMessage = (reply: Reply) => {
      if (reply.id !== task.request.id) return;
      finish(() => (reply.ok ? task.resolve(reply.result) : task.reject(new ExtractionError(reply.message, reply.permanent))), false);
    };
    const onError = (err: Error & { code?: string }) => {
      const oom = err.code === 'ERR_WORKER_OUT_OF_MEMORY';
      finish(
        () =>
          task.reject(
            oom
              ? new ExtractionError(`Extracting the file needs more than ${options.memoryMb} MB of memory`, true)
              : new ExtractionError(`The extractor crashed: ${err.message}`, false),
          ),
        true,
      );
    };
    const onExit = () => finish(() => task.reject(new ExtractionError('The extractor stopped unexpectedly', false)), true);
    // The limit is on extracting the file, not on starting the worker: on a busy machine a new
    // worker takes seconds to load its code, which no file should be failed for.
    const startTimer = () => {
      if (settled) return;
      timer = setTimeout(
        () =>
          finish(
            () =>
              task.reject(
                // The same bytes would take as long again: retrying only holds a worker for longer.
                new ExtractionError(
                  `Extraction took longer than ${Math.round(options.timeoutMs / 1000)} s, the limit per file; split it into smaller files`,
                  true,
                ),
              ),
            true,
          ),
        options.timeoutMs,
      );
    };
    void slot.ready!.then(startTimer);
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
    // The file goes over by transfer, not by a structured clone of its Buffer, which
    // copies the whole backing store (often a pool shared with other buffers).
    worker.postMessage(task.request, task.transfer);
  }

  function pump() {
    if (closed) return;
    for (const slot of slots) {
      if (slot.busy) continue;
      const task = queue.shift();
      if (!task) return;
      run(slot, task);
    }
  }

  return {
    extract(input) {
      if (closed) return Promise.reject(new ExtractionError('The extraction pool is closed', false));
      return new Promise((resolve, reject) => {
        // Bytes: a copy of its own, to transfer (the caller keeps its Buffer); a path: the worker reads it.
        const bytes = 'bytes' in input ? new Uint8Array(input.bytes) : undefined;
        const request: ExtractRequest = {
          id: nextId++,
          ...(bytes ? { bytes } : { path: (input as { path: string }).path }),
          filename: input.filename,
          limits: options.limits,
          ...(input.format && { format: input.format }),
        };
        queue.push({ request, transfer: bytes ? [bytes.buffer] : [], resolve, reject });
        pump();
      });
    },
    async close() {
      closed = true;
      for (const task of queue.splice(0)) task.reject(new ExtractionError('The extraction pool is closed', false));
      await Promise.all(slots.map((s) => s.worker?.terminate()));
    },
  };
}
