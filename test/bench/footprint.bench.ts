/**
 * Footprint of the embedded runtime (docs/production.md, Hardware): the service as `npm start`
 * runs it ingests ITEMS raw texts (distinct paragraphs of ordinary prose), then this reports its
 * chunks, the data directory's size on disk, and the process's resident memory at rest and at
 * its peak, per chunk and scaled to a million chunks. Linux only (reads /proc/<pid>/status).
 *
 *   npm run bench:footprint            (ITEMS=400 by default)
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { developmentDefaults } from '@kb/all-in-one';

const ITEMS = Number(process.env.ITEMS ?? 400);
const PARAGRAPHS = 8;
const root = fileURLToPath(new URL('../..', import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), 'kb-bench-footprint-'));
const startScript = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start.split(
  /\s+/,
);
const entry = startScript.indexOf('services/all-in-one/src/main.ts');
const child = spawn(process.execPath, [...startScript.slice(1, entry), join(root, 'services/all-in-one/src/main.ts')], {
  cwd: root,
  env: { ...process.env, LOG_LEVEL: 'warn', DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' },
  stdio: ['ignore', 'pipe', 'pipe'],
});
let out = '';
child.stdout.on('data', (d: Buffer) => (out += d.toString()));
child.stderr.on('data', (d: Buffer) => (out += d.toString()));

const rssMb = (field: 'VmRSS' | 'VmHWM') =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
const sizeOf = (dir: string): number =>
  readdirSync(dir, { withFileTypes: true }).reduce(
    (n, e) => n + (e.isDirectory() ? sizeOf(join(dir, e.name)) : statSync(join(dir, e.name)).size),
    0,
  );

const WORDS =
  'panel inverter battery warranty installer roof cable meter grid tariff export storage charge cycle season shade angle tilt frame mount bracket fuse breaker isolator monitor app report yield output input voltage current'.split(
    ' ',
  );
/** A paragraph of about 90 words, different for every item and paragraph (so nothing is a duplicate). */
const paragraph = (item: number, p: number) => {
  let seed = item * 7919 + p * 104729 + 1;
  const next = () => (seed = (seed * 48271) % 2147483647);
  const sentences = Array.from({ length: 6 }, () => {
    const words = Array.from({ length: 15 }, () => WORDS[next() % WORDS.length]!);
    return `${words.join(' ').replace(/^\w/, (c) => c.toUpperCase())} ${item}.${p}.`;
  });
  return sentences.join(' ');
};

try {
  let url: string | undefined;
  while (!(url = /ready at (http:\/\/\S+)\/api\/v1/.exec(out)?.[1])) {
    if (child.exitCode !== null) throw new Error(out);
    await new Promise((r) => setTimeout(r, 100));
  }
  const api = `${url}/api/v1`;
  const headers = { 'X-API-Key': developmentDefaults.BOOTSTRAP_API_KEY, 'Content-Type': 'application/json' };
  const atRest = rssMb('VmRSS');
  // The stores' fixed size (empty SQLite files, the development organization): what the chunks add is measured beyond it.
  const emptyDisk = sizeOf(dataDir) / 1024 / 1024;
  const started = Date.now();
  const ids: string[] = [];
  for (let i = 0; i < ITEMS; i++) {
    const text = Array.from({ length: PARAGRAPHS }, (_, p) => `## Part ${p + 1}\n\n${paragraph(i, p)}`).join('\n\n');
    const res = await fetch(`${api}/org/kb/raw`, { method: 'POST', headers, body: JSON.stringify({ title: `Note ${i}`, text }) });
    if (res.status !== 202) throw new Error(`${res.status} ${await res.text()}`);
    ids.push(((await res.json()) as { id: string }).id);
  }
  let chunks = 0;
  for (const id of ids) {
    for (;;) {
      const item = (await (await fetch(`${api}/org/kb/content/${id}`, { headers })).json()) as { processing_status: string };
      if (item.processing_status === 'completed') break;
      if (item.processing_status === 'failed') throw new Error(`${id} failed`);
      await new Promise((r) => setTimeout(r, 200));
    }
    chunks += ((await (await fetch(`${api}/org/kb/content/${id}/chunks?limit=1`, { headers })).json()) as { total_count: number })
      .total_count;
  }
  // Indexing follows ingest through the bus: wait until a search finds the last item.
  for (;;) {
    const res = await fetch(`${api}/org/search`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ query: `${ITEMS - 1}.${PARAGRAPHS - 1}` }),
    });
    const body = (await res.json()) as { context?: { content_id: string }[] };
    if (body.context?.some((c) => c.content_id === ids.at(-1))) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const seconds = (Date.now() - started) / 1000;
  const disk = sizeOf(dataDir) / 1024 / 1024;
  const peak = rssMb('VmHWM');
  const added = disk - emptyDisk;
  const perMillion = (mb: number) => `${(((mb / chunks) * 1e6) / 1024).toFixed(1)} GB`;
  console.log(
    JSON.stringify(
      {
        items: ITEMS,
        chunks,
        seconds: Math.round(seconds),
        rss_at_rest_mb: Math.round(atRest),
        rss_peak_mb: Math.round(peak),
        rss_after_mb: Math.round(rssMb('VmRSS')),
        disk_empty_mb: Math.round(emptyDisk),
        disk_mb: Math.round(disk),
        disk_kb_per_chunk: Number(((added * 1024) / chunks).toFixed(2)),
        disk_per_million_chunks: perMillion(added),
      },
      null,
      2,
    ),
  );
} finally {
  child.kill('SIGTERM');
  await new Promise((r) => child.on('exit', r));
  rmSync(dataDir, { recursive: true, force: true });
}
