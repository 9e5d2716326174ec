import type { Worker } from 'node:worker_threads';
import { startModuleWorker, type Logger } from '@kb/platform';
import type { FoldJob, FoldReply, HandedAnswer } from './fold-worker.js';
import type { RowWrite } from './row-overlay.js';

/**
 * Folds batches of answers into the source and outcome rows (the larger part
 * of the count rows' work) and the latest answers on another core
 * (fold-worker.ts) while the asking transaction goes on with its other
 * writes; the transaction then writes what it gets back. One thread, started
 * on first use and shared by every store that uses it: it holds no state
 * between jobs.
 */
export interface FoldThread {
  /**
   * The source, outcome and latest-answer documents (and the bodies to delete)
   * the transaction would write for these answers (each with its prompt's tags),
   * read from `file` as the calling transaction started from.
   */
  merge(file: string, answers: readonly HandedAnswer[], tags: Record<string, string[]>, legacy: string[]): Promise<RowWrite[]>;
  close(): Promise<void>;
}

/** `logger` hears why a job failed (its transaction then folds those answers itself, see flushRows). */
export function createFoldThread(options: { logger?: Pick<Logger, 'warn'> } = {}): FoldThread {
  let worker: Worker | undefined;
  let nextId = 1;
  const waiting = new Map<number, { worker: Worker; resolve: (w: RowWrite[]) => void; reject: (e: Error) => void }>();

  /** Fails the jobs of a thread that died (their transactions fold those answers themselves); the next job starts another thread. */
  const failJobsOf = (w: Worker, err: Error) => {
    if (worker === w) worker = undefined;
    if ([...waiting.values()].some((j) => j.worker === w))
      options.logger?.warn({ err }, 'fold thread stopped; its jobs fold on the request thread');
    for (const [id, job] of waiting)
      if (job.worker === w) {
        waiting.delete(id);
        job.reject(err);
      }
  };

  function start(): Worker {
    const w = startModuleWorker(new URL(import.meta.url.endsWith('.ts') ? './fold-worker.ts' : './fold-worker.js', import.meta.url), {
      // A young generation as large as the service's own (--max-semi-space-size=32): the merge allocates much and briefly.
      resourceLimits: { maxYoungGenerationSizeMb: 96 },
    });
    w.on('message', (reply: FoldReply) => {
      const job = waiting.get(reply.id);
      if (!job) return;
      waiting.delete(reply.id);
      if (![...waiting.values()].some((j) => j.worker === w)) w.unref();
      if (reply.ok) job.resolve(reply.writes);
      else {
        options.logger?.warn({ error: reply.message }, 'fold thread job failed; it folds on the request thread');
        job.reject(new Error(`fold thread: ${reply.message}`));
      }
    });
    w.on('error', (err) => failJobsOf(w, err));
    w.on('exit', (code) => failJobsOf(w, new Error(`fold thread exited (${code})`)));
    return w;
  }

  return {
    merge(file, answers, tags, legacy) {
      const w = (worker ??= start());
      const id = nextId++;
      // Kept alive only while a job is out: an idle thread never holds the process open.
      w.ref();
      return new Promise<RowWrite[]>((resolve, reject) => {
        waiting.set(id, { worker: w, resolve, reject });
        const job: FoldJob = { id, file, answers, tags, legacy };
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
