import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { loadConfig, silentLogger } from '@kb/platform';
import { mcpConfigSpec, startMcpServer, type RunningMcp } from '@kb/gateway';
import { API_KEY, startTestSystem, type TestSystem } from './harness.js';
import { logIn } from './identity-fixtures.js';
import { callTool, mcpClient, ok, rawMcp } from './mcp-fixtures.js';

/**
 * The MCP server deployed as its own process (tools dispatched to the gateway
 * over HTTP) and on stdio (KB_API_KEY=... node stdio-bridge.mjs, a bridge to the
 * gateway's /mcp): the same tools and answers as /mcp on the gateway.
 */
const INTERNAL_TOKEN = randomBytes(24).toString('hex');
let t: TestSystem;
let mcp: RunningMcp;
beforeAll(async () => {
  t = await startTestSystem({ INTERNAL_TOKEN });
  mcp = await startMcpServer({
    config: loadConfig(mcpConfigSpec, {
      GATEWAY_URL: t.url,
      INTERNAL_TOKEN,
      HOST: '127.0.0.1',
      PORT: '0',
      DATA_DIR: t.dataDir,
      MCP_RATE_LIMIT: '8',
    }),
    logger: silentLogger(),
  });
});
afterAll(async () => {
  await mcp.stop();
  await t.stop();
});

describe('MCP as a process of its own', () => {
  it('serves the tools with an API key, limits the rate, and points at the gateway for OAuth', async () => {
    const client = await mcpClient(mcp.url, { authorization: `Bearer ${API_KEY}` });
    const { tools } = await client.listTools();
    assert.ok(tools.some((tool) => tool.name === 'ingest_text'));
    const tree = await ok(client, 'kb_tree', { detail: 'full' });
    assert.deepEqual(tree, (await t.api('GET', '/org/kb/tree')).body);
    assert.equal((await callTool(client, 'search', { query: '' })).structuredContent!.error.code, 'validation_failed');
    await client.close();

    const denied = await rawMcp(mcp.url, { 'x-api-key': 'kb_unknown_00000000000000000000000000' });
    assert.equal(denied.status, 401);
    assert.match(
      denied.headers.get('www-authenticate')!,
      new RegExp(`^Bearer error="invalid_token", .*resource_metadata="${mcp.url}/.well-known/oauth-protected-resource/mcp"$`),
    );
    const meta = (await (await fetch(`${mcp.url}/.well-known/oauth-protected-resource/mcp`)).json()) as any;
    assert.deepEqual(meta.authorization_servers, [t.url]);

    const key = (await (await logIn(t, 'admin@example.com', 'development-password')).call('POST', '/org/api-keys', { name: 'limited' }))
      .body.key;
    const statuses = [];
    for (let i = 0; i < 9; i++) statuses.push((await rawMcp(mcp.url, { 'x-api-key': key })).status);
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200, 200, 200, 429]);
  });

  it('accepts an OAuth access token from the gateway and dispatches it with the internal token', async () => {
    const admin = await logIn(t, 'admin@example.com', 'development-password');
    const redirect = 'http://localhost:9999/cb';
    const reg = (await (
      await fetch(`${t.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'Process test', redirect_uris: [redirect] }),
      })
    ).json()) as any;
    const verifier = randomBytes(32).toString('base64url');
    const params = {
      response_type: 'code',
      client_id: reg.client_id,
      redirect_uri: redirect,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    };
    const consent = await fetch(`${t.url}/oauth/authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${admin.token}` },
      body: JSON.stringify({ ...params, decision: 'allow' }),
      redirect: 'manual',
    });
    const code = new URL(consent.headers.get('location')!).searchParams.get('code')!;
    const tokens = (await (
      await fetch(`${t.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          code_verifier: verifier,
          client_id: reg.client_id,
          redirect_uri: redirect,
        }),
      })
    ).json()) as any;
    const client = await mcpClient(mcp.url, { authorization: `Bearer ${tokens.access_token}` });
    assert.equal((await ok(client, 'kb_tree')).parent_id, null);
    await client.close();
  });
});

describe('MCP on stdio', () => {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const bridge = 'services/gateway/src/mcp/stdio-bridge.mjs';
  const run = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [bridge, ...args], {
      cwd: root,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', ...env },
      timeout: 30_000,
    });

  it('KB_API_KEY=... node stdio-bridge.mjs: starts quickly, lists the tools and calls them against the gateway', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bridge, '--gateway', t.url],
      env: { PATH: process.env.PATH ?? '', KB_API_KEY: API_KEY },
      cwd: root,
      stderr: 'pipe',
    });
    const stderr: string[] = [];
    transport.stderr?.on('data', (d: Buffer) => stderr.push(d.toString()));
    const client = new Client({ name: 'stdio-test', version: '1' });
    const started = performance.now();
    await client.connect(transport);
    const { tools } = await client.listTools();
    console.info(`stdio: initialize and tools/list in ${Math.round(performance.now() - started)} ms`);
    assert.ok(tools.some((tool) => tool.name === 'search'));
    assert.equal((await ok(client, 'kb_tree')).parent_id, null);
    // The gateway's own results: shaped and capped, errors as tool errors.
    assert.equal((await callTool(client, 'search', { query: '' })).structuredContent!.error.code, 'validation_failed');
    await client.close();
    assert.match(stderr.join(''), /bridged to http/, 'messages for people go to stderr');
  });

  it('writes nothing but JSON-RPC to stdout, and the toolsets chosen reach the gateway', async () => {
    const child = spawn(process.execPath, [bridge, '--gateway', t.url, '--toolsets', 'kb', '--read-only'], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', KB_API_KEY: API_KEY },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const lines: string[] = [];
    let buffer = '';
    const answered = new Promise<void>((resolve) =>
      child.stdout.on('data', (d: Buffer) => {
        buffer += d.toString();
        const parts = buffer.split('\n');
        buffer = parts.pop()!;
        lines.push(...parts);
        if (lines.some((l) => l.includes('"id":2'))) resolve();
      }),
    );
    const send = (m: unknown) => child.stdin.write(`${JSON.stringify(m)}\n`);
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    await answered;
    child.stdin.end();
    await new Promise((resolve) => child.once('exit', resolve));
    for (const line of lines) assert.equal(JSON.parse(line).jsonrpc, '2.0', `stdout holds only JSON-RPC: ${line}`);
    const listed = lines.map((l) => JSON.parse(l)).find((m) => m.id === 2);
    assert.ok(listed?.result, JSON.stringify(lines));
    const names = listed.result.tools.map((tool: { name: string }) => tool.name);
    assert.ok(
      names.every((n: string) => n.startsWith('kb_')),
      names.join(', '),
    );
    assert.ok(!names.includes('kb_create_folder'), 'read-only');
  });

  it('--help answers without a stack trace; a missing key or --api-key is a clear error on stderr, nothing on stdout', () => {
    const help = run(['--help']);
    assert.equal(help.status, 0);
    assert.match(help.stdout, /KB_API_KEY=<API key> node services\/gateway\/src\/mcp\/stdio-bridge\.mjs/);
    assert.doesNotMatch(help.stdout + help.stderr, /\n\s+at /, 'no stack trace');
    const noKey = run([]);
    assert.equal(noKey.status, 2);
    assert.equal(noKey.stdout, '');
    assert.match(noKey.stderr, /set KB_API_KEY/);
    const onCommandLine = run(['--api-key', API_KEY]);
    assert.equal(onCommandLine.status, 2);
    assert.match(onCommandLine.stderr, /--api-key is not taken/);
    const unknown = run(['--frobnicate'], { KB_API_KEY: API_KEY });
    assert.equal(unknown.status, 2);
    assert.doesNotMatch(unknown.stderr, /\n\s+at /);
  });
});
