import { Worker, type WorkerOptions } from 'node:worker_threads';
import { withSemiSpace } from './heap.js';

export interface ModuleWorkerOptions extends WorkerOptions {
  /**
   * Largest semi-space of the worker's young generation, in MB, whatever the process-wide flag
   * says (V8 lets that flag override `resourceLimits`); the start then waits until the worker has
   * sized its heap (`withSemiSpace`).
   */
  semiSpaceMb?: number;
}

/**
 * The first statement of a sized worker: takes the buffer `withSemiSpace` posted before anything
 * else (waiting a millisecond at a time in case this thread got here first), and tells it this
 * thread's heap is sized.
 */
const SIGNAL_SIZED = `{ const { parentPort, receiveMessageOnPort } = process.getBuiltinModule('node:worker_threads');
  const pause = new Int32Array(new SharedArrayBuffer(4)); let m;
  while (!(m = receiveMessageOnPort(parentPort))) Atomics.wait(pause, 0, 0, 1);
  Atomics.store(m.message, 0, 1); Atomics.notify(m.message, 0); }`;

/**
 * A worker thread running a module of this codebase. Under tsx (sources) the
 * module is a .ts file, loaded through tsx's loader (module hooks are per
 * thread), and workspace packages resolve to their sources as in the parent
 * (the "source" export condition); in a build it is the emitted .js.
 */
export function startModuleWorker(moduleUrl: URL, options: ModuleWorkerOptions = {}): Worker {
  const { semiSpaceMb, ...workerOptions } = options;
  if (semiSpaceMb === undefined) return spawn(moduleUrl, workerOptions, false);
  return withSemiSpace(semiSpaceMb, (sized) => {
    const worker = spawn(moduleUrl, workerOptions, sized !== undefined);
    if (sized) worker.postMessage(sized);
    return worker;
  });
}

function spawn(moduleUrl: URL, options: WorkerOptions, sized: boolean): Worker {
  const fromSources = moduleUrl.pathname.endsWith('.ts');
  if (!fromSources && !sized) return new Worker(moduleUrl, options);
  const signal = sized ? SIGNAL_SIZED : '';
  if (!fromSources) return new Worker(`${signal} import(${JSON.stringify(moduleUrl.href)});`, { ...options, eval: true });
  // A worker inherits the parent's flags unless given its own, and refuses V8's
  // among them (--max-semi-space-size): name the condition only when it is missing.
  const hasSource = process.execArgv.some((a) => a === '--conditions=source' || a === '-C=source');
  return new Worker(
    `${signal} import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(moduleUrl.href)}); });`,
    { ...options, eval: true, ...(!hasSource && !options.execArgv && { execArgv: ['--conditions=source'] }) },
  );
}
