/**
 * Upload flood memory (issue 13, item 3): peak RSS of the service (the
 * all-in-one process as `npm start` runs it, its node flags included, measured
 * from /proc) while 50 clients each upload 10
 * files of 1 MB at once, against the payload size, in the same run. Clients
 * honour 503 Retry-After (the in-flight budget) and send again. Target: peak RSS
 * / payload under 1.5. Linux only (reads /proc/<pid>/status).
 *
 *   npm run bench:upload-memory
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { developmentDefaults } from '@kb/all-in-one';

const CLIENTS = Number(process.env.CLIENTS ?? 50);
const FILES = 10;
const FILE_BYTES = 1024 * 1024;
const TARGET = 1.5;

const root = fileURLToPath(new URL('../..', import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), 'kb-bench-upload-'));
// The service as `npm start` runs it: the node flags of its script (its main thread's young generation among them).
const startScript = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start.split(
  /\s+/,
);
const entry = startScript.indexOf('services/all-in-one/src/main.ts');
if (startScript[0] !== 'node' || entry < 0) throw new Error(`npm start is no longer "node <flags> services/all-in-one/src/main.ts"`);
const nodeFlags = startScript.slice(1, entry);
const child = spawn(process.execPath, [...nodeFlags, join(root, 'services/all-in-one/src/main.ts')], {
  cwd: root,
  env: { ...process.env, LOG_LEVEL: 'warn', DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' },
  stdio: ['ignore', 'pipe', 'pipe'],
});
let out = '';
child.stdout.on('data', (d: Buffer) => (out += d.toString()));
child.stderr.on('data', (d: Buffer) => (out += d.toString()));

/** kB fields of /proc/<pid>/status: VmRSS (now) and VmHWM (peak since start). */
function memory(): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** A 1 MB CSV, unique per client and file (so none is skipped as a duplicate). */
function file(client: number, n: number): Buffer {
  const head = `id,client,file,text\n`;
  const line = `${client}-${n},${client},${n},"a row of the upload flood benchmark about panels and inverters"\n`;
  const body = Buffer.alloc(FILE_BYTES, line);
  Buffer.from(head).copy(body);
  return body;
}

const mb = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MB`;

async function main() {
  const started = Date.now();
  let url: string | undefined;
  while (!url) {
    url = /ready at (http:\/\/[^\s]+)\/api\/v1/.exec(out)?.[1];
    if (Date.now() - started > 120_000) throw new Error(`no ready line:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  await new Promise((r) => setTimeout(r, 2000));
  const idle = memory();
  const payload = CLIENTS * FILES * FILE_BYTES;
  let refused = 0;
  let accepted = 0;
  const t0 = Date.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, client) => {
      for (;;) {
        const form = new FormData();
        for (let n = 0; n < FILES; n++) form.append('files', new Blob([file(client, n)]), `flood-${client}-${n}.csv`);
        const res = await fetch(`${url}/api/v1/org/kb/upload`, {
          method: 'POST',
          body: form,
          headers: { 'x-api-key': developmentDefaults.BOOTSTRAP_API_KEY },
        });
        const text = await res.text();
        if (res.status === 503) {
          refused++;
          await new Promise((r) => setTimeout(r, Number(res.headers.get('retry-after') ?? 1) * 1000));
          continue;
        }
        if (res.status !== 202) throw new Error(`client ${client}: ${res.status} ${text}`);
        accepted++;
        return;
      }
    }),
  );
  const seconds = (Date.now() - t0) / 1000;
  const after = memory();
  const ratio = after.peak / payload;
  console.log(`upload flood: ${CLIENTS} clients x ${FILES} files x ${mb(FILE_BYTES)} = ${mb(payload)} payload in ${seconds.toFixed(1)} s`);
  console.log(`  accepted requests ${accepted}, 503 answers (retried) ${refused}`);
  console.log(`  baseline (idle RSS after start): ${mb(idle.rss)}; RSS after: ${mb(after.rss)}; peak RSS: ${mb(after.peak)}`);
  console.log(
    `  peak RSS / payload: ${ratio.toFixed(2)} (target < ${TARGET}); growth over baseline / payload: ${((after.peak - idle.rss) / payload).toFixed(2)}`,
  );
  if (ratio >= TARGET) process.exitCode = 1;
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => {
    child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });
