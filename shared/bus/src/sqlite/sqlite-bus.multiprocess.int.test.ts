import { describe, it, beforeAll, afterAll, afterEach } from 'vitest';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import type { EventBus } from '../port.js';
import { createSqliteEventBus } from './index.js';

const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
const workerScript = fileURLToPath(new URL('./sqlite-bus.multiprocess.worker.ts', import.meta.url));

interface Handled {
  seq: number;
  worker: string;
  key: string;
  value: string;
  partition: number;
  offset: number;
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}

describe('SQLite bus shared by several processes', () => {
  let dir: string;
  let busPath: string;
  let resultsPath: string;
  let results: Database.Database;
  let bus: EventBus;
  const children: ChildProcess[] = [];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'kb-bus-multiprocess-'));
    busPath = join(dir, 'bus.db');
    resultsPath = join(dir, 'results.db');
    results = new Database(resultsPath);
    results.pragma('journal_mode = WAL');
    results.pragma('busy_timeout = 5000');
    results.exec(`CREATE TABLE handled (
      seq INTEGER PRIMARY KEY AUTOINCREMENT, worker TEXT NOT NULL, key TEXT NOT NULL,
      value TEXT NOT NULL, partition INTEGER NOT NULL, offset INTEGER NOT NULL)`);
    bus = createSqliteEventBus({ path: busPath });
  });

  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    results.exec('DELETE FROM handled');
  });

  afterAll(async () => {
    await bus.close();
    results.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const handled = () => results.prepare('SELECT * FROM handled ORDER BY seq').all() as Handled[];

  /** Starts a consumer process and resolves once it has joined the group. */
  async function startWorker(name: string, topic: string, groupId: string, env: Record<string, string> = {}) {
    const child = spawn(
      process.execPath,
      ['--conditions=source', '--import', 'tsx', workerScript, busPath, resultsPath, topic, groupId, name],
      { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'inherit'] },
    );
    children.push(child);
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await waitFor(() => output.includes('ready') || child.exitCode !== null, `${name} to join`);
    assert.ok(output.includes('ready'), `${name} started`);
    return {
      child,
      async stop() {
        child.stdin!.write('stop\n');
        assert.equal(await exited, 0, `${name} stopped cleanly`);
      },
    };
  }

  async function publishInRounds(topic: string, prefix: string, rounds: number, keys: number): Promise<string[]> {
    const published: string[] = [];
    for (let round = 0; round < rounds; round++) {
      const batch = Array.from({ length: keys }, (_, k) => ({ key: `org-${k}`, value: `${prefix}-${round}-${k}` }));
      await bus.publish(topic, batch);
      published.push(...batch.map((m) => m.value));
      await sleep(5); // interleave publishing with consumption in the other processes
    }
    return published;
  }

  function assertOrderPerKey(rows: Handled[]): void {
    const lastOffset = new Map<string, number>();
    for (const row of rows) {
      const previous = lastOffset.get(row.key);
      assert.ok(previous === undefined || row.offset > previous, `order of ${row.key} at offset ${row.offset}`);
      lastOffset.set(row.key, row.offset);
    }
  }

  it('splits one group between processes joining and leaving mid-stream, handling each message once', { timeout: 60_000 }, async () => {
    const topic = `mp-${randomUUID().slice(0, 8)}`;
    const groupId = `mp-${randomUUID().slice(0, 8)}`;
    const env = { BUS_WORKER_WORK_MS: '4' };
    await bus.ensureTopics([topic]);
    const a = await startWorker('a', topic, groupId, env);

    // Keep publishing (faster than one process handles) while b joins and a
    // leaves, so both hand-overs happen with messages in flight and a backlog.
    const published: string[] = [];
    let feeding = true;
    const feeder = (async () => {
      for (let round = 0; feeding && round < 1000; round++) published.push(...(await publishInRounds(topic, `m${round}`, 1, 16)));
    })();
    const b = await startWorker('b', topic, groupId, env);
    await waitFor(() => handled().some((r) => r.worker === 'b'), 'b to take over partitions');
    await a.stop();
    published.push(...(await publishInRounds(topic, 'after-a-left', 5, 16)));
    feeding = false;
    await feeder;
    await waitFor(() => handled().length >= published.length, `${published.length} handled messages`);
    await sleep(300);

    const rows = handled();
    assert.equal(rows.length, published.length, 'nothing handled twice');
    assert.deepEqual(rows.map((r) => r.value).sort(), [...published].sort());
    assert.ok(rows.some((r) => r.worker === 'a') && rows.some((r) => r.worker === 'b'), 'both processes handled messages');
    assertOrderPerKey(rows);

    await b.stop();
  });

  it('moves the partitions of a crashed process to the survivor after the session timeout', { timeout: 60_000 }, async () => {
    const topic = `mp-crash-${randomUUID().slice(0, 8)}`;
    const groupId = `mp-crash-${randomUUID().slice(0, 8)}`;
    const env = { BUS_SESSION_TIMEOUT_MS: '600' };
    await bus.ensureTopics([topic]);
    const a = await startWorker('a', topic, groupId, env);
    const b = await startWorker('b', topic, groupId, env);

    const early = await publishInRounds(topic, 'early', 10, 16);
    await waitFor(() => handled().length >= early.length, 'the early messages');
    assert.ok(
      handled().some((r) => r.worker === 'a'),
      'a took part before the crash',
    );
    a.child.kill('SIGKILL');

    const late = await publishInRounds(topic, 'late', 10, 16);
    const all = [...early, ...late];
    await waitFor(() => new Set(handled().map((r) => r.value)).size >= all.length, 'every message after the crash');

    const rows = handled();
    assert.deepEqual([...new Set(rows.map((r) => r.value))].sort(), [...all].sort());
    const lateRows = rows.filter((r) => r.value.startsWith('late-'));
    assert.ok(
      lateRows.every((r) => r.worker === 'b'),
      'the survivor handled everything after the crash',
    );
    assert.equal(new Set(lateRows.map((r) => r.partition)).size, 4, 'including the partitions a had');
    // At-least-once: only a message a handled but had not committed when killed may repeat.
    assert.ok(rows.length - all.length <= 4, `at most one redelivery per partition (got ${rows.length - all.length})`);

    await b.stop();
  });
});
