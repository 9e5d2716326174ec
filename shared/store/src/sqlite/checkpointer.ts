import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * WAL checkpoints off the main thread. By default SQLite checkpoints inside the
 * COMMIT that grows the WAL past 1000 pages, on the committing thread: it copies
 * pages into the database file and fsyncs it, and under I/O load that stalled the
 * event loop for tens of milliseconds. Connections registered here turn that off
 * (`wal_autocheckpoint` raised to FALLBACK_PAGES, so a stalled checkpointer still
 * cannot let the WAL grow without bound) and one worker thread per process runs a
 * PASSIVE checkpoint of every registered file every INTERVAL_MS on its own
 * connection (one per file however many register it). PASSIVE never blocks writers or readers; the next write after a
 * complete one starts the WAL over. Durability is unchanged: a commit is in the
 * WAL (synced as `synchronous` says) whether or not it was checkpointed yet.
 */
export const INTERVAL_MS = 250;
export const FALLBACK_PAGES = 10_000;

// Plain JavaScript, so it runs the same from sources (tsx) and from dist.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
// One connection per file, however many registrations (every service's bus shares one file).
const files = new Map();
const owners = new Map();
const checkpointAll = () => {
  for (const file of files.values()) {
    try { file.db.pragma('wal_checkpoint(PASSIVE)'); } catch {}
  }
};
parentPort.on('message', (m) => {
  if (m.type === 'add') {
    try {
      let file = files.get(m.path);
      if (!file) {
        const db = new Database(m.path, { fileMustExist: true });
        db.pragma('synchronous = NORMAL');
        file = { db, ids: new Set() };
        files.set(m.path, file);
      }
      file.ids.add(m.id);
      owners.set(m.id, m.path);
    } catch {}
  } else if (m.type === 'remove') {
    const path = owners.get(m.id);
    owners.delete(m.id);
    const file = files.get(path);
    if (file && file.ids.delete(m.id) && file.ids.size === 0) {
      files.delete(path);
      try { file.db.close(); } catch {}
    }
    parentPort.postMessage({ type: 'removed', id: m.id });
  } else if (m.type === 'checkpoint') {
    checkpointAll();
    parentPort.postMessage({ type: 'checkpointed', id: m.id });
  }
});
setInterval(checkpointAll, workerData.intervalMs);
`;

type Reply = { type: 'removed' | 'checkpointed'; id: number };

let worker: Worker | undefined;
let registered = 0;
let nextId = 1;
const waiting = new Map<string, () => void>();

function ensureWorker(): Worker {
  if (worker) return worker;
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const w = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, intervalMs: INTERVAL_MS } });
  w.on('message', (m: Reply) => {
    const key = `${m.type}:${m.id}`;
    waiting.get(key)?.();
    waiting.delete(key);
    if (waiting.size === 0) w.unref();
  });
  // After the listener, which refs the worker again: an idle checkpointer never holds the process
  // open (a process that never closed its store hung for ever); one with an answer due does.
  w.unref();
  // A dead checkpointer only costs the fallback: the committing thread checkpoints at FALLBACK_PAGES.
  const forget = () => {
    if (worker === w) worker = undefined;
    for (const done of waiting.values()) done();
    waiting.clear();
  };
  w.on('error', forget);
  w.on('exit', forget);
  worker = w;
  return w;
}

function request(w: Worker, type: 'remove' | 'checkpoint', id: number): Promise<void> {
  return new Promise<void>((resolve) => {
    waiting.set(`${type === 'remove' ? 'removed' : 'checkpointed'}:${id}`, resolve);
    w.ref();
    w.postMessage({ type, id });
  });
}

export interface CheckpointRegistration {
  /** Runs a checkpoint now and resolves when it is done (tests). */
  checkpointNow(): Promise<void>;
  /** Closes the checkpointer's connection to the file (before the owner closes its own, so the last close cleans the WAL up). */
  unregister(): Promise<void>;
}

/** Takes over the WAL checkpoints of `path`, whose writer connection is `setPragma`'s. */
export function registerForCheckpoints(path: string, setPragma: (pragma: string) => void): CheckpointRegistration {
  setPragma(`wal_autocheckpoint = ${FALLBACK_PAGES}`);
  const id = nextId++;
  const w = ensureWorker();
  w.postMessage({ type: 'add', id, path });
  registered++;
  let done = false;
  return {
    checkpointNow: () => (worker === w && !done ? request(w, 'checkpoint', id) : Promise.resolve()),
    async unregister() {
      if (done) return;
      done = true;
      if (worker === w) await request(w, 'remove', id);
      if (--registered === 0 && worker === w) {
        worker = undefined;
        await w.terminate();
      }
    },
  };
}
