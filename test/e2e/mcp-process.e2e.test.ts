import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
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
 * over HTTP) and on stdio (`npm run mcp -- --api-key ...`): the same tools and
 * answers as /mcp on the gateway.
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
    assert.equal(denied.headers.get('www-authenticate'), `Bearer resource_metadata="${mcp.url}/.well-known/oauth-protected-resource/mcp"`);
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
  it('npm run mcp -- --api-key KEY: lists the tools and calls them against the gateway', async () => {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--conditions=source', '--import', 'tsx', 'services/gateway/src/mcp/stdio.ts', '--api-key', API_KEY, '--gateway', t.url],
      cwd: root,
      stderr: 'ignore',
    });
    const client = new Client({ name: 'stdio-test', version: '1' });
    await client.connect(transport);
    const { tools } = await client.listTools();
    assert.ok(tools.some((tool) => tool.name === 'search'));
    assert.equal((await ok(client, 'kb_tree')).parent_id, null);
    await client.close();
  });
});
