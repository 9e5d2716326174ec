import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { API_KEY } from './harness.js';
import { startAllInOneProcess } from './all-in-one-process.js';

/**
 * Work never stalls after a crash (issue 13, item 1). The real process is
 * killed with SIGKILL (no shutdown at all) at random points while uploads are
 * being accepted and files extracted; after each restart on the same data
 * directory, every upload that was acknowledged (202) must leave queued and
 * processing within 60 s of the restart. With the default settings: the job
 * leases are short and renewed by a heartbeat, and a process that starts takes
 * over the jobs of its dead predecessor at once.
 */
const ROUNDS = 3;
const AFTER_RESTART_MS = 60_000;

const start = (dataDir: string) => startAllInOneProcess(dataDir, { INGEST_WORKERS: '1', INGEST_POLL_MS: '200' });

/** A CSV big enough that extracting it takes a noticeable moment, unique per call. */
function bigCsv(label: string): Buffer {
  const rows = ['id,product,description,price'];
  for (let i = 0; i < 8_000; i++)
    rows.push(`${i},${label} item ${i},"A durable ${label} part number ${i} for solar installations",${i % 997}`);
  return Buffer.from(rows.join('\n'));
}

type State = { processing_status: string; attempts: number; failure_reason?: string };
const status = async (url: string, id: string): Promise<State> => {
  const res = await fetch(`${url}/api/v1/org/kb/content/${id}`, { headers: { 'x-api-key': API_KEY } });
  assert.equal(res.status, 200);
  return (await res.json()) as State;
};

describe('crash recovery of ingest', () => {
  it(
    'after kill -9 at random points, every acknowledged upload leaves queued/processing within 60 s of the restart',
    { timeout: 900_000 },
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'kb-crash-'));
      const acknowledged: string[] = [];
      let proc = start(dataDir);
      let sawProcessingAtKill = false;
      try {
        for (let round = 0; round < ROUNDS; round++) {
          const url = await proc.url;
          // Keep uploading (two files a request) until the kill; only 202s count as acknowledged.
          let killed = false;
          const uploader = (async () => {
            for (let n = 0; !killed; n++) {
              const form = new FormData();
              for (let i = 0; i < 2; i++)
                form.append('files', new Blob([bigCsv(`r${round}-u${n}-f${i}-${Date.now()}`)]), `r${round}-${n}-${i}.csv`);
              try {
                const res = await fetch(`${url}/api/v1/org/kb/upload`, { method: 'POST', body: form, headers: { 'x-api-key': API_KEY } });
                if (res.status !== 202) continue;
                const body = (await res.json()) as { files: { content_id: string }[] };
                acknowledged.push(...body.files.map((f) => f.content_id));
              } catch {
                return; // the connection died with the process: not acknowledged
              }
            }
          })();
          // A random point: during uploads, queueing, extraction or recording.
          const delay = randomInt(300, 4_000);
          await new Promise((r) => setTimeout(r, delay));
          // The first round waits for a file being extracted, so at least one kill hits one.
          for (const waitUntil = Date.now() + 60_000; ;) {
            const states = await Promise.all(acknowledged.map((id) => status(url, id).catch(() => undefined)));
            if (states.some((s) => s?.processing_status === 'processing')) sawProcessingAtKill = true;
            if (round > 0 || sawProcessingAtKill || Date.now() > waitUntil) break;
            await new Promise((r) => setTimeout(r, 20));
          }
          killed = true;
          proc.child.kill('SIGKILL');
          await proc.exited;
          await uploader;

          proc = start(dataDir);
          const url2 = await proc.url;
          const restartedAt = Date.now();
          let states: State[] = [];
          for (;;) {
            states = await Promise.all(acknowledged.map((id) => status(url2, id)));
            if (states.every((s) => s.processing_status === 'completed' || s.processing_status === 'failed')) break;
            assert.ok(
              Date.now() - restartedAt < AFTER_RESTART_MS,
              `round ${round} (killed after ${delay} ms): still queued or processing ${AFTER_RESTART_MS / 1000} s after the restart: ` +
                JSON.stringify(states.filter((s) => s.processing_status !== 'completed' && s.processing_status !== 'failed')),
            );
            await new Promise((r) => setTimeout(r, 200));
          }
          assert.deepEqual(
            states.filter((s) => s.processing_status !== 'completed'),
            [],
            `round ${round}: every acknowledged file is processed`,
          );
        }
        assert.ok(acknowledged.length > 0, 'some uploads were acknowledged');
        assert.ok(sawProcessingAtKill, 'at least one kill hit a file being processed');
      } finally {
        proc.child.kill('SIGKILL');
        await proc.exited;
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  );
});
