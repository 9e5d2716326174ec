/**
 * The worker thread that merges a batch into the source and outcome rows (see
 * count-row-thread.ts): it reads the rows from a snapshot of the store file
 * (the state the asking transaction started from), runs the same writeBatch as
 * the transaction would for that part, and answers with the documents to write.
 */
import { parentPort } from 'node:worker_threads';
import { openSnapshot } from '@kb/store/sqlite';
import type { AnswerCollected } from '@kb/events';
import { factsOfEvent } from '../domain/facts.js';
import { addToBatch, emptyCountBatch } from './count-rows.js';
import { rowOverlay, type RowWrite } from './row-overlay.js';
import { writeBatch } from './write-batch.js';

export interface CountRowJob {
  id: number;
  file: string;
  /** The answers' events (their facts), as the transaction appends them. */
  answers: readonly AnswerCollected[];
  /** The tags of each of their prompts. */
  tags: Record<string, string[]>;
  /** Organizations whose answers predate their extent (writeBatch's legacy). */
  legacy: string[];
}
export type CountRowReply = { id: number; ok: true; writes: RowWrite[] } | { id: number; ok: false; message: string };

async function run(job: CountRowJob): Promise<CountRowReply> {
  // The batch is summed here, from the events: objects made by this thread's own code keep the
  // shapes the fold is tuned for (copies made by a structured clone slowed it about twofold).
  const batch = emptyCountBatch();
  for (const a of job.answers) addToBatch(batch, a.org_id, factsOfEvent(a), job.tags[a.prompt_id] ?? []);
  const snapshot = openSnapshot(job.file);
  try {
    const overlay = rowOverlay((collection, id) => snapshot.get(collection, id));
    const legacy = new Set(job.legacy);
    await writeBatch(overlay, batch, (orgId) => legacy.has(orgId), { counts: false, sources: true });
    return { id: job.id, ok: true, writes: overlay.writes() };
  } finally {
    snapshot.close();
  }
}

parentPort!.on('message', (job: CountRowJob) => {
  run(job).then(
    (reply) => parentPort!.postMessage(reply),
    (err: unknown) =>
      parentPort!.postMessage({ id: job.id, ok: false, message: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
  );
});
