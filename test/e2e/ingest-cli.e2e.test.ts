import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { API_KEY, startTestSystem, type TestSystem } from './harness.js';
import { newApiKey, newOrgAdmin } from './identity-fixtures.js';
import { SAMPLES, fixturesDir } from './ingest-helpers.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

let t: TestSystem;
let dir: string;
beforeAll(async () => {
  t = await startTestSystem();
  dir = mkdtempSync(join(tmpdir(), 'kb-cli-'));
  for (const name of SAMPLES) copyFileSync(join(fixturesDir, name), join(dir, name));
  mkdirSync(join(dir, 'more'));
  copyFileSync(join(fixturesDir, 'sample.pdf'), join(dir, 'more', 'copy-of-sample.pdf'));
  copyFileSync(join(fixturesDir, 'corrupt.pdf'), join(dir, 'more', 'corrupt.pdf'));
  writeFileSync(join(dir, 'more', 'notes.md'), '# Notes\n\nMarkdown goes in as raw text.\n');
  writeFileSync(join(dir, 'more', 'logo.png'), Buffer.from('89504e470d0a1a0a', 'hex'));
});
afterAll(async () => {
  await t.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A new organization with credits and an API key of its own, so its content and ledger are this test's alone. */
async function freshOrg(label: string): Promise<{ key: string }> {
  const admin = await newOrgAdmin(t, label);
  const grant = await admin.call('POST', '/org/credits/grants', { amount: 1000 });
  assert.equal(grant.status < 300, true, grant.text);
  return newApiKey(admin, { name: `${label} importer` });
}

/** Twelve files (two upload calls) and two Markdown files, none failing, none a duplicate of another. */
function cleanFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), 'kb-cli-clean-'));
  for (const name of SAMPLES) copyFileSync(join(fixturesDir, name), join(folder, name));
  mkdirSync(join(folder, 'notes'));
  writeFileSync(join(folder, 'notes', 'a.md'), '# Decisions\n\nWe ship on Fridays.\n');
  writeFileSync(join(folder, 'notes', 'b.md'), '# Owners\n\nThe importer belongs to the platform team.\n');
  folders.push(folder);
  return folder;
}
const folders: string[] = [];
afterAll(() => folders.forEach((f) => rmSync(f, { recursive: true, force: true })));

const contentCount = async (key: string) => {
  const res = await t.api('GET', '/content?limit=100', { key });
  assert.equal(res.status, 200, res.text);
  return res.body.total_count as number;
};

type LedgerEntry = { operation: string; amount: number; balance_after: number };
const ledger = async (key: string) => {
  const res = await t.api('GET', '/org/credits/usage', { key });
  assert.equal(res.status, 200, res.text);
  return (res.body as LedgerEntry[]).map(({ operation, amount, balance_after }) => ({ operation, amount, balance_after }));
};

const bodyOf = async (req: IncomingMessage) => {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts);
};

/**
 * A proxy in front of the system that fails once in each way a network or a
 * busy server does: the first upload is refused with 503 and Retry-After: 1
 * (nothing reaches the server), the first raw text reaches the server but its
 * answer is replaced by a 502 (the client cannot know it was created), and the
 * first poll of a content item has its connection dropped.
 */
async function flakyProxy(target: string) {
  const faults: string[] = [];
  let refusedAt = 0;
  let waitedMs = 0;
  const server: Server = createServer(async (req, res) => {
    const path = req.url ?? '/';
    const body = await bodyOf(req);
    if (path.endsWith('/org/kb/upload') && !faults.includes('upload 503')) {
      faults.push('upload 503');
      refusedAt = Date.now();
      res.writeHead(503, { 'retry-after': '1', 'content-type': 'application/json' });
      return res.end('{"error":{"code":"unavailable","message":"busy"}}');
    }
    if (path.endsWith('/org/kb/upload') && refusedAt && !waitedMs) waitedMs = Date.now() - refusedAt;
    if (req.method === 'GET' && path.includes('/org/kb/content/') && !faults.includes('poll connection dropped')) {
      faults.push('poll connection dropped');
      return req.socket.destroy();
    }
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([name]) => !['host', 'content-length', 'connection'].includes(name)),
    ) as Record<string, string>;
    const upstream = await fetch(`${target}${path}`, { method: req.method!, headers, ...(body.length > 0 && { body }) });
    const answer = Buffer.from(await upstream.arrayBuffer());
    if (path.endsWith('/org/kb/raw') && upstream.status === 202 && !faults.includes('raw answer lost')) {
      faults.push('raw answer lost');
      res.writeHead(502, { 'content-type': 'application/json' });
      return res.end('{"error":{"code":"downstream","message":"bad gateway"}}');
    }
    res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
    res.end(answer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    faults,
    get waitedMs() {
      return waitedMs;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function runCli(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', join(root, 'services/ingest/src/cli.ts'), ...args], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}

describe('npm run kb -- ingest <dir>', () => {
  it('uploads a folder in batches of 10 and reports created, skipped and failed files', { timeout: 120_000 }, async () => {
    const res = await runCli(['ingest', dir, '--url', t.url, '--key', API_KEY]);
    assert.equal(res.code, 1, `exit 1 because one file failed\n${res.out}\n${res.err}`);
    assert.match(res.out, /Summary: 13 created, 1 skipped \(duplicate\), 1 skipped \(unsupported\), 1 failed/, res.out);
    // Files go in path order, so the copy under more/ is uploaded first and the top-level one is its duplicate.
    assert.match(res.out, /skipped sample\.pdf: duplicate of content [0-9a-f-]{36}/);
    assert.match(res.out, /skipped more\/logo\.png: unsupported file type/);
    assert.match(res.out, /failed {2}more\/corrupt\.pdf: The PDF is corrupt/);
    assert.match(res.err, /\[#{30}\] 16\/16/);
    const listed = await t.api('GET', '/content?limit=100');
    assert.equal(listed.body.total_count, 14, '12 samples + notes.md + the corrupt PDF');

    const again = await runCli(['ingest', dir, '--url', t.url, '--key', API_KEY, '--no-wait']);
    // Every file is skipped, the Markdown (raw text) included; only the file whose processing failed is sent again.
    assert.match(
      again.out,
      /Summary: 1 created, 14 skipped \(duplicate\), 1 skipped \(unsupported\), 0 failed \(1 still processing\)/,
      again.out,
    );
    assert.match(again.out, /skipped more\/notes\.md: duplicate of content/);
  });

  it(
    'run twice on the same folder, creates nothing the second time and charges no credits twice; a new file is charged alone',
    { timeout: 180_000 },
    async () => {
      const { key } = await freshOrg('cli-rerun');
      const folder = cleanFolder();
      const first = await runCli(['ingest', folder, '--url', t.url, '--key', key]);
      assert.equal(first.code, 0, `${first.out}\n${first.err}`);
      assert.match(first.out, /Summary: 14 created, 0 skipped \(duplicate\), 0 skipped \(unsupported\), 0 failed/, first.out);
      const contentAfterFirst = await contentCount(key);
      assert.equal(contentAfterFirst, 14);
      const ledgerAfterFirst = await ledger(key);
      assert.equal(ledgerAfterFirst.filter((e) => e.operation === 'ingest').length, 4, '2 raw texts + 2 upload calls, one charge each');

      const second = await runCli(['ingest', folder, '--url', t.url, '--key', key]);
      assert.equal(second.code, 0, `${second.out}\n${second.err}`);
      assert.match(second.out, /Summary: 0 created, 14 skipped \(duplicate\), 0 skipped \(unsupported\), 0 failed/, second.out);
      assert.equal(await contentCount(key), contentAfterFirst, 'the second run created no content');
      assert.deepEqual(await ledger(key), ledgerAfterFirst, 'the second run charged nothing');

      // A new file goes in the same upload call as nine duplicates: only the new one is charged.
      writeFileSync(join(folder, 'aaa-new.txt'), 'A file added after the first import.\n');
      const third = await runCli(['ingest', folder, '--url', t.url, '--key', key]);
      assert.equal(third.code, 0, `${third.out}\n${third.err}`);
      assert.match(third.out, /Summary: 1 created, 14 skipped \(duplicate\), 0 skipped \(unsupported\), 0 failed/, third.out);
      assert.equal(await contentCount(key), contentAfterFirst + 1);
      // What one item costs: a raw text's charge, the smallest of the first run's.
      const perItem = Math.min(...ledgerAfterFirst.filter((e) => e.operation === 'ingest').map((e) => -e.amount));
      const added = (await ledger(key)).filter((e) => !ledgerAfterFirst.some((old) => JSON.stringify(old) === JSON.stringify(e)));
      assert.deepEqual(
        added.map((e) => [e.operation, e.amount]),
        [['ingest', -perItem]],
        'one item created, one charged',
      );
      const balance = (await t.api('GET', '/org/credits/balance', { key })).body;
      const charged = (await ledger(key)).filter((e) => e.operation === 'ingest').reduce((sum, e) => sum - e.amount, 0);
      assert.deepEqual(
        [balance.balance, balance.reserved, balance.spent_this_month],
        [1000 - charged, 0, charged],
        'the unused part of the reservation went back to the balance',
      );
    },
  );

  it(
    'retries transient failures (503 with Retry-After, a lost answer, a dropped connection) without creating anything twice',
    { timeout: 180_000 },
    async () => {
      const { key } = await freshOrg('cli-retry');
      const folder = cleanFolder();
      const proxy = await flakyProxy(t.url);
      try {
        const res = await runCli(['ingest', folder, '--url', proxy.url, '--key', key]);
        assert.equal(res.code, 0, `${res.out}\n${res.err}`);
        assert.match(res.out, /retry {3}POST \/org\/kb\/upload: HTTP 503; attempt 2/, res.out);
        assert.match(res.out, /retry {3}POST \/org\/kb\/raw: HTTP 502; attempt 2/, res.out);
        assert.match(res.out, /retry {3}GET \/org\/kb\/content\/[0-9a-f-]{36}: /, res.out);
        // The raw text whose answer was lost was created by the first attempt; the retry finds it a duplicate.
        assert.match(res.out, /Summary: 13 created, 1 skipped \(duplicate\), 0 skipped \(unsupported\), 0 failed/, res.out);
        assert.deepEqual(proxy.faults, ['raw answer lost', 'upload 503', 'poll connection dropped']);
        assert.ok(proxy.waitedMs >= 900, `the retry after Retry-After: 1 came ${proxy.waitedMs} ms later`);
        assert.equal(await contentCount(key), 14, 'nothing was created twice');
      } finally {
        await proxy.close();
      }
    },
  );

  it('prints usage and exits 2 without a directory, and reports a wrong key', async () => {
    const none = await runCli(['ingest']);
    assert.equal(none.code, 2);
    assert.match(none.err, /Usage: npm run kb -- ingest <dir>/);
    const bad = await runCli(['ingest', dir, '--url', t.url, '--key', 'kb_wrong_key_000000000000000000', '--no-wait']);
    assert.equal(bad.code, 1);
    assert.match(bad.out, /HTTP 401/);
  });
});
