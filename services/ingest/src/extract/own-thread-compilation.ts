import { setFlagsFromString } from 'node:v8';
import type { Worker } from 'node:worker_threads';

/**
 * Starts worker threads whose isolates run V8's optimizing compiler on their own
 * thread instead of handing it to V8's helper threads, which every isolate of
 * the process shares and which run at the process's priority. The extraction
 * workers compile the parsers they run (pdf.js, SheetJS, mammoth, inflate) again
 * and again after deoptimizations: on the helper threads that was as much CPU as
 * the extraction itself, spent at normal priority beside the main thread, so a
 * worker's nice value held back only half of its work. Compiled on the worker's
 * own thread, all of it runs at the worker's nice value.
 *
 * V8 reads the flag once per isolate, when the isolate is created: it is turned
 * off while workers start and back on when the last of them is running (or
 * failed to start), so the main isolate and the workers started later by others
 * keep compiling in the background.
 */
export function ownThreadCompilation(setFlags: (flags: string) => void = setFlagsFromString) {
  let starting = 0;
  const started = () => {
    if (--starting === 0) setFlags('--concurrent-recompilation');
  };
  return function start(spawn: () => Worker): Worker {
    if (starting++ === 0) setFlags('--no-concurrent-recompilation');
    let worker: Worker;
    try {
      worker = spawn();
    } catch (err) {
      started();
      throw err;
    }
    // An error or exit before 'online' (a module that fails to load) ends the start too.
    const events = ['online', 'error', 'exit'] as const;
    const once = () => {
      for (const e of events) worker.off(e, once);
      started();
    };
    for (const e of events) worker.on(e, once);
    return worker;
  };
}

/** The process's one starter: V8's flag is process-wide, so every pool must share its count of starting workers. */
export const startWithOwnThreadCompilation = ownThreadCompilation();
