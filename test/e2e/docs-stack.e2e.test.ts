import { afterAll, beforeAll, it } from 'vitest';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeOrSkip } from '@kb/testing';
import { fencedBlocks, readDoc, REPO_ROOT, runnableKind } from '../docs/markdown.js';
import { FIRST_RUN, freePort, missingTools, runShell } from './docs-runner.js';

/**
 * The README's first walk against the distributed runtime as an operator starts it
 * (`npm run stack -- start`, every service its own process on Kafka): the same address
 * layout as `npm start` (API, console at /, /mcp), hosted pages linking to it.
 * Runs from the sources (STACK_FROM=source); the stack starts a broker of its own (scripts/kafka.sh,
 * from the jars CI fetched: KAFKA_BROKERS set says they are there), so no other suite's consumers share it.
 */
const skip =
  missingTools() ??
  (process.env.KAFKA_BROKERS
    ? undefined
    : 'skipped: KAFKA_BROKERS is not set (CI starts a broker with scripts/kafka.sh; run `scripts/kafka.sh start` and export KAFKA_BROKERS)');

const WALK_TIMEOUT_MS = 180_000;

describeOrSkip('the README walk against npm run stack', skip, () => {
  let stackDir: string;
  let url: string;
  let env: Record<string, string>;

  const stack = (command: string) =>
    spawnSync(process.execPath, ['--conditions=source', '--import', 'tsx', 'scripts/stack.ts', command], {
      cwd: REPO_ROOT,
      env,
      encoding: 'utf8',
      timeout: WALK_TIMEOUT_MS,
    });

  beforeAll(async () => {
    stackDir = mkdtempSync(join(tmpdir(), 'kb-stack-walk-'));
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    // Six gRPC ports in a row from a base unlikely to be taken (the stack checks each service listens).
    const grpcBase = 20_000 + Math.floor(Math.random() * 20_000);
    const { KAFKA_BROKERS: _shared, ...inherited } = process.env as Record<string, string>;
    env = {
      ...inherited,
      STACK_DIR: stackDir,
      STACK_FROM: 'source',
      PORT: String(port),
      STACK_GRPC_PORT: String(grpcBase),
      LOG_LEVEL: 'info',
    };
    const started = stack('start');
    assert.equal(started.status, 0, `${started.stdout}\n${started.stderr}`);
    assert.match(started.stdout, new RegExp(`ready at ${url}/api/v1, the console at ${url}/ and MCP at ${url}/mcp`));
  }, WALK_TIMEOUT_MS);

  afterAll(() => {
    if (env) stack('stop');
    if (stackDir) rmSync(stackDir, { recursive: true, force: true });
  }, 60_000);

  it('serves the console at / and MCP at /mcp on the address of npm start', async () => {
    const page = await fetch(`${url}/`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<div id="app">|<!doctype html>/i);
    const mcp = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: {
        'X-API-Key': 'kb_dev_0000000000000000000000000000',
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'docs-stack', version: '1' } },
      }),
    });
    assert.equal(mcp.status, 200, await mcp.text());
  });

  it(
    'runs the README walk; the published page links to the public address',
    async () => {
      const walk = fencedBlocks(readDoc('README.md')).filter((b) => runnableKind(b) === 'shell');
      assert.ok(walk.length > 0);
      const script = FIRST_RUN + walk.map((b) => b.code.replace(/http:\/\/(?:127\.0\.0\.1|localhost):8080/g, url)).join('\n');
      const result = await runShell(script, WALK_TIMEOUT_MS);
      assert.equal(result.code, 0, result.output.slice(-6000));
      assert.match(result.output, new RegExp(`<link rel="canonical" href="${url}/sites/development/care-guide"`));
    },
    WALK_TIMEOUT_MS,
  );
});
