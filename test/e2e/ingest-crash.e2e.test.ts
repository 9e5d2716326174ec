import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { API_KEY } from './harness.js';

/**
 * An accepted upload survives the process being killed mid-ingest (SIGKILL, no
 * shutdown): after a restart on the same data directory every file is processed,
 * the one that was being extracted included (its lease runs out and it is taken
 * again, attempt 2).
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const main = join(root, 'services/all-in-one/src/main.ts');

function start(dataDir: string) {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', main], {
    cwd: root,
    env: {
      ...process.env,
      LOG_LEVEL: 'warn',
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      INGEST_WORKERS: '1',
      // Generous for a loaded machine; the lease (how long a dead worker's job waits) just above it.
      INGEST_TIMEOUT_MS: '20000',
      INGEST_LEASE_MS: '21000',
      INGEST_POLL_MS: '200',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const url = (async () => {
    const startAt = Date.now();
    for (;;) {
      const found = /ready at (http:\/\/[^\s]+)\/api\/v1/.exec(out)?.[1];
      if (found) return found;
      if (Date.now() - startAt > 60_000) throw new Error(`no ready line:\n${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return { child, exited, url };
}

/** A CSV big enough that extracting it takes a noticeable moment, unique per call. */
function bigCsv(label: string): Buffer {
  const rows = ['id,product,description,price'];
  for (let i = 0; i < 20_000; i++)
    rows.push(`${i},${label} item ${i},"A durable ${label} part number ${i} for solar installations",${i % 997}`);
  return Buffer.from(rows.join('\n'));
}

const status = async (url: string, id: string) => {
  const res = await fetch(`${url}/api/v1/org/kb/content/${id}`, { headers: { 'x-api-key': API_KEY } });
  assert.equal(res.status, 200);
  return (await res.json()) as { processing_status: string; attempts: number; failure_reason?: string };
};

describe('crash recovery of ingest', () => {
  it('processes every accepted upload after the process is killed mid-ingest and restarted', { timeout: 300_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'kb-crash-'));
    let proc = start(dataDir);
    try {
      const url = await proc.url;
      const form = new FormData();
      for (let i = 0; i < 6; i++) form.append('files', new Blob([bigCsv(`batch-${i}-${Date.now()}`)]), `big-${i}.csv`);
      const res = await fetch(`${url}/api/v1/org/kb/upload`, { method: 'POST', body: form, headers: { 'x-api-key': API_KEY } });
      assert.equal(res.status, 202, await res.clone().text());
      const ids = ((await res.json()) as { files: { content_id: string }[] }).files.map((f) => f.content_id);

      // Wait until one file is being extracted, then kill without any shutdown.
      const deadline = Date.now() + 30_000;
      for (;;) {
        const states = await Promise.all(ids.map((id) => status(url, id)));
        if (states.some((s) => s.processing_status === 'processing')) break;
        assert.ok(Date.now() < deadline, `nothing started processing: ${JSON.stringify(states)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      proc.child.kill('SIGKILL');
      await proc.exited;

      proc = start(dataDir);
      const url2 = await proc.url;
      const finalDeadline = Date.now() + 180_000;
      let states: Awaited<ReturnType<typeof status>>[] = [];
      for (;;) {
        states = await Promise.all(ids.map((id) => status(url2, id)));
        if (states.every((s) => s.processing_status === 'completed' || s.processing_status === 'failed')) break;
        assert.ok(Date.now() < finalDeadline, `still not done after restart: ${JSON.stringify(states)}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      assert.deepEqual(
        states.map((s) => [s.processing_status, s.failure_reason]),
        ids.map(() => ['completed', undefined]),
      );
      assert.ok(
        states.some((s) => s.attempts >= 2),
        `the file being extracted at the kill was taken again: ${JSON.stringify(states.map((s) => s.attempts))}`,
      );
    } finally {
      proc.child.kill('SIGKILL');
      await proc.exited;
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
