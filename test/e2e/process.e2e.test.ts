import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const main = join(root, 'services/all-in-one/src/main.ts');

function run(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', main], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, out: () => stdout, err: () => stderr };
}

async function waitFor(check: () => string | undefined, timeoutMs = 30_000): Promise<string> {
  const start = Date.now();
  for (;;) {
    const found = check();
    if (found) return found;
    if (Date.now() - start > timeoutMs) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('the npm start process', () => {
  it('prints its URL and a working curl, serves requests, and exits 0 on SIGTERM', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'kb-proc-'));
    const p = run({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' });
    try {
      const url = await waitFor(() => /ready at (http:\/\/[^\s]+)\/api\/v1/.exec(p.out())?.[1]);
      const curl = /curl -s -X POST \S+ -H 'X-API-Key: ([^']+)'/.exec(p.out());
      assert.ok(curl, p.out());
      const res = await fetch(`${url}/api/v1/categories`, {
        method: 'POST',
        headers: { 'x-api-key': curl[1]!, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'From the printed curl' }),
      });
      assert.equal(res.status, 201);
      p.child.kill('SIGTERM');
      assert.equal(await p.exited, 0);
    } finally {
      p.child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('refuses to start with a bad setting and names the variable', async () => {
    const p = run({ PORT: 'not-a-port', DATA_DIR: join(tmpdir(), 'kb-never') });
    assert.equal(await p.exited, 1);
    assert.match(p.err(), /PORT/);
  });
});
