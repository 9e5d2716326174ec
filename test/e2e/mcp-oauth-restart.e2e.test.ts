import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { startTestSystem, type TestSystem } from './harness.js';
import { logIn, type SignedIn } from './identity-fixtures.js';
import { mcpClient, ok, rawMcp } from './mcp-fixtures.js';

/**
 * OAuth state is event-sourced: registered clients, pending codes, grants and
 * refresh-token families survive a restart of the whole system on its data
 * directory (and so are shared by gateway replicas on one store).
 */
let t: TestSystem;
let admin: SignedIn;
beforeAll(async () => {
  t = await startTestSystem();
  admin = await logIn(t, 'admin@example.com', 'development-password');
});
afterAll(async () => t.stop());

const REDIRECT = 'http://127.0.0.1:33419/callback';
const form = (body: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(body).toString(),
  redirect: 'manual' as const,
});

async function authorize(clientId: string) {
  const verifier = randomBytes(32).toString('base64url');
  const params = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state: 'restart',
  };
  const res = await fetch(`${t.url}/oauth/authorize`, form({ ...params, session_token: admin.token, decision: 'allow' }));
  assert.equal(res.status, 302, await res.clone().text());
  return { code: new URL(res.headers.get('location')!).searchParams.get('code')!, verifier };
}
const token = async (body: Record<string, string>) => {
  const res = await fetch(`${t.url}/oauth/token`, form(body));
  return { status: res.status, body: (await res.json()) as Record<string, string> };
};
const exchange = (clientId: string, a: { code: string; verifier: string }) =>
  token({ grant_type: 'authorization_code', code: a.code, code_verifier: a.verifier, client_id: clientId, redirect_uri: REDIRECT });
const refresh = (clientId: string, refreshToken: string) =>
  token({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });

describe('MCP OAuth across a restart', () => {
  it('a registered client, a pending code and a grant survive a restart; refresh rotates; reuse of a rotated token revokes the family', async () => {
    const reg = await fetch(`${t.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Restart assistant', redirect_uris: [REDIRECT] }),
    });
    assert.equal(reg.status, 201);
    const clientId = ((await reg.json()) as { client_id: string }).client_id;
    const first = await exchange(clientId, await authorize(clientId));
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const pending = await authorize(clientId);
    const rotated = await refresh(clientId, first.body.refresh_token!);
    assert.equal(rotated.status, 200, JSON.stringify(rotated.body));

    await t.restart();

    // The client is known: a new authorization for it works, and so does the code issued before.
    const later = await exchange(clientId, await authorize(clientId));
    assert.equal(later.status, 200, JSON.stringify(later.body));
    const fromPending = await exchange(clientId, pending);
    assert.equal(fromPending.status, 200, JSON.stringify(fromPending.body));
    assert.equal((await exchange(clientId, pending)).body.error, 'invalid_grant', 'still one use');

    // The grant from before: its live access token and refresh token work.
    const client = await mcpClient(t.url, { authorization: `Bearer ${rotated.body.access_token}` });
    assert.ok((await ok(client, 'kb_tree')).kb_node_id);
    await client.close();
    const next = await refresh(clientId, rotated.body.refresh_token!);
    assert.equal(next.status, 200, JSON.stringify(next.body));

    // Reuse of a refresh token rotated away before the restart revokes the whole family.
    const reused = await refresh(clientId, first.body.refresh_token!);
    assert.equal(reused.status, 400);
    assert.equal(reused.body.error, 'invalid_grant');
    assert.equal((await rawMcp(t.url, { authorization: `Bearer ${next.body.access_token}` })).status, 401);
    assert.equal((await refresh(clientId, next.body.refresh_token!)).body.error, 'invalid_grant');
    // Other grants are untouched.
    assert.equal((await rawMcp(t.url, { authorization: `Bearer ${later.body.access_token}` })).status, 200);
  });
});
