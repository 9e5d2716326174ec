/**
 * The worker thread that folds a batch of answers into the source and outcome
 * rows and the latest answers (see fold-thread.ts): it reads them from a
 * snapshot of the store file (the state the asking transaction started from),
 * runs the same code as the transaction would for those parts (writeBatch,
 * foldLatest), and answers with the documents to write.
 */
import { parentPort } from 'node:worker_threads';
import { openSnapshot } from '@kb/store/sqlite';
import type { AnswerCollected } from '@kb/events';
import { factsOfEvent } from '../domain/facts.js';
import { addToBatch, emptyCountBatch } from './count-rows.js';
import { rowOverlay, type RowWrite } from './row-overlay.js';
import { writeBatch } from './write-batch.js';
import { foldLatest } from './latest.js';

/** An answer handed over: its event's data and the text and URLs its body keeps. */
export interface HandedAnswer {
  data: AnswerCollected;
  body: { text: string; citations: string[] };
}

export interface FoldJob {
  id: number;
  file: string;
  /** In the order the transaction appends them. */
  answers: readonly HandedAnswer[];
  /** The tags of each of their prompts. */
  tags: Record<string, string[]>;
  /** Organizations whose answers predate their extent (writeBatch's legacy). */
  legacy: string[];
}
export type FoldReply = { id: number; ok: true; writes: RowWrite[] } | { id: number; ok: false; message: string };

async function run(job: FoldJob): Promise<FoldReply> {
  // The batch is summed here, from the events: objects made by this thread's own code keep the
  // shapes the fold is tuned for (copies made by a structured clone slowed it about twofold).
  const batch = emptyCountBatch();
  const facts = job.answers.map(({ data }) => {
    const f = factsOfEvent(data);
    addToBatch(batch, data.org_id, f, job.tags[data.prompt_id] ?? []);
    return f;
  });
  const snapshot = openSnapshot(job.file);
  try {
    const overlay = rowOverlay((collection, id) => snapshot.get(collection, id));
    const legacy = new Set(job.legacy);
    await writeBatch(overlay, batch, (orgId) => legacy.has(orgId), { counts: false, sources: true });
    for (const [i, { data, body }] of job.answers.entries())
      await foldLatest(overlay, data, facts[i]!, new Map(data.tracked_mentions.map((m) => [m.key, m.name])), body);
    return { id: job.id, ok: true, writes: overlay.writes() };
  } finally {
    snapshot.close();
  }
}

parentPort!.on('message', (job: FoldJob) => {
  run(job).then(
    (reply) => parentPort!.postMessage(reply),
    (err: unknown) =>
      parentPort!.postMessage({ id: job.id, ok: false, message: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
  );
});
