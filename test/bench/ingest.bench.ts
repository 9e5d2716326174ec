/**
 * Ingest throughput: documents and megabytes per second from upload to
 * completed, for a mixed corpus of the twelve formats, through the whole
 * embedded system (HTTP multipart upload in batches of 10, gRPC to ingest, blob
 * write, event + job commit, worker-thread extraction, chunking, chunk events
 * and projections). The baseline is the bare extraction (format sniffing and the
 * extraction libraries, one file after another, no pipeline, in a child process:
 * ingest-bare.ts) on the same files in the same run; the ratio is the pipeline's
 * overhead. A second baseline runs the same bare extraction under the heap sizing
 * the service gives its extraction workers (HEAP_SEMI_SPACE_MB, HEAP_GROWING_PERCENT:
 * a smaller young generation and a slower old-generation growth, chosen for memory),
 * so the pipeline's own cost and that of the heap sizing are told apart. A third runs
 * the service's extraction pool alone (its workers and settings, that heap sizing,
 * files read from disk; no HTTP, commits, events or indexing: ingest-pool.ts): the
 * floor the pipeline stands on, what is left of the 1.5x budget for the rest. CPU is
 * printed per kind of thread (Linux): the main thread, the extraction workers (told
 * apart by their nice value) and the rest, mostly V8's compiler and GC helpers.
 *
 * Measured twice: batch uploads (10 files per request, one client) and single
 * uploads (one file per request, four clients at a time). The HTTP client runs
 * in a child process (ingest-client.ts), so the CPU figures are the service's
 * alone; it follows completion by polling the newest pending item and sweeping
 * the listing once that one is settled.
 *
 *   npm run bench:ingest            (ROUNDS=n copies of each of the 12 samples, default 8;
 *                                    INGEST_WORKERS, INGEST_PREFETCH, INGEST_WORKER_NICE and
 *                                    INGEST_WORKER_BACKGROUND_COMPILE for the pipeline, defaults 2, 1, 10, false;
 *                                    CORPUS=documents for documents of an ordinary size,
 *                                    13k to 100k characters of text each, instead of the samples;
 *                                    BASELINE_RUNS=n runs of each baseline, its median compared, default 3;
 *                                    SEARCH_DOCS=n SciFact abstracts for the search readiness part, default 1000, 0 skips it)
 *
 * Then search readiness: SciFact abstracts ingested by a keyword-only system (EMBEDDINGS=none) and
 * by the defaults (hybrid, vectors in the background), in the same run: the time until every
 * abstract is searchable by its words (the ratio of the two: the vectors must not slow it) and by
 * its meaning, and the vectors' throughput per core.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { missingModelFiles } from '@kb/ai/local';
import { Session } from 'node:inspector/promises';
import { applyHeapSettings, heapConfigSpec, heapFlags, loadConfig } from '@kb/platform';
import { API_KEY, startTestSystem } from '../e2e/harness.js';
import type { BareReply, BareRequest } from './ingest-bare.js';
import type { ClientReply, ClientRequest, CorpusKind } from './ingest-client.js';
import type { PoolReply, PoolRequest } from './ingest-pool.js';
import { child } from './bench-child.js';
import { threadCpu } from './thread-cpu.js';
import { loadScifact, scifactDir } from './scifact.js';
import { ingestScifact, printIngestComparison } from './search-readiness.js';

const ROUNDS = Number(process.env.ROUNDS ?? 8);
const WORKERS = process.env.INGEST_WORKERS ?? '2';
const CORPUS: CorpusKind = process.env.CORPUS === 'documents' ? 'documents' : 'samples';

// Each baseline runs BASELINE_RUNS times (default 3), each time in a fresh process (as warm as the
// pipeline's workers are), and its median run is the one compared: a single run of about a second
// on a shared machine varied by a third from one run to the next.
const BASELINE_RUNS = Math.max(1, Math.floor(Number(process.env.BASELINE_RUNS ?? 3)) || 3);

/** The run of median time of `runs` runs of `measure`, and the range of their times. */
async function medianOf<T extends { seconds: number }>(measure: () => Promise<T>): Promise<T & { range: [number, number] }> {
  const results: T[] = [];
  for (let i = 0; i < BASELINE_RUNS; i++) results.push(await measure());
  results.sort((a, b) => a.seconds - b.seconds);
  return { ...results[Math.floor((results.length - 1) / 2)]!, range: [results[0]!.seconds, results.at(-1)!.seconds] };
}

// Baseline: the extraction libraries alone, in a process of their own with this one's V8 flags
// (ingest-bare.ts), so that this process's main thread holds only what the service's does.
function bareExtraction(execArgv: string[]) {
  return medianOf(() => {
    const bareChild = child('./ingest-bare.ts', execArgv);
    return bareChild.ask<BareRequest, BareReply>({ corpus: CORPUS, rounds: ROUNDS }).finally(bareChild.kill);
  });
}
const bare = await bareExtraction(process.execArgv);
const mb = bare.bytes / (1024 * 1024);

// The second baseline: the same, under the heap sizing the extraction workers get (each of its
// flags replaces the same flag of this process's); none when both settings keep V8's defaults, as
// the workers then run with this process's flags, like the first.
const workerHeapFlags = heapFlags(loadConfig(heapConfigSpec, process.env));
const flagName = (flag: string) => flag.split('=')[0];
const replaced = new Set(workerHeapFlags.map(flagName));
const bareUnderWorkerHeap =
  workerHeapFlags.length > 0
    ? await bareExtraction([...process.execArgv.filter((flag) => !replaced.has(flagName(flag))), ...workerHeapFlags])
    : undefined;

// The third baseline: the service's extraction pool alone, with the pipeline's settings, in a process of its own.
const poolAlone = await medianOf(() => {
  const poolChild = child('./ingest-pool.ts', process.execArgv);
  return poolChild.ask<PoolRequest, PoolReply>({ corpus: CORPUS, rounds: ROUNDS, workers: Number(WORKERS) }).finally(poolChild.kill);
});

/** CPU seconds of this process (every thread: the pipeline's workers too) since `from`; steadier than wall time on a shared machine. */
function cpuSeconds(from: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(from);
  return (used.user + used.system) / 1e6;
}

const WORKER_NICE = Number(process.env.INGEST_WORKER_NICE ?? 10);

// CPU by kind of thread (threadCpu): the main thread, where everything but extraction runs (on an
// idle machine what bounds the pipeline's wall time); the extraction workers, told apart by the nice
// value they run at (when it is not 0), with the compilation of their code unless
// INGEST_WORKER_BACKGROUND_COMPILE; and the rest, mostly V8's helper threads (its optimizing
// compiler and GC) and libuv's (file I/O). Threads that ended meanwhile are not counted.
/** Each kind of thread's CPU seconds between two readings of threadCpu. */
function threadSplit(from: ReturnType<typeof threadCpu>, to: ReturnType<typeof threadCpu>) {
  if (!from || !to) return undefined;
  const split = { main: 0, extraction: 0, rest: 0 };
  for (const [tid, t] of to) {
    const used = t.seconds - (from.get(tid)?.seconds ?? 0);
    if (tid === process.pid) split.main += used;
    else if (WORKER_NICE > 0 && t.nice === WORKER_NICE) split.extraction += used;
    else split.rest += used;
  }
  return split;
}

// Pipeline: the whole embedded system over HTTP, in this process; the client in a child process of its own.
// The heap settings `npm start` applies (HEAP_SEMI_SPACE_MB, HEAP_GROWING_PERCENT) hold for the
// isolates started from here on: the extraction workers.
applyHeapSettings('bench:ingest');
const t = await startTestSystem({
  INGEST_WORKERS: WORKERS,
  INGEST_POLL_MS: '20',
  ...(process.env.INGEST_PREFETCH && { INGEST_PREFETCH: process.env.INGEST_PREFETCH }),
  ...(process.env.INGEST_WORKER_NICE && { INGEST_WORKER_NICE: process.env.INGEST_WORKER_NICE }),
  ...(process.env.INGEST_WORKER_BACKGROUND_COMPILE && { INGEST_WORKER_BACKGROUND_COMPILE: process.env.INGEST_WORKER_BACKGROUND_COMPILE }),
});
const client = child('./ingest-client.ts', ['--conditions=source', '--import', 'tsx']);
try {
  const ask = (request: ClientRequest) => client.ask<ClientRequest, ClientReply>(request);

  // Warm-up (not timed): one file of every format per worker, of the kind measured, so
  // every worker thread has loaded every extraction library (the baseline warms up too).
  await ask({ kind: 'warm-up', url: t.url, key: API_KEY, corpus: CORPUS, workers: Number(WORKERS) });

  /** Has the client upload a corpus (requests of `perRequest` files, `clients` at a time) and wait until every file is settled. */
  async function pipeline(prefix: string, first: number, perRequest: number, clients: number) {
    const cpu = process.cpuUsage();
    const threadsBefore = threadCpu();
    const r = await ask({ kind: 'run', url: t.url, key: API_KEY, corpus: CORPUS, prefix, first, rounds: ROUNDS, perRequest, clients });
    const threads = threadSplit(threadsBefore, threadCpu());
    return {
      ...r,
      cpuSeconds: cpuSeconds(cpu),
      threads,
    };
  }

  const profiler = process.env.PROFILE ? new Session() : undefined;
  if (profiler) {
    profiler.connect();
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.start');
  }
  const batch = await pipeline('doc', 0, 10, 1);
  // The same files with other bytes (so none is a duplicate of the first run's).
  const single = await pipeline('single', 1000, 1, 4);
  if (profiler) {
    const { profile } = await profiler.post('Profiler.stop');
    mkdirSync(process.env.PROFILE!, { recursive: true });
    writeFileSync(`${process.env.PROFILE}/ingest-pipeline.cpuprofile`, JSON.stringify(profile));
    profiler.disconnect();
  }

  const row = (label: string, seconds: number) =>
    `${label.padEnd(50)} ${(bare.files / seconds).toFixed(1).padStart(8)} docs/s ${(mb / seconds).toFixed(2).padStart(8)} MB/s ${seconds.toFixed(2).padStart(8)} s`;
  console.log(
    `Mixed corpus (${CORPUS === 'documents' ? 'ordinary-sized documents' : 'the format samples'}): ${bare.files} files (${ROUNDS} x the 12 formats), ${mb.toFixed(2)} MB, ` +
      `${Math.round(bare.characters / 1000)}k characters of text, ${WORKERS} ingest workers`,
  );
  const spread = (b: { range: [number, number] }) =>
    BASELINE_RUNS > 1 ? `  the median of ${BASELINE_RUNS} runs, which took ${b.range[0].toFixed(2)} to ${b.range[1].toFixed(2)} s; ` : '  ';
  const cpuLine = (b: BareReply & { range: [number, number] }) => {
    console.log(
      `${spread(b)}CPU seconds: ${b.cpuSeconds.toFixed(2)}` +
        (b.ownThreadSeconds === undefined
          ? ''
          : `, of which its own thread ${b.ownThreadSeconds.toFixed(2)}; V8's compiler and GC helpers: ${(b.cpuSeconds - b.ownThreadSeconds).toFixed(2)}`),
    );
  };
  console.log(row('bare extraction (serial, a process of its own)', bare.seconds));
  cpuLine(bare);
  if (bareUnderWorkerHeap) {
    console.log(row(`the same under the workers' heap sizing (${workerHeapFlags.join(' ')})`, bareUnderWorkerHeap.seconds));
    cpuLine(bareUnderWorkerHeap);
  }
  console.log(row(`the service's extraction pool alone (${WORKERS} workers, no pipeline)`, poolAlone.seconds));
  console.log(
    `${spread(poolAlone)}CPU seconds: ${poolAlone.cpuSeconds.toFixed(2)}` +
      (poolAlone.workerSeconds !== undefined ? `, of which the workers' threads ${poolAlone.workerSeconds.toFixed(2)}` : '') +
      `; time / bare extraction time: ${(poolAlone.seconds / bare.seconds).toFixed(2)}x`,
  );
  for (const [label, r] of [
    ['batch: 10 files per request, 1 client', batch],
    ['single: 1 file per request, 4 clients', single],
  ] as const) {
    console.log(row(`pipeline upload->completed, ${label}`, r.seconds));
    console.log(`  of which uploading (${r.requests} requests answered 202): ${r.uploadSeconds.toFixed(2)} s`);
    console.log(
      `  pipeline time / bare extraction time: ${(r.seconds / bare.seconds).toFixed(2)}x` +
        (bareUnderWorkerHeap
          ? `; / the bare extraction under the workers' heap sizing: ${(r.seconds / bareUnderWorkerHeap.seconds).toFixed(2)}x`
          : '') +
        `; / the extraction pool alone: ${(r.seconds / poolAlone.seconds).toFixed(2)}x` +
        (r.failed ? `  (${r.failed} failed!)` : '') +
        (r.files !== bare.files ? `  (${r.files} files!)` : ''),
    );
    console.log(
      `  CPU seconds of the service (all threads): ${r.cpuSeconds.toFixed(2)} vs ${bare.cpuSeconds.toFixed(2)}, ${(r.cpuSeconds / bare.cpuSeconds).toFixed(2)}x;` +
        ` the client's process besides: ${r.clientCpuSeconds.toFixed(2)} s`,
    );
    console.log(
      `  API latency meanwhile (GET /org/me every 20 ms, ${r.probe.count} calls): p50 ${r.probe.p50.toFixed(1)} ms, p95 ${r.probe.p95.toFixed(1)} ms, max ${r.probe.max.toFixed(1)} ms`,
    );
    if (r.threads) {
      const { main, extraction, rest } = r.threads;
      console.log(
        `  of which the main thread (all but extraction): ${main.toFixed(2)} s, ${((1000 * main) / bare.files).toFixed(1)} ms per file; ` +
          (WORKER_NICE > 0
            ? `the extraction workers: ${extraction.toFixed(2)} s; V8's compiler and GC helpers and file I/O: ${rest.toFixed(2)} s`
            : `the other threads (extraction workers, V8's compiler and GC helpers, file I/O): ${(extraction + rest).toFixed(2)} s`),
      );
    }
  }
} finally {
  client.kill();
  await t.stop();
}

// Search readiness: SciFact abstracts through POST /org/kb/raw, keyword only against the defaults
// (hybrid, vectors in the background), in the same run: when every abstract is searchable by its
// words, and by its meaning. SEARCH_DOCS=n abstracts (default 1000); skipped without SciFact or the model.
const searchDocs = Number(process.env.SEARCH_DOCS ?? 1000);
const readinessSkip = !existsSync(join(scifactDir, 'corpus.jsonl'))
  ? `SciFact is not at ${scifactDir} (SCIFACT_DIR)`
  : missingModelFiles('.models/bge-small-en-v1.5-q');
if (searchDocs <= 0 || readinessSkip) console.log(`\nsearch readiness: skipped${readinessSkip ? `: ${readinessSkip}` : ''}`);
else {
  const abstracts = loadScifact().corpus.slice(0, searchDocs);
  const timings = [];
  for (const [label, env] of [
    ['keyword-only system', { EMBEDDINGS: 'none' }],
    ['default system', { EMBEDDINGS: '' }],
  ] as const) {
    const system = await startTestSystem({ BOOTSTRAP_CREDITS: '100000000', ...env });
    try {
      timings.push((await ingestScifact(system, abstracts, label, env.EMBEDDINGS === '')).timing);
    } finally {
      await system.stop();
    }
  }
  printIngestComparison(timings[0]!, timings[1]!);
}
