import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * A worker thread running a module of this codebase. Under tsx (sources) the
 * module is a .ts file, loaded through tsx's loader (module hooks are per
 * thread), and workspace packages resolve to their sources as in the parent
 * (the "source" export condition); in a build it is the emitted .js.
 */
export function startModuleWorker(moduleUrl: URL, options: WorkerOptions = {}): Worker {
  const fromSources = moduleUrl.pathname.endsWith('.ts');
  if (!fromSources) return new Worker(moduleUrl, options);
  // A worker inherits the parent's flags unless given its own, and refuses V8's
  // among them (--max-semi-space-size): name the condition only when it is missing.
  const hasSource = process.execArgv.some((a) => a === '--conditions=source' || a === '-C=source');
  return new Worker(
    `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(moduleUrl.href)}); });`,
    { ...options, eval: true, ...(!hasSource && !options.execArgv && { execArgv: ['--conditions=source'] }) },
  );
}
