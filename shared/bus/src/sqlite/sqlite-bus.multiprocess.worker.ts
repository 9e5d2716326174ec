// A consumer process for sqlite-bus.multiprocess.int.test.ts: joins a group on a
// shared bus file and records every delivery in a results file (the global
// AUTOINCREMENT order tells the test what was handled when, across processes).
// Prints "ready" once subscribed; "stop" on stdin (or SIGTERM) stops it cleanly.
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { createSqliteEventBus } from './index.js';

const [busPath, resultsPath, topic, groupId, worker] = process.argv.slice(2);
if (!busPath || !resultsPath || !topic || !groupId || !worker) {
  throw new Error('usage: sqlite-bus.multiprocess.worker.ts <bus.db> <results.db> <topic> <group> <worker-name>');
}

const workMs = Number(process.env.BUS_WORKER_WORK_MS ?? 1);
const results = new Database(resultsPath);
results.pragma('busy_timeout = 5000');
const record = results.prepare('INSERT INTO handled (worker, key, value, partition, offset) VALUES (?, ?, ?, ?, ?)');

const bus = createSqliteEventBus({
  path: busPath,
  pollIntervalMs: 10,
  sessionTimeoutMs: Number(process.env.BUS_SESSION_TIMEOUT_MS ?? 10_000),
});
const subscription = await bus.subscribe({
  groupId,
  topics: [topic],
  fromBeginning: true,
  handler: async (message) => {
    record.run(worker, message.key, message.value, message.partition, Number(message.offset));
    // Some work per message, so a backlog builds up and rebalances happen mid-stream.
    await sleep(workMs);
  },
});
process.stdout.write('ready\n');

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await subscription.stop();
  await bus.close();
  results.close();
  process.stdout.write('stopped\n');
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() === 'stop') void stop();
});
