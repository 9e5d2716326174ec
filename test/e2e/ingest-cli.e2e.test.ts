import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { API_KEY, startTestSystem, type TestSystem } from './harness.js';
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
  it('uploads a folder in batches of 10 and reports completed, skipped and failed files', { timeout: 120_000 }, async () => {
    const res = await runCli(['ingest', dir, '--url', t.url, '--key', API_KEY]);
    assert.equal(res.code, 1, `exit 1 because one file failed\n${res.out}\n${res.err}`);
    assert.match(res.out, /Summary: 13 completed, 2 skipped, 1 failed/, res.out);
    // Files go in path order, so the copy under more/ is uploaded first and the top-level one is its duplicate.
    assert.match(res.out, /skipped sample\.pdf: duplicate of existing content/);
    assert.match(res.out, /skipped more\/logo\.png: unsupported file type/);
    assert.match(res.out, /failed {2}more\/corrupt\.pdf: The PDF is corrupt/);
    assert.match(res.err, /\[#{30}\] 16\/16/);
    const listed = await t.api('GET', '/content?limit=100');
    assert.equal(listed.body.total_count, 14, '12 samples + notes.md + the corrupt PDF');

    const again = await runCli(['ingest', dir, '--url', t.url, '--key', API_KEY, '--no-wait']);
    // Duplicates are skipped; Markdown is raw text (not deduplicated) and a failed file may be sent again.
    assert.match(again.out, /Summary: 0 completed, 14 skipped, 0 failed, 2 queued/, again.out);
  });

  it('prints usage and exits 2 without a directory, and reports a wrong key', async () => {
    const none = await runCli(['ingest']);
    assert.equal(none.code, 2);
    assert.match(none.err, /Usage: npm run kb -- ingest <dir>/);
    const bad = await runCli(['ingest', dir, '--url', t.url, '--key', 'kb_wrong_key_000000000000000000', '--no-wait']);
    assert.equal(bad.code, 1);
    assert.match(bad.out, /HTTP 401/);
  });
});
