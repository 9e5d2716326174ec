/**
 * Ingest throughput: documents and megabytes per second from upload to
 * completed, for a mixed corpus of the twelve formats, through the whole
 * embedded system (HTTP multipart upload in batches of 10, gRPC to ingest, blob
 * write, event + job commit, worker-thread extraction, chunking, chunk events
 * and projections). The baseline is the bare extraction (format sniffing and the
 * extraction libraries, in this process, one file after another, no pipeline) on
 * the same files in the same run; the ratio is the pipeline's overhead.
 *
 *   npm run bench:ingest            (ROUNDS=n copies of each of the 12 samples, default 8;
 *                                    INGEST_WORKERS for the pipeline, default 2)
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
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
const totalBytes = corpus.reduce((sum, f) => sum + f.bytes.length, 0);
const mb = totalBytes / (1024 * 1024);
const limits = { ...DEFAULT_LIMITS, maxUncompressedBytes: 200 * 1024 * 1024, maxCompressionRatio: 200 };

// Baseline: the extraction libraries alone (one warm-up pass first, as the pipeline's workers also warm up).
for (const f of corpus.slice(0, SAMPLES.length)) await extractFile({ bytes: f.bytes, filename: f.name }, limits);
const baseStart = performance.now();
for (const f of corpus) await extractFile({ bytes: f.bytes, filename: f.name }, limits);
const baseSeconds = (performance.now() - baseStart) / 1000;

// Pipeline: the whole embedded system over HTTP.
const t = await startTestSystem({ INGEST_WORKERS: WORKERS, INGEST_POLL_MS: '20' });
try {
  // Warm-up upload (not timed): starts the worker threads and loads the libraries there.
  const warm = new FormData();
  warm.append('files', new Blob([variant('sample.pdf', -1)]), 'warm.pdf');
  await fetch(`${t.url}/api/v1/org/kb/upload`, { method: 'POST', body: warm, headers: { 'x-api-key': API_KEY } });
  await new Promise((r) => setTimeout(r, 2000));

  const start = performance.now();
  const ids: string[] = [];
  for (let i = 0; i < corpus.length; i += 10) {
    const form = new FormData();
    for (const f of corpus.slice(i, i + 10)) form.append('files', new Blob([f.bytes]), f.name);
    const res = await fetch(`${t.url}/api/v1/org/kb/upload`, { method: 'POST', body: form, headers: { 'x-api-key': API_KEY } });
    if (res.status !== 202) throw new Error(`upload answered ${res.status}: ${await res.text()}`);
    ids.push(...((await res.json()) as { files: { content_id: string }[] }).files.map((f) => f.content_id));
  }
  const uploadSeconds = (performance.now() - start) / 1000;
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
  const pipeSeconds = (performance.now() - start) / 1000;

  const row = (label: string, seconds: number) =>
    `${label.padEnd(38)} ${(corpus.length / seconds).toFixed(1).padStart(8)} docs/s ${(mb / seconds).toFixed(2).padStart(8)} MB/s ${seconds.toFixed(2).padStart(8)} s`;
  console.log(`Mixed corpus: ${corpus.length} files (${ROUNDS} x the 12 formats), ${mb.toFixed(2)} MB`);
  console.log(row('bare extraction (in-process, serial)', baseSeconds));
  console.log(row(`pipeline upload->completed (${WORKERS} workers)`, pipeSeconds));
  console.log(`  of which uploading (all ${Math.ceil(corpus.length / 10)} calls answered 202): ${uploadSeconds.toFixed(2)} s`);
  console.log(`pipeline time / bare extraction time: ${(pipeSeconds / baseSeconds).toFixed(2)}x` + (failed ? `  (${failed} failed!)` : ''));
} finally {
  await t.stop();
}
