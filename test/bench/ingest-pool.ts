/**
 * The ingest benchmark's third baseline, run in a child process of its own (forked
 * by ingest.bench.ts with its node flags): the service's extraction pool alone,
 * with the settings the service gives it (INGEST_WORKERS workers, their nice value,
 * compilation, heap limit and the heap sizing of HEAP_SEMI_SPACE_MB and
 * HEAP_GROWING_PERCENT), extracting the corpus from files on disk as the pipeline's
 * workers do, and nothing else: no HTTP, no commits, no events, no indexing. What
 * the pipeline costs beyond it is the pipeline's own; what it costs beyond the bare
 * extraction is that of running the libraries in worker threads, each isolate
 * compiling them for itself, under that heap sizing.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyHeapSettings, loadConfig } from '@kb/platform';
import { extractionPoolOptions, ingestConfigSpec } from '../../services/ingest/src/config.js';
import { createExtractionPool } from '../../services/ingest/src/extract/pool.js';
import type { CorpusKind } from './ingest-client.js';
import { answerRequests } from './bench-child.js';
import { corpus, type CorpusFile } from './ingest-corpus.js';
import { documents } from './ingest-documents.js';
import { threadCpu } from './thread-cpu.js';

export interface PoolRequest {
  corpus: CorpusKind;
  rounds: number;
  workers: number;
}

export interface PoolReply {
  seconds: number;
  /** CPU seconds of this process, every thread. */
  cpuSeconds: number;
  /** Of which the extraction workers' threads (Linux, when they run at a nice value of their own). */
  workerSeconds?: number;
}

async function measure(request: PoolRequest): Promise<PoolReply> {
  // The service's own settings for its pool (from this environment, as the pipeline reads them).
  const config = loadConfig(ingestConfigSpec, {
    INTERNAL_TOKEN: 'bench-internal-token',
    ...process.env,
    INGEST_WORKERS: String(request.workers),
  });
  applyHeapSettings('bench:ingest pool baseline');
  const pool = createExtractionPool(extractionPoolOptions(config));
  const dir = mkdtempSync(join(tmpdir(), 'kb-bench-pool-'));
  try {
    const stored = (files: CorpusFile[]) =>
      files.map((f, i) => {
        const path = join(dir, `${i}-${f.name}`);
        writeFileSync(path, f.bytes);
        return { path, filename: f.name };
      });
    // Warm-up as the pipeline's (ingest-client.ts): one file of every format per worker; then the files it measures.
    const warm =
      request.corpus === 'documents' ? await documents('warm', 10_000, request.workers) : corpus('warm', -request.workers, request.workers);
    await Promise.all(stored(warm).map((f) => pool.extract(f)));
    const files = stored(request.corpus === 'documents' ? await documents('doc', 0, request.rounds) : corpus('doc', 0, request.rounds));

    const started = performance.now();
    const cpu = process.cpuUsage();
    const threadsBefore = threadCpu();
    await Promise.all(files.map((f) => pool.extract(f)));
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    const threadsAfter = threadCpu();
    let workerSeconds: number | undefined;
    if (threadsBefore && threadsAfter && config.INGEST_WORKER_NICE > 0) {
      workerSeconds = 0;
      for (const [tid, t] of threadsAfter)
        if (t.nice === config.INGEST_WORKER_NICE) workerSeconds += t.seconds - (threadsBefore.get(tid)?.seconds ?? 0);
    }
    return { seconds, cpuSeconds: (used.user + used.system) / 1e6, ...(workerSeconds !== undefined && { workerSeconds }) };
  } finally {
    await pool.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

answerRequests(measure);
