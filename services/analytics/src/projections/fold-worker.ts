/**
 * The worker thread that folds a batch of answers into the source and outcome
 * rows and the latest answers (see fold-thread.ts): it reads them from a
 * snapshot of the store file (the state the asking transaction started from),
 * runs the same code as the transaction would for those parts (writeBatch,
 * foldLatest), and answers with the documents to write, in pieces as it makes
 * them, so the transaction writes the first while the thread makes the rest.
 */
import { parentPort } from 'node:worker_threads';
import { snapshotSource, type SnapshotSource } from '@kb/store/sqlite';
import type { AnswerCollected } from '@kb/events';
import { factsOfEvent } from '../domain/facts.js';
import { addToBatch, emptyCountBatch } from './count-rows.js';
import { rowOverlay, type RowWrite } from './row-overlay.js';
import { hotRows } from './hot-rows.js';
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
/** Pieces of a job's writes, in order; the one with `done` is its last. */
export type FoldReply = { id: number; ok: true; writes: RowWrite[]; done: boolean } | { id: number; ok: false; message: string };

/** Writes per piece: a few per job of 1,000 answers, each a few milliseconds of the transaction's time. */
const PIECE_SIZE = 500;

/** The connection to the last job's store file, kept for the next job (jobs come one at a time). */
let source: SnapshotSource | undefined;
const rows = hotRows();

function sourceFor(file: string): SnapshotSource {
  if (source?.file === file) return source;
  forget();
  return (source = snapshotSource(file));
}

/** After a failure, or for another file: the next job opens the file afresh and parses every row it reads. */
function forget() {
  source?.close();
  source = undefined;
  rows.clear();
}

async function run(job: FoldJob, post: (reply: FoldReply) => void): Promise<void> {
  // The batch is summed here, from the events: objects made by this thread's own code keep the
  // shapes the fold is tuned for (copies made by a structured clone slowed it about twofold).
  const batch = emptyCountBatch();
  const facts = job.answers.map(({ data }) => {
    const f = factsOfEvent(data);
    addToBatch(batch, data.org_id, f, job.tags[data.prompt_id] ?? []);
    return f;
  });
  const snapshot = sourceFor(job.file).begin();
  const pieces: RowWrite[][] = [];
  const send = (writes: RowWrite[], done: boolean) => {
    pieces.push(writes);
    post({ id: job.id, ok: true, writes, done });
  };
  try {
    const overlay = rowOverlay(
      {
        get<T>(collection: string, id: string) {
          const json = snapshot.getJson(collection, id);
          return json === undefined ? undefined : rows.parse<T>(collection, id, json);
        },
        has: (collection, id) => snapshot.getJson(collection, id) !== undefined,
      },
      { pieceSize: PIECE_SIZE, onPiece: (writes) => send(writes, false) },
    );
    const legacy = new Set(job.legacy);
    await writeBatch(overlay, batch, (orgId) => legacy.has(orgId), { counts: false, sources: true });
    for (const [i, { data, body }] of job.answers.entries())
      await foldLatest(overlay, data, facts[i]!, new Map(data.tracked_mentions.map((m) => [m.key, m.name])), body);
    send(overlay.take(), true);
  } finally {
    snapshot.close();
  }
  rows.wrote(pieces);
  // While the transaction writes the last piece and commits, and the next batch is prepared.
  setImmediate(() => rows.prepare());
}

parentPort!.on('message', (job: FoldJob) => {
  run(job, (reply) => parentPort!.postMessage(reply)).catch((err: unknown) => {
    forget();
    parentPort!.postMessage({ id: job.id, ok: false, message: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  });
});
