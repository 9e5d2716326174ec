import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '@kb/platform';
import type { CountRowJob, CountRowReply, HandedAnswer } from './count-row-worker.js';
import type { RowWrite } from './row-overlay.js';

/**
 * Folds batches of answers into the source and outcome rows (the larger part
 * of the count rows' work) and the latest answers on another core
 * (count-row-worker.ts) while the asking transaction goes on with its other
 * writes; the transaction then writes what it gets back. One thread per process, started on first use and shared by
 * every store of the process: it holds no state between jobs.
 */
export interface CountRowThread {
  /**
   * The source, outcome and latest-answer documents (and the bodies to delete)
   * the transaction would write for these answers (each with its prompt's tags),
   * read from `file` as the calling transaction started from.
   */
  merge(file: string, answers: readonly HandedAnswer[], tags: Record<string, string[]>, legacy: string[]): Promise<RowWrite[]>;
  close(): Promise<void>;
}

export function createCountRowThread(): CountRowThread {
  let worker: Worker | undefined;
  let nextId = 1;
  const waiting = new Map<number, { resolve: (w: RowWrite[]) => void; reject: (e: Error) => void }>();

  const failAll = (err: Error) => {
    for (const w of waiting.values()) w.reject(err);
    waiting.clear();
  };

  function start(): Worker {
    const w = startModuleWorker(
      new URL(import.meta.url.endsWith('.ts') ? './count-row-worker.ts' : './count-row-worker.js', import.meta.url),
      {
        // A young generation as large as the service's own (--max-semi-space-size=32): the merge allocates much and briefly.
        resourceLimits: { maxYoungGenerationSizeMb: 96 },
      },
    );
    w.on('message', (reply: CountRowReply) => {
      const job = waiting.get(reply.id);
      if (!job) return;
      waiting.delete(reply.id);
      if (waiting.size === 0) w.unref();
      if (reply.ok) job.resolve(reply.writes);
      else job.reject(new Error(`count rows: ${reply.message}`));
    });
    // A thread that fails or exits takes its jobs with it (their transactions roll back); the next job starts another.
    w.on('error', (err) => {
      if (worker === w) worker = undefined;
      failAll(err);
    });
    w.on('exit', (code) => {
      if (worker === w) worker = undefined;
      failAll(new Error(`count-row thread exited (${code})`));
    });
    return w;
  }

  return {
    merge(file, answers, tags, legacy) {
      const w = (worker ??= start());
      const id = nextId++;
      // Kept alive only while a job is out: an idle thread never holds the process open.
      w.ref();
      return new Promise<RowWrite[]>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        const job: CountRowJob = { id, file, answers, tags, legacy };
        w.postMessage(job);
      });
    },
    async close() {
      const w = worker;
      worker = undefined;
      if (w) await w.terminate();
    },
  };
}
