/**
 * The ingest benchmark's HTTP client, run in a child process of its own (forked
 * by ingest.bench.ts) so that its CPU (building forms, encoding multipart,
 * parsing answers, polling) is not counted as the pipeline's and does not share
 * the service's event loop. Driven over IPC: each message names a corpus and how
 * to upload it; the answer says when the uploads were answered and when every
 * file was settled (completed or failed).
 */
import { answerRequests } from './bench-child.js';
import { corpus, type CorpusFile } from './ingest-corpus.js';
import { documents } from './ingest-documents.js';

/** samples: the twelve fixtures; documents: ordinary-sized documents (ingest-documents.ts). */
export type CorpusKind = 'samples' | 'documents';

export type ClientRequest =
  | { kind: 'warm-up'; url: string; key: string; corpus: CorpusKind; workers: number }
  | {
      kind: 'run';
      url: string;
      key: string;
      corpus: CorpusKind;
      prefix: string;
      first: number;
      rounds: number;
      perRequest: number;
      clients: number;
    };

export interface ClientReply {
  uploadSeconds: number;
  seconds: number;
  files: number;
  failed: number;
  requests: number;
  /** CPU seconds this client process used for the run. */
  clientCpuSeconds: number;
  /** Latency of a cheap API call (GET /org/me, every 20 ms) while the run lasted, in ms. */
  probe: { count: number; p50: number; p95: number; max: number };
}

function chunked<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

const settledStatus = (s: string) => s === 'completed' || s === 'failed';

/**
 * Waits until every item is completed or failed; answers how many failed. Items are
 * processed in the order they were queued, so it polls the newest one still pending
 * (one small request every 10 ms) and, once that one is settled, sweeps the listing
 * for any other still pending: exact to 10 ms, and cheap for the service.
 */
async function settle(url: string, key: string, ids: string[]): Promise<number> {
  const headers = { 'x-api-key': key };
  const pending = new Set(ids);
  const failedIds = new Set<string>();
  const mark = (id: string, status: string) => {
    if (!settledStatus(status)) return;
    pending.delete(id);
    if (status === 'failed') failedIds.add(id);
  };
  while (pending.size > 0) {
    const newest = [...pending].at(-1)!;
    const res = await fetch(`${url}/api/v1/org/kb/content/${newest}`, { headers });
    const item = (await res.json()) as { processing_status: string };
    mark(newest, item.processing_status);
    if (pending.has(newest)) {
      await new Promise((r) => setTimeout(r, 10));
      continue;
    }
    for (let offset = 0; pending.size > 0; offset += 100) {
      const page = (await (await fetch(`${url}/api/v1/content?limit=100&offset=${offset}`, { headers })).json()) as {
        items: { id: string; processing_status: string }[];
        total_count: number;
      };
      for (const i of page.items) if (pending.has(i.id)) mark(i.id, i.processing_status);
      if (offset + 100 >= page.total_count) break;
    }
  }
  return failedIds.size;
}

/**
 * How responsive the API stays while files are ingested: GET /org/me (answered by the
 * gateway alone) every 20 ms until `done`, each call's latency recorded.
 */
function probeLatency(url: string, key: string) {
  const latencies: number[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const sent = performance.now();
      const res = await fetch(`${url}/api/v1/org/me`, { headers: { 'x-api-key': key } });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`GET /org/me answered ${res.status}`);
      latencies.push(performance.now() - sent);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
    const sorted = latencies.sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
    return { count: sorted.length, p50: at(0.5), p95: at(0.95), max: sorted.at(-1) ?? 0 };
  };
}

/** Uploads the files (requests of `perRequest` files, `clients` at a time), then waits until every file is settled. */
async function run(url: string, key: string, files: CorpusFile[], perRequest: number, clients: number): Promise<ClientReply> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const stopProbe = probeLatency(url, key);
  const ids: string[] = [];
  const requests = chunked(files, perRequest);
  let next = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < requests.length) {
        const form = new FormData();
        for (const f of requests[next++]!) form.append('files', new Blob([f.bytes]), f.name);
        const res = await fetch(`${url}/api/v1/org/kb/upload`, { method: 'POST', body: form, headers: { 'x-api-key': key } });
        if (res.status !== 202) throw new Error(`upload answered ${res.status}: ${await res.text()}`);
        ids.push(...((await res.json()) as { files: { content_id: string }[] }).files.map((f) => f.content_id));
      }
    }),
  );
  const uploadSeconds = (performance.now() - started) / 1000;
  const failed = await settle(url, key, ids);
  const seconds = (performance.now() - started) / 1000;
  const probe = await stopProbe();
  const used = process.cpuUsage(cpu);
  return {
    uploadSeconds,
    seconds,
    files: files.length,
    failed,
    requests: requests.length,
    clientCpuSeconds: (used.user + used.system) / 1e6,
    probe,
  };
}

async function handle(request: ClientRequest): Promise<ClientReply> {
  if (request.kind === 'warm-up') {
    // One file of every format per worker, of the kind measured (as the baseline warms up on the
    // corpus's first files); copies numbered apart from any run's, so none is a duplicate.
    const warm =
      request.corpus === 'documents' ? await documents('warm', 10_000, request.workers) : corpus('warm', -request.workers, request.workers);
    return run(request.url, request.key, warm, 10, 1);
  }
  const files =
    request.corpus === 'documents'
      ? await documents(request.prefix, request.first, request.rounds)
      : corpus(request.prefix, request.first, request.rounds);
  return run(request.url, request.key, files, request.perRequest, request.clients);
}

answerRequests(handle);
