import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { API_KEY, startTestSystem, type TestSystem } from './harness.js';
import { initialize, rawMcp } from './mcp-fixtures.js';
import { rawHttp } from './oauth-fixtures.js';
import { logIn } from './identity-fixtures.js';

/**
 * The MCP server's edges against a hostile caller: JSON-RPC batches count
 * message by message against the rate limit, and every answer says what is
 * left; a credential holds a bounded number of sessions; anonymous client
 * registration is limited per address.
 */
let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem({
    MCP_RATE_LIMIT: '10',
    MCP_JSON_RESPONSE: 'true',
    OAUTH_REGISTRATIONS_PER_HOUR: '3',
    MCP_SESSIONS_PER_CREDENTIAL: '2',
  });
});
afterAll(async () => t.stop());

const listTools = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/list', params: {} });

describe('MCP: the rate limit counts every message of a batch', () => {
  it('a batch spends one request per message; successful answers carry X-RateLimit-*', async () => {
    const init = await rawMcp(t.url, { 'x-api-key': API_KEY }, initialize('2025-03-26'));
    assert.equal(init.status, 200);
    assert.equal(init.headers.get('x-ratelimit-limit'), '10');
    assert.equal(init.headers.get('x-ratelimit-remaining'), '9');
    await init.text();
    const session = { 'x-api-key': API_KEY, 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-03-26' };
    const initialized = await rawMcp(t.url, session, { jsonrpc: '2.0', method: 'notifications/initialized' });
    assert.equal(initialized.status, 202);
    assert.equal(initialized.headers.get('x-ratelimit-remaining'), '8');

    const batch = await rawMcp(t.url, session, [1, 2, 3, 4, 5].map(listTools));
    assert.equal(batch.status, 200, await batch.clone().text());
    assert.equal(((await batch.json()) as unknown[]).length, 5, 'five answers');
    assert.equal(batch.headers.get('x-ratelimit-remaining'), '3', 'five messages, five requests');

    const over = await rawMcp(t.url, session, [6, 7, 8, 9].map(listTools));
    assert.equal(over.status, 429, 'four messages with three requests left');
    assert.ok(Number(over.headers.get('retry-after')) >= 1);
  });
});

describe('OAuth: anonymous client registration is bounded', () => {
  it('the fourth registration from one address in an hour is 429 with Retry-After', async () => {
    const register = () =>
      fetch(`${t.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'Flood', redirect_uris: ['https://assistant.example/cb'] }),
      });
    for (let i = 0; i < 3; i++) assert.equal((await register()).status, 201);
    const refused = await register();
    assert.equal(refused.status, 429);
    assert.equal(((await refused.json()) as { error: string }).error, 'rate_limited');
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
  });
});

describe('MCP: Origin is compared with the configured public origin, not with Host', () => {
  it('a rebinding page (its own name in Host and Origin) is 403; this server’s loopback origins are served', async () => {
    const port = new URL(t.url).port;
    // A key of its own: the batch above spent the development key's budget.
    const admin = await logIn(t, 'admin@example.com', 'development-password');
    const key = (await admin.call('POST', '/org/api-keys', { name: 'origin check' })).body.key as string;
    const post = (host: string, origin: string) =>
      rawHttp(`${t.url}/mcp`, {
        method: 'POST',
        headers: {
          host,
          origin,
          'x-api-key': key,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify(initialize()),
      });
    const rebound = await post(`evil.example:${port}`, `http://evil.example:${port}`);
    assert.equal(rebound.status, 403);
    assert.equal(JSON.parse(rebound.text).error.code, 'origin_not_allowed');
    assert.equal((await post(`localhost:${port}`, `http://localhost:${port}`)).status, 200);
    assert.equal((await post(`127.0.0.1:${port}`, `http://127.0.0.1:${port}`)).status, 200);
  });
});

describe('MCP: sessions per credential are capped', () => {
  it('a third session of one key closes its least recently used one; another key’s sessions are untouched', async () => {
    const admin = await logIn(t, 'admin@example.com', 'development-password');
    const key = (await admin.call('POST', '/org/api-keys', { name: 'sessions' })).body.key as string;
    const other = (await admin.call('POST', '/org/api-keys', { name: 'other sessions' })).body.key as string;
    const open = async (k: string) => {
      const res = await rawMcp(t.url, { 'x-api-key': k }, initialize());
      assert.equal(res.status, 200);
      await res.text();
      return res.headers.get('mcp-session-id')!;
    };
    const ping = async (k: string, session: string) => {
      const res = await rawMcp(
        t.url,
        { 'x-api-key': k, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
        {
          jsonrpc: '2.0',
          id: 2,
          method: 'ping',
        },
      );
      await res.text();
      return res.status;
    };
    const theirs = await open(other);
    const first = await open(key);
    const second = await open(key);
    const third = await open(key);
    assert.equal(await ping(key, first), 404, 'the least recently used session is closed');
    assert.equal(await ping(key, second), 200);
    assert.equal(await ping(key, third), 200);
    assert.equal(await ping(other, theirs), 200);
  });
});
