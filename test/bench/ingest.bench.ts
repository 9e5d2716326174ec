/**
 * Ingest throughput: documents and megabytes per second from upload to
 * completed, for a mixed corpus of the twelve formats, through the whole
 * embedded system (HTTP multipart upload in batches of 10, gRPC to ingest, blob
 * write, event + job commit, worker-thread extraction, chunking, chunk events
 * and projections). The baseline is the bare extraction (format sniffing and the
 * extraction libraries, in this process, one file after another, no pipeline) on
 * the same files in the same run; the ratio is the pipeline's overhead.
 *
 * Measured twice: batch uploads (10 files per request, one client) and single
 * uploads (one file per request, four clients at a time).
 *
 *   npm run bench:ingest            (ROUNDS=n copies of each of the 12 samples, default 8;
 *                                    INGEST_WORKERS for the pipeline, default 2)
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { DEFAULT_LIMITS, extractFile } from '@kb/ingest/extract';
import { API_KEY, startTestSystem } from '../e2e/harness.js';

const ROUNDS = Number(process.env.ROUNDS ?? 8);
const WORKERS = process.env.INGEST_WORKERS ?? '2';
const dir = fileURLToPath(new URL('../fixtures/formats/', import.meta.url));
const SAMPLES = [
  'sample.pdf',
  'sample.txt',
  'sample.csv',
  'sample.doc',
  'sample.docx',
  'sample.xls',
  'sample.xlsx',
  'sample.ppt',
  'sample.pptx',
  'sample.html',
  'sample.json',
  'sample.xml',
];

/** A copy of a sample with different bytes (so dedupe does not skip it) and the same content. */
function variant(name: string, n: number): Buffer {
  const bytes = readFileSync(join(dir, name));
  const tag = `variant ${n}`;
  if (name.endsWith('.json')) return Buffer.from(JSON.stringify({ ...JSON.parse(bytes.toString()), variant: tag }));
  if (/\.(xml|html)$/.test(name)) return Buffer.concat([bytes, Buffer.from(`\n<!-- ${tag} -->\n`)]);
  if (/\.(txt|csv)$/.test(name)) return Buffer.concat([bytes, Buffer.from(`${tag}\n`)]);
  // Binary containers tolerate trailing bytes (PDF after %%EOF, zip after its directory, OLE2 after its sectors).
  return Buffer.concat([bytes, Buffer.from(`\n% ${tag}\n`)]);
}

const corpus = Array.from({ length: ROUNDS }, (_, n) =>
  SAMPLES.map((name) => ({ name: name.replace('sample', `doc-${n}`), bytes: variant(name, n) })),
).flat();
/** The same files with other bytes, for the second pipeline run (so none is a duplicate of the first's). */
const second = Array.from({ length: ROUNDS }, (_, n) =>
  SAMPLES.map((name) => ({ name: name.replace('sample', `single-${n}`), bytes: variant(name, 1000 + n) })),
).flat();
const totalBytes = corpus.reduce((sum, f) => sum + f.bytes.length, 0);
const mb = totalBytes / (1024 * 1024);
const limits = { ...DEFAULT_LIMITS, maxUncompressedBytes: 200 * 1024 * 1024, maxCompressionRatio: 200 };

// Baseline: the extraction libraries alone (one warm-up pass first, as the pipeline's workers also warm up).
for (const f of corpus.slice(0, SAMPLES.length)) await extractFile({ bytes: f.bytes, filename: f.name }, limits);
const baseStart = performance.now();
const baseCpu = process.cpuUsage();
for (const f of corpus) await extractFile({ bytes: f.bytes, filename: f.name }, limits);
const baseSeconds = (performance.now() - baseStart) / 1000;
const baseCpuSeconds = cpuSeconds(baseCpu);

/** CPU seconds of this process (every thread: the pipeline's workers too) since `from`; steadier than wall time on a shared machine. */
function cpuSeconds(from: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(from);
  return (used.user + used.system) / 1e6;
}

/**
 * CPU seconds of the main thread alone, where everything but extraction runs (the
 * benchmark's client too; on an idle machine what bounds the pipeline's wall
 * time); from /proc, so Linux only (undefined elsewhere). Ticks of 1/100 s (USER_HZ).
 */
function mainThreadCpuSeconds(): number | undefined {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

function chunked<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

// Pipeline: the whole embedded system over HTTP.
const t = await startTestSystem({ INGEST_WORKERS: WORKERS, INGEST_POLL_MS: '20' });
try {
  /** Waits until every item is completed or failed; answers how many failed. */
  async function settled(ids: string[]): Promise<number> {
    const pending = new Set(ids);
    let failed = 0;
    while (pending.size > 0) {
      for (let offset = 0; ; offset += 100) {
        const res = await fetch(`${t.url}/api/v1/content?limit=100&offset=${offset}`, { headers: { 'x-api-key': API_KEY } });
        const page = (await res.json()) as { items: { id: string; processing_status: string }[]; total_count: number };
        for (const item of page.items) {
          if (!pending.has(item.id)) continue;
          if (item.processing_status === 'completed' || item.processing_status === 'failed') {
            pending.delete(item.id);
            if (item.processing_status === 'failed') failed++;
          }
        }
        if (offset + 100 >= page.total_count) break;
      }
      if (pending.size > 0) await new Promise((r) => setTimeout(r, 10));
    }
    return failed;
  }

  // Warm-up (not timed): one file of every format per worker, so every worker
  // thread has loaded every extraction library (the baseline warms up too).
  const warm = new FormData();
  for (let w = 0; w < Number(WORKERS); w++)
    for (const name of SAMPLES) warm.append('files', new Blob([variant(name, -1 - w)]), `warm-${w}-${name}`);
  const warmIds: string[] = [];
  for (const part of chunked([...warm.entries()], 10)) {
    const form = new FormData();
    for (const [k, v] of part) form.append(k, v);
    const res = await fetch(`${t.url}/api/v1/org/kb/upload`, { method: 'POST', body: form, headers: { 'x-api-key': API_KEY } });
    warmIds.push(...((await res.json()) as { files: { content_id: string }[] }).files.map((f) => f.content_id));
  }
  await settled(warmIds);

  /** Uploads the corpus (requests of `perRequest` files, `clients` at a time) and waits until every file is settled. */
  async function pipeline(files: typeof corpus, perRequest: number, clients: number) {
    const started = performance.now();
    const cpu = process.cpuUsage();
    const mainCpu = mainThreadCpuSeconds();
    const ids: string[] = [];
    const requests = chunked(files, perRequest);
    let next = 0;
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (next < requests.length) {
          const form = new FormData();
          for (const f of requests[next++]!) form.append('files', new Blob([f.bytes]), f.name);
          const res = await fetch(`${t.url}/api/v1/org/kb/upload`, { method: 'POST', body: form, headers: { 'x-api-key': API_KEY } });
          if (res.status !== 202) throw new Error(`upload answered ${res.status}: ${await res.text()}`);
          ids.push(...((await res.json()) as { files: { content_id: string }[] }).files.map((f) => f.content_id));
        }
      }),
    );
    const uploadSeconds = (performance.now() - started) / 1000;
    const failed = await settled(ids);
    const mainEnd = mainThreadCpuSeconds();
    return {
      seconds: (performance.now() - started) / 1000,
      cpuSeconds: cpuSeconds(cpu),
      mainCpuSeconds: mainCpu === undefined || mainEnd === undefined ? undefined : mainEnd - mainCpu,
      uploadSeconds,
      failed,
      requests: requests.length,
    };
  }

  const profiler = process.env.PROFILE ? new Session() : undefined;
  if (profiler) {
    profiler.connect();
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.start');
  }
  const batch = await pipeline(corpus, 10, 1);
  const single = await pipeline(second, 1, 4);
  if (profiler) {
    const { profile } = await profiler.post('Profiler.stop');
    mkdirSync(process.env.PROFILE!, { recursive: true });
    writeFileSync(`${process.env.PROFILE}/ingest-pipeline.cpuprofile`, JSON.stringify(profile));
    profiler.disconnect();
  }

  const row = (label: string, seconds: number) =>
    `${label.padEnd(50)} ${(corpus.length / seconds).toFixed(1).padStart(8)} docs/s ${(mb / seconds).toFixed(2).padStart(8)} MB/s ${seconds.toFixed(2).padStart(8)} s`;
  console.log(`Mixed corpus: ${corpus.length} files (${ROUNDS} x the 12 formats), ${mb.toFixed(2)} MB, ${WORKERS} ingest workers`);
  console.log(row('bare extraction (in-process, serial)', baseSeconds));
  for (const [label, r] of [
    ['batch: 10 files per request, 1 client', batch],
    ['single: 1 file per request, 4 clients', single],
  ] as const) {
    console.log(row(`pipeline upload->completed, ${label}`, r.seconds));
    console.log(`  of which uploading (${r.requests} requests answered 202): ${r.uploadSeconds.toFixed(2)} s`);
    console.log(
      `  pipeline time / bare extraction time: ${(r.seconds / baseSeconds).toFixed(2)}x` + (r.failed ? `  (${r.failed} failed!)` : ''),
    );
    console.log(
      `  CPU seconds (all threads, the benchmark's own HTTP client included): ${r.cpuSeconds.toFixed(2)} vs ${baseCpuSeconds.toFixed(2)}, ${(r.cpuSeconds / baseCpuSeconds).toFixed(2)}x`,
    );
    if (r.mainCpuSeconds !== undefined)
      console.log(
        `  of which the main thread (all but extraction, the client included): ${r.mainCpuSeconds.toFixed(2)} s, ${((1000 * r.mainCpuSeconds) / corpus.length).toFixed(1)} ms per file;` +
          ` the other threads (extraction workers, V8's GC and compiler helpers, file I/O): ${(r.cpuSeconds - r.mainCpuSeconds).toFixed(2)} s`,
      );
  }
} finally {
  await t.stop();
}
