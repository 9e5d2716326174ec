/**
 * The ingest benchmark's baseline, run in a child process of its own (forked by
 * ingest.bench.ts): the bare extraction (format sniffing and the extraction
 * libraries, one file after another, no pipeline) over the corpus the pipeline
 * is given. In a process of its own so the service's process holds only what
 * `npm start` holds: the extraction libraries, their source maps and pdf.js's
 * polyfills, loaded into the service's main thread (which the service never
 * does), made that thread's heap larger and its code slower. Source maps are off,
 * as in the extraction workers, so both load the libraries the same way.
 */
import type { CorpusKind } from './ingest-client.js';
import { answerRequests } from './bench-child.js';
import { threadCpu } from './thread-cpu.js';

export interface BareRequest {
  corpus: CorpusKind;
  rounds: number;
}

export interface BareReply {
  files: number;
  bytes: number;
  characters: number;
  seconds: number;
  /** CPU seconds of this process, every thread (V8's compiler and GC helpers too). */
  cpuSeconds: number;
  /** Of which the thread that extracts (Linux: /proc; undefined elsewhere). */
  ownThreadSeconds?: number;
}

/** CPU seconds of this process's main thread so far (Linux; undefined elsewhere). */
const ownThreadCpu = () => threadCpu()?.get(process.pid)?.seconds;

process.setSourceMapsEnabled(false);
const { DEFAULT_LIMITS, extractFile } = await import('@kb/ingest/extract');
const { corpus } = await import('./ingest-corpus.js');
const { documents } = await import('./ingest-documents.js');

const limits = { ...DEFAULT_LIMITS, maxUncompressedBytes: 200 * 1024 * 1024, maxCompressionRatio: 200 };

async function measure(request: BareRequest): Promise<BareReply> {
  const files = request.corpus === 'documents' ? await documents('doc', 0, request.rounds) : corpus('doc', 0, request.rounds);
  // One warm-up pass over the first file of each format, as the pipeline's workers also warm up.
  for (const f of files.slice(0, 12)) await extractFile({ bytes: f.bytes, filename: f.name }, limits);
  const started = performance.now();
  const cpu = process.cpuUsage();
  const ownBefore = ownThreadCpu();
  let characters = 0;
  for (const f of files) {
    const { blocks } = await extractFile({ bytes: f.bytes, filename: f.name }, limits);
    for (const b of blocks) characters += b.text.length;
  }
  const used = process.cpuUsage(cpu);
  const ownAfter = ownThreadCpu();
  return {
    files: files.length,
    bytes: files.reduce((sum, f) => sum + f.bytes.length, 0),
    characters,
    seconds: (performance.now() - started) / 1000,
    cpuSeconds: (used.user + used.system) / 1e6,
    ...(ownBefore !== undefined && ownAfter !== undefined && { ownThreadSeconds: ownAfter - ownBefore }),
  };
}

answerRequests(measure);
