import type { Logger } from 'pino';
import type { DocumentReader, Store, StoreTransaction } from '@kb/store';
import type { Embeddings } from '@kb/ai';
import type { SearchIndex } from '@kb/search';

/**
 * Vectors in the background. A version is searchable by its words as soon as it is
 * extracted (the indexing consumer writes its text to the index and leaves a job here);
 * this worker embeds the chunks of pending versions and adds their vectors to the index,
 * where they join dense retrieval. Jobs live in the store, so a restart resumes them; a
 * job is per content item, so a newer version replaces an older one's job, and the index
 * refuses vectors of a version it no longer holds (SearchIndex.setVectors), so a replaced
 * or deleted version never keeps vectors.
 */
export const SEARCH_VECTOR_JOBS = 'search_vector_jobs';

export interface VectorJobDoc {
  /** The content id: one job per content item, its latest indexed version. */
  id: string;
  org_id: string;
  content_id: string;
  version_id: string;
  title: string;
  queued_at: string;
}

/** What a chunk's vector is computed from: its document's title, its heading path and its text. */
export const embeddingTextOf = (title: string, chunk: { text: string; heading_path?: string[] | undefined }): string =>
  `${title}\n${chunk.heading_path?.join(' > ') ?? ''}\n${chunk.text}`;

export async function queueVectors(tx: StoreTransaction, job: Omit<VectorJobDoc, 'id' | 'queued_at'>): Promise<void> {
  await tx.put<VectorJobDoc>(SEARCH_VECTOR_JOBS, { ...job, id: job.content_id, queued_at: new Date().toISOString() });
}

export async function dropVectorJob(tx: StoreTransaction, contentId: string): Promise<void> {
  await tx.delete(SEARCH_VECTOR_JOBS, contentId);
}

export interface VectorWorkerDeps {
  store: Store;
  index: SearchIndex;
  embeddings: Embeddings;
  logger: Logger;
  /** The chunks of a version as the indexing consumer keeps them. */
  chunksOf(reader: DocumentReader, versionId: string): Promise<{ chunk_index: number; text: string; heading_path?: string[] }[]>;
  /** The version whose text is in the index, if any (a job for another version is stale). */
  indexedVersionOf(reader: DocumentReader, contentId: string): Promise<string | undefined>;
  /** Records that a version's vectors are in the index. */
  markReady(tx: StoreTransaction, contentId: string, versionId: string): Promise<void>;
  /** True while keyword indexing is busy: vectors then take only busyShare of the time, so that words come first. */
  keywordBusy?: () => boolean;
  /** Share of the time the worker embeds while keyword indexing is busy (default 0.1). */
  busyShare?: number;
  /** Texts embedded together (several small documents in one model call). */
  batchTexts?: number;
  /** How long an idle worker sleeps before looking for jobs again. */
  idleMs?: number;
}

export function createVectorWorker(deps: VectorWorkerDeps) {
  const { store, index, embeddings, logger } = deps;
  const batchTexts = deps.batchTexts ?? 32;
  const idleMs = deps.idleMs ?? 1000;
  const busyShare = Math.min(1, Math.max(0.01, deps.busyShare ?? 0.1));
  let running = false;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;
  /** Sleeps ms; `notify` ends an idle sleep early (new work), stop ends any. */
  let idle = false;
  const sleep = (ms: number, wakeOnWork: boolean) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      idle = wakeOnWork;
      function done() {
        clearTimeout(timer);
        wake = undefined;
        idle = false;
        resolve();
      }
      wake = done;
    });

  /** Embeds a few pending versions together and writes their vectors; the number of jobs settled. */
  async function runBatch(): Promise<number> {
    const jobs = await store.find<VectorJobDoc>(SEARCH_VECTOR_JOBS, { sort: [{ field: 'queued_at', order: 'asc' }], limit: 64 });
    if (jobs.length === 0) return 0;
    const work: { job: VectorJobDoc; chunks: Awaited<ReturnType<VectorWorkerDeps['chunksOf']>> }[] = [];
    const stale: VectorJobDoc[] = [];
    let texts = 0;
    for (const job of jobs) {
      if ((await deps.indexedVersionOf(store, job.content_id)) !== job.version_id) {
        stale.push(job);
        continue;
      }
      const chunks = await deps.chunksOf(store, job.version_id);
      if (work.length > 0 && texts + chunks.length > batchTexts) break;
      work.push({ job, chunks });
      texts += chunks.length;
    }
    const vectors = await embeddings.embed(
      work.flatMap((w) => w.chunks.map((c) => embeddingTextOf(w.job.title, c))),
      'document',
    );
    let offset = 0;
    const written: VectorJobDoc[] = [];
    for (const w of work) {
      const mine = vectors.slice(offset, (offset += w.chunks.length));
      const ok = await index.setVectors(
        w.job.org_id,
        w.job.content_id,
        w.job.version_id,
        w.chunks.map((c, i) => ({ chunk_index: c.chunk_index, embedding: mine[i]! })),
      );
      (ok ? written : stale).push(w.job);
    }
    await store.transaction(async (tx) => {
      for (const job of [...written, ...stale]) {
        // A newer version queued meanwhile keeps its job.
        const current = await tx.get<VectorJobDoc>(SEARCH_VECTOR_JOBS, job.id);
        if (current?.version_id === job.version_id) await tx.delete(SEARCH_VECTOR_JOBS, job.id);
      }
      for (const job of written) await deps.markReady(tx, job.content_id, job.version_id);
    });
    logger.debug({ versions: written.length, stale: stale.length, chunks: vectors.length }, 'search vectors written');
    return written.length + stale.length;
  }

  async function run(): Promise<void> {
    while (running) {
      const started = Date.now();
      let settled = 0;
      try {
        settled = await runBatch();
      } catch (err) {
        logger.warn({ err }, 'search vectors failed; retrying');
        await sleep(idleMs * 5, false);
        continue;
      }
      if (settled === 0) await sleep(idleMs, true);
      // While documents are being indexed by their words, vectors take only their share of the time.
      else if (deps.keywordBusy?.()) await sleep((Date.now() - started) * (1 / busyShare - 1), false);
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      loop = run();
    },
    /** Looks for jobs now (a version was just indexed). */
    notify() {
      if (idle) wake?.();
    },
    async stop() {
      running = false;
      wake?.();
      await loop;
    },
    /** Versions waiting for vectors. */
    pending: () => store.count(SEARCH_VECTOR_JOBS),
  };
}

export type VectorWorker = ReturnType<typeof createVectorWorker>;
