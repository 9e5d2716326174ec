import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const main = join(root, 'services/all-in-one/src/main.ts');

function run(env: Record<string, string>, script = main) {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', script], {
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

async function waitFor(check: () => string | undefined, timeoutMs = 90_000): Promise<string> {
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

  it('on SIGTERM answers the requests in flight, and keeps every write it accepted across a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'kb-proc-'));
    const env = { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' };
    const first = run(env);
    let second: ReturnType<typeof run> | undefined;
    try {
      const url = await waitFor(() => /ready at (http:\/\/[^\s]+)\/api\/v1/.exec(first.out())?.[1]);
      const key = /X-API-Key: ([^']+)'/.exec(first.out())![1]!;
      const headers = { 'x-api-key': key, 'content-type': 'application/json' };
      const inFlight = Array.from({ length: 30 }, (_, i) =>
        fetch(`${url}/api/v1/categories`, { method: 'POST', headers, body: JSON.stringify({ name: `In flight ${i}` }) }).then(
          async (res) => ({ status: res.status, body: (await res.json()) as { category_id?: string; name?: string } }),
          () => ({ status: 0, body: {} as { category_id?: string; name?: string } }),
        ),
      );
      // The signal comes once the process is answering them (a fixed pause could end before any
      // reached it on a busy machine), while the rest are still in flight.
      await Promise.race(inFlight);
      const signalled = Date.now();
      first.child.kill('SIGTERM');
      const answers = await Promise.all(inFlight);
      assert.equal(await first.exited, 0);
      // Liveness, not speed: the clients' keep-alive connections must not hold the process (72 s before).
      assert.ok(Date.now() - signalled < 20_000, `exited ${Date.now() - signalled} ms after SIGTERM`);
      // Accepted before the signal: 201; after the listener closed: 503 or a refused connection. Never a 500.
      assert.ok(
        answers.every((a) => [0, 201, 503].includes(a.status)),
        JSON.stringify(answers.map((a) => a.status)),
      );
      const accepted = answers.filter((a) => a.status === 201).map((a) => a.body.name);
      assert.ok(accepted.length > 0, 'some requests were in flight');

      second = run(env);
      const url2 = await waitFor(() => /ready at (http:\/\/[^\s]+)\/api\/v1/.exec(second!.out())?.[1]);
      const all = (await (await fetch(`${url2}/api/v1/categories/all`, { headers })).json()) as { name: string }[];
      const names = new Set(all.map((c) => c.name));
      for (const name of accepted) assert.ok(names.has(name!), `${name} survived the restart`);
      second.child.kill('SIGTERM');
      assert.equal(await second.exited, 0);
    } finally {
      first.child.kill('SIGKILL');
      second?.child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('refuses to start with a bad setting and names the variable', async () => {
    const p = run({ PORT: 'not-a-port', DATA_DIR: join(tmpdir(), 'kb-never') });
    assert.equal(await p.exited, 1);
    assert.match(p.err(), /PORT/);
  });

  it('refuses to start with a bad telemetry endpoint and names the variable', async () => {
    const p = run({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318', DATA_DIR: join(tmpdir(), 'kb-never') });
    assert.equal(await p.exited, 1);
    assert.match(p.err(), /OTEL_EXPORTER_OTLP_ENDPOINT="collector:4318" is invalid/);
  });
});

describe('each service entry point (one container per service)', () => {
  // The service's own variable, wrong, next to a missing INTERNAL_TOKEN: both are named, without a stack trace.
  const cases: [string, Record<string, string>, RegExp][] = [
    [
      'gateway',
      { PORT: 'eighty', KNOWLEDGE_BASE_GRPC: 'kb', INGEST_GRPC: 'i:1', ANALYTICS_GRPC: 'a:1' },
      /PORT="eighty" is invalid[\s\S]*KNOWLEDGE_BASE_GRPC="kb" is invalid/,
    ],
    ['knowledge-base', { SEARCH_INDEX: 'lucene' }, /SEARCH_INDEX="lucene" is invalid/],
    ['ingest', { INGEST_WORKERS: '0' }, /INGEST_WORKERS="0" is invalid/],
    ['analytics', { SCHEDULER_TICK_MS: 'soon' }, /SCHEDULER_TICK_MS="soon" is invalid/],
    ['publishing', { DELIVERY_TICK_MS: 'soon' }, /DELIVERY_TICK_MS="soon" is invalid/],
  ];
  for (const [service, env, named] of cases) {
    it(`${service}: a wrong or missing value stops the start with exit code 1 and names the variable`, async () => {
      const p = run({ ...env, INTERNAL_TOKEN: '', DATA_DIR: join(tmpdir(), 'kb-never') }, join(root, `services/${service}/src/main.ts`));
      assert.equal(await p.exited, 1);
      assert.match(p.err(), named);
      assert.match(p.err(), /INTERNAL_TOKEN is required/);
      assert.match(p.err(), new RegExp(`^${service} cannot start`));
      assert.doesNotMatch(p.err(), /\n\s+at /, 'no stack trace');
    });
  }
});
