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
   * read from `file` as the calling transaction started from: in pieces, to be
   * written in order as they come (a later piece may write a document again).
   * The job starts at once; iterating fails if the thread does, possibly after
   * some pieces.
   */
  merge(file: string, answers: readonly HandedAnswer[], tags: Record<string, string[]>, legacy: string[]): AsyncIterable<RowWrite[]>;
  close(): Promise<void>;
}

/**
 * The fold thread failed after the transaction had written part of what it
 * sent: the transaction cannot finish the fold itself and must be run again
 * without the thread (importAnswers does).
 */
export class FoldThreadInterrupted extends Error {
  constructor(cause: unknown) {
    super(`the fold thread failed part way: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'FoldThreadInterrupted';
  }
}

/** The pieces of one job as they arrive, for one reader: the end, or the error, after the last. */
function pieces() {
  const queue: RowWrite[][] = [];
  let ended = false;
  let error: Error | undefined;
  let wake: (() => void) | undefined;
  const signal = () => {
    wake?.();
    wake = undefined;
  };
  return {
    push(writes: RowWrite[]) {
      queue.push(writes);
      signal();
    },
    end() {
      ended = true;
      signal();
    },
    fail(err: Error) {
      error = err;
      signal();
    },
    async *[Symbol.asyncIterator](): AsyncGenerator<RowWrite[]> {
      for (;;) {
        if (queue.length > 0) yield queue.shift()!;
        else if (error) throw error;
        else if (ended) return;
        else await new Promise<void>((resolve) => (wake = resolve));
      }
    },
  };
}

/** `logger` hears why a job failed (its transaction then folds those answers itself, see flushRows). */
export function createFoldThread(options: { logger?: Pick<Logger, 'warn'> } = {}): FoldThread {
  let worker: Worker | undefined;
  let nextId = 1;
  const waiting = new Map<number, { worker: Worker; pieces: ReturnType<typeof pieces> }>();

  /** Fails the jobs of a thread that died (their transactions fold those answers themselves); the next job starts another thread. */
  const failJobsOf = (w: Worker, err: Error) => {
    if (worker === w) worker = undefined;
    if ([...waiting.values()].some((j) => j.worker === w))
      options.logger?.warn({ err }, 'fold thread stopped; its jobs fold on the request thread');
    for (const [id, job] of waiting)
      if (job.worker === w) {
        waiting.delete(id);
        job.pieces.fail(err);
      }
  };

  function start(): Worker {
    const w = startModuleWorker(new URL(import.meta.url.endsWith('.ts') ? './fold-worker.ts' : './fold-worker.js', import.meta.url), {
      // A young generation as large as the service's own (--max-semi-space-size=32), not the extraction
      // workers' (HEAP_SEMI_SPACE_MB): the merge allocates much and briefly.
      semiSpaceMb: 32,
    });
    w.on('message', (reply: FoldReply) => {
      const job = waiting.get(reply.id);
      if (!job) return;
      if (reply.ok) job.pieces.push(reply.writes);
      if (reply.ok && !reply.done) return;
      waiting.delete(reply.id);
      if (![...waiting.values()].some((j) => j.worker === w)) w.unref();
      if (reply.ok) job.pieces.end();
      else {
        options.logger?.warn({ error: reply.message }, 'fold thread job failed; it folds on the request thread');
        job.pieces.fail(new Error(`fold thread: ${reply.message}`));
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
      const job = pieces();
      waiting.set(id, { worker: w, pieces: job });
      w.postMessage({ id, file, answers, tags, legacy } satisfies FoldJob);
      return job;
    },
    async close() {
      const w = worker;
      worker = undefined;
      if (w) await w.terminate();
    },
  };
}
