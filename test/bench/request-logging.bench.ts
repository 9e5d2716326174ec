/**
 * What request logging costs on the search path (issue: the gateway used to
 * write two info lines per request). The same searches, 16 clients at a time,
 * against three gateways that differ only in logging, each with the production
 * logger (JSON lines, redaction) writing to /dev/null at level info:
 *   - silent: no log line at all (the baseline),
 *   - REQUEST_LOG=all: one line per request,
 *   - REQUEST_LOG=changes (the default): successful reads at debug, so none here.
 *
 *   npm run bench:logging        (REQUESTS=n per configuration, default 3000)
 */
import { createWriteStream } from 'node:fs';
import { createLogger, silentLogger } from '@kb/platform';
import { startTestSystem } from '../e2e/harness.js';
import { contentFeed, orgIdOf } from '../e2e/search-fixtures.js';
import { loadScifact } from './scifact.js';

const REQUESTS = Number(process.env.REQUESTS ?? 3000);
const CLIENTS = 16;
const { corpus, queries } = loadScifact();
const docs = corpus.slice(0, 1000);

interface Row {
  name: string;
  rps: number;
  p50: number;
  p99: number;
}

async function run(name: string, env: Record<string, string>, logger: ReturnType<typeof silentLogger>): Promise<Row> {
  const t = await startTestSystem({ BOOTSTRAP_CREDITS: '100000000', ...env }, { logger });
  try {
    const feed = contentFeed(t);
    const org = await orgIdOf(t);
    for (const d of docs) await feed.put(org, { title: d.title, chunks: [d.text] });
    await feed.close();
    // Wait until the index has them all (a search for a late title finds it).
    for (;;) {
      const res = await t.api('POST', '/search', { body: { query: docs.at(-1)!.title, max_results: 1 } });
      if (res.status === 200 && res.body.total_results > 0) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const send = async (i: number) => {
      const res = await t.api('POST', '/search', { body: { query: queries[i % queries.length]!.text, max_results: 5 } });
      if (res.status !== 200) throw new Error(res.text);
    };
    for (let i = 0; i < 200; i++) await send(i); // warm-up
    const lat: number[] = [];
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next < REQUESTS) {
          const i = next++;
          const t0 = performance.now();
          await send(i);
          lat.push(performance.now() - t0);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    lat.sort((a, b) => a - b);
    return { name, rps: REQUESTS / seconds, p50: lat[Math.floor(lat.length / 2)]!, p99: lat[Math.floor(lat.length * 0.99)]! };
  } finally {
    await t.stop();
  }
}

const toNull = () => createLogger({ level: 'info', destination: createWriteStream('/dev/null') });
const rows = [
  await run('silent logger (baseline)', {}, silentLogger()),
  await run('REQUEST_LOG=all (one line per request)', { REQUEST_LOG: 'all' }, toNull()),
  await run('REQUEST_LOG=changes (default)', { REQUEST_LOG: 'changes' }, toNull()),
];
const base = rows[0]!;
console.log(`\nPOST /search, ${CLIENTS} clients, ${REQUESTS} requests each, ${docs.length} documents; logger at info to /dev/null`);
console.log('| configuration | req/s | p50 ms | p99 ms | req/s vs baseline |');
console.log('|---|---|---|---|---|');
for (const r of rows)
  console.log(`| ${r.name} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${(r.rps / base.rps).toFixed(3)}x |`);
