import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { API_KEY, startTestSystem, type TestSystem } from './harness.js';
import { logIn, type SignedIn } from './identity-fixtures.js';
import { mcpClient, ok, rawMcp } from './mcp-fixtures.js';

/**
 * The MCP specification's MUSTs and SHOULDs for a remote server: Origin
 * validation, tokens bound to this server (RFC 8707), WWW-Authenticate with
 * error="invalid_token" (RFC 6750), -32002 for a resource that does not exist.
 */
const ALLOWED = 'https://assistant.example';
let t: TestSystem;
let admin: SignedIn;
beforeAll(async () => {
  // other.example: another MCP server of this issuer (the mcp process would be one).
  t = await startTestSystem({
    MCP_ALLOWED_ORIGINS: `${ALLOWED}, https://other-allowed.example`,
    OAUTH_RESOURCES: 'https://other.example/mcp',
  });
  admin = await logIn(t, 'admin@example.com', 'development-password');
});
afterAll(async () => t.stop());

const REDIRECT = 'http://127.0.0.1:33420/callback';
const form = (body: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(body).toString(),
  redirect: 'manual' as const,
});

async function register(): Promise<string> {
  const reg = await fetch(`${t.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Spec assistant', redirect_uris: [REDIRECT] }),
  });
  assert.equal(reg.status, 201);
  return ((await reg.json()) as { client_id: string }).client_id;
}

/** Consent and token exchange; `resource` at the authorization request and optionally another at the token request. */
async function tokenFor(clientId: string, resource?: string, tokenResource?: string) {
  const verifier = randomBytes(32).toString('base64url');
  const params = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state: 's',
    ...(resource && { resource }),
  };
  const consent = await fetch(`${t.url}/oauth/authorize`, form({ ...params, session_token: admin.token, decision: 'allow' }));
  // An invalid request is shown on a page, not redirected.
  if (consent.status === 400) return { error: /<code>([a-z_]+)<\/code>/.exec(await consent.text())?.[1] };
  assert.equal(consent.status, 302, await consent.clone().text());
  const location = new URL(consent.headers.get('location')!);
  if (location.searchParams.get('error')) return { error: location.searchParams.get('error')! };
  const res = await fetch(
    `${t.url}/oauth/token`,
    form({
      grant_type: 'authorization_code',
      code: location.searchParams.get('code')!,
      code_verifier: verifier,
      client_id: clientId,
      redirect_uri: REDIRECT,
      ...((tokenResource ?? resource) && { resource: tokenResource ?? resource! }),
    }),
  );
  return (await res.json()) as { access_token?: string; refresh_token?: string; error?: string };
}

describe('MCP: Origin validation', () => {
  it('an Origin not allowed by configuration is 403; its own origin, a configured one and none are served', async () => {
    const evil = await rawMcp(t.url, { 'x-api-key': API_KEY, origin: 'https://evil.example' });
    assert.equal(evil.status, 403);
    assert.equal(((await evil.json()) as any).error.code, 'origin_not_allowed');
    for (const origin of [ALLOWED, 'https://other-allowed.example', new URL(t.url).origin, undefined]) {
      const res = await rawMcp(t.url, { 'x-api-key': API_KEY, ...(origin && { origin }) });
      assert.equal(res.status, 200, String(origin));
      await res.text();
    }
    // Checked before the credential: a page from elsewhere learns nothing about keys.
    assert.equal((await rawMcp(t.url, { origin: 'https://evil.example' })).status, 403);
  });
});

describe('MCP: tokens bound to this server (RFC 8707)', () => {
  it('a token for another resource is refused with invalid_token; one for this server works; a bad resource is invalid_target', async () => {
    const clientId = await register();
    const other = await tokenFor(clientId, 'https://other.example/mcp');
    assert.ok(other.access_token, JSON.stringify(other));
    const refused = await rawMcp(t.url, { authorization: `Bearer ${other.access_token}` });
    assert.equal(refused.status, 401);
    assert.match(
      refused.headers.get('www-authenticate')!,
      /^Bearer error="invalid_token", error_description="[^"]*other\.example[^"]*", resource_metadata="/,
    );
    assert.equal(((await refused.json()) as any).error.code, 'invalid_audience');

    const mine = await tokenFor(clientId, `${t.url}/mcp`);
    const client = await mcpClient(t.url, { authorization: `Bearer ${mine.access_token}` });
    assert.ok((await ok(client, 'kb_tree')).kb_node_id);
    await client.close();

    // A client that names no resource (older clients) gets a token for any of this issuer's servers.
    const unbound = await tokenFor(clientId);
    assert.equal((await rawMcp(t.url, { authorization: `Bearer ${unbound.access_token}` })).status, 200);

    assert.equal((await tokenFor(clientId, 'not a uri')).error, 'invalid_target');
    assert.equal((await tokenFor(clientId, `${t.url}/mcp`, 'https://other.example/mcp')).error, 'invalid_target');
  });
});

describe('MCP: WWW-Authenticate (RFC 6750)', () => {
  it('no credential: the metadata only; malformed: invalid_request; unknown key or revoked token: invalid_token', async () => {
    const metadata = `resource_metadata="${t.url}/.well-known/oauth-protected-resource/mcp"`;
    assert.equal((await rawMcp(t.url, {})).headers.get('www-authenticate'), `Bearer ${metadata}`);
    assert.equal(
      (await rawMcp(t.url, { authorization: 'Basic abc' })).headers.get('www-authenticate'),
      `Bearer error="invalid_request", ${metadata}`,
    );
    const unknown = await rawMcp(t.url, { 'x-api-key': 'kb_unknown_00000000000000000000000000' });
    assert.equal(unknown.status, 401);
    assert.match(
      unknown.headers.get('www-authenticate')!,
      new RegExp(`^Bearer error="invalid_token", error_description="[^"]+", ${metadata}$`),
    );

    const clientId = await register();
    const tokens = await tokenFor(clientId, `${t.url}/mcp`);
    assert.equal((await fetch(`${t.url}/oauth/revoke`, form({ token: tokens.refresh_token!, client_id: clientId }))).status, 200);
    const revoked = await rawMcp(t.url, { authorization: `Bearer ${tokens.access_token}` });
    assert.equal(revoked.status, 401);
    assert.match(revoked.headers.get('www-authenticate')!, /^Bearer error="invalid_token"/);
  });
});

describe('MCP: resources that do not exist', () => {
  it('resources/read of an unknown URI or a missing document is -32002', async () => {
    const client = await mcpClient(t.url, { 'x-api-key': API_KEY });
    for (const uri of ['kb://nothing/here', `kb://content/${randomUUID()}`, 'https://example.com/x']) {
      const err = await client.readResource({ uri }).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof McpError, `${uri}: ${String(err)}`);
      assert.equal(err.code, -32002, uri);
    }
    await client.close();
  });
});
