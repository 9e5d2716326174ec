import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { startTestSystem, type TestSystem } from './harness.js';
import { logIn, newOrgAdmin, signUpAndLogIn, type SignedIn } from './identity-fixtures.js';
import { rawMcp } from './mcp-fixtures.js';
import { authorizeParams, form, rawHttp, registerClient, tokenRequest, type TokenAnswer } from './oauth-fixtures.js';

/**
 * The OAuth authorization server against hostile requests (issue 45): the
 * server's own URL comes from configuration, never from Host; tokens are issued
 * only for its own resource servers.
 */
const REDIRECT = 'http://127.0.0.1:33499/callback';
const OTHER = 'http://other.example/mcp';
let t: TestSystem;
let admin: SignedIn;
beforeAll(async () => {
  t = await startTestSystem({ MCP_RATE_LIMIT: '100000', OAUTH_REGISTRATIONS_PER_HOUR: '1000', OAUTH_RESOURCES: OTHER });
  admin = await logIn(t, 'admin@example.com', 'development-password');
});
afterAll(async () => t.stop());

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Consent by a script with the admin's session, then the code exchange; the redirect's error when refused. */
interface Outcome extends TokenAnswer {
  /** Set when the authorization endpoint answered a page (an invalid request) instead of a redirect. */
  status?: number;
  page?: string;
  code?: string;
  verifier?: string;
}

async function consentAndExchange(
  clientId: string,
  extra: Record<string, string> = {},
  tokenExtra: Record<string, string> = {},
): Promise<Outcome> {
  const { params, verifier } = authorizeParams(clientId, REDIRECT, extra);
  const consent = await fetch(`${t.url}/oauth/authorize`, form({ ...params, decision: 'allow' }, bearer(admin.token)));
  if (consent.status !== 302) return { status: consent.status, page: await consent.text() };
  const location = new URL(consent.headers.get('location')!);
  if (location.searchParams.get('error')) return { error: location.searchParams.get('error')! };
  const code = location.searchParams.get('code')!;
  const tokens = await tokenRequest(t.url, {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    client_id: clientId,
    redirect_uri: REDIRECT,
    ...tokenExtra,
  });
  return { code, verifier, ...tokens.body };
}

describe('OAuth: the server’s own URL and resources (RFC 8707)', () => {
  it('a resource that is not one of this server’s is invalid_target, at the authorization and at the token endpoint', async () => {
    const clientId = await registerClient(t.url, REDIRECT);
    const evil = await consentAndExchange(clientId, { resource: 'http://evil.example/mcp' });
    assert.equal(evil.status, 400, 'shown on a page, not redirected');
    assert.match(evil.page!, /<code>invalid_target<\/code>/);
    const atToken = await consentAndExchange(clientId, {}, { resource: 'http://evil.example/mcp' });
    assert.equal(atToken.error, 'invalid_target');
    assert.ok((await consentAndExchange(clientId, { resource: `${t.url}/mcp` })).access_token, 'its own /mcp');
    assert.ok((await consentAndExchange(clientId, { resource: OTHER })).access_token, 'a configured other server');
  });

  it('a forged Host is not reflected in metadata or WWW-Authenticate, and does not make a token bound elsewhere valid here', async () => {
    const port = new URL(t.url).port;
    const meta = await rawHttp(`${t.url}/.well-known/oauth-authorization-server`, { headers: { host: 'evil.example' } });
    assert.equal(JSON.parse(meta.text).issuer, `http://127.0.0.1:${port}`);
    const resource = await rawHttp(`${t.url}/.well-known/oauth-protected-resource/mcp`, { headers: { host: 'evil.example' } });
    assert.equal(JSON.parse(resource.text).resource, `http://127.0.0.1:${port}/mcp`);
    const challenge = await rawHttp(`${t.url}/mcp`, {
      method: 'POST',
      headers: { host: 'evil.example"', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{}',
    });
    assert.equal(challenge.status, 401);
    assert.doesNotMatch(String(challenge.headers['www-authenticate']), /evil/);
    // localhost is this server too.
    const local = await rawHttp(`${t.url}/.well-known/oauth-authorization-server`, { headers: { host: `localhost:${port}` } });
    assert.equal(JSON.parse(local.text).issuer, `http://localhost:${port}`);

    const clientId = await registerClient(t.url, REDIRECT);
    const elsewhere = await consentAndExchange(clientId, { resource: OTHER });
    assert.ok(elsewhere.access_token);
    const forged = await rawHttp(`${t.url}/mcp`, {
      method: 'POST',
      headers: {
        host: 'other.example',
        ...bearer(elsewhere.access_token),
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      }),
    });
    assert.equal(forged.status, 401, 'a token for another server is refused here whatever Host says');
    assert.equal((await rawMcp(t.url, bearer(elsewhere.access_token))).status, 401);
  });

  it('the consent page names the MCP server the tokens will be for', async () => {
    const clientId = await registerClient(t.url, REDIRECT);
    const { params } = authorizeParams(clientId, REDIRECT, { resource: `${t.url}/mcp` });
    const page = await (await fetch(`${t.url}/oauth/authorize?${new URLSearchParams(params)}`)).text();
    assert.match(page, new RegExp(`MCP server at <code>${t.url}/mcp</code>`));
  });
});

describe('OAuth consent: folders and the sign-in limit', () => {
  it('folder_ids must be folders of the chosen organization, as for an API key', async () => {
    const clientId = await registerClient(t.url, REDIRECT);
    const other = await newOrgAdmin(t, 'consentfolders');
    const theirs = (await other.call('POST', '/org/kb/folders', { name: 'Their folder' })).body.kb_node_id as string;
    const mine = (await t.api('POST', '/org/kb/folders', { body: { name: 'Consent scope folder' } })).body.kb_node_id as string;
    const orgId = (await t.api('GET', '/org/me')).body.org_id as string;
    const consent = (folders: string[]) => {
      const { params } = authorizeParams(clientId, REDIRECT);
      return fetch(
        `${t.url}/oauth/authorize`,
        form({ ...params, org_id: orgId, folder_ids: folders, decision: 'allow' }, bearer(admin.token)),
      );
    };
    for (const folders of [[theirs], [mine, '00000000-0000-4000-8000-000000000000']]) {
      const refused = await consent(folders);
      assert.equal(refused.status, 400, folders.join());
      assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'invalid_folder_scope');
    }
    assert.equal((await consent([mine])).status, 302);
  });

  it('the sign-in page’s 429 carries Retry-After', async () => {
    const user = await signUpAndLogIn(t, 'consentlimit');
    const clientId = await registerClient(t.url, REDIRECT);
    const { params } = authorizeParams(clientId, REDIRECT);
    let res: Response | undefined;
    for (let i = 0; i < 12; i++) {
      res = await fetch(`${t.url}/oauth/authorize`, form({ ...params, step: 'signin', email: user.email, password: 'wrong password' }));
      await res.text();
      if (res.status === 429) break;
    }
    assert.equal(res!.status, 429);
    assert.ok(Number(res!.headers.get('retry-after')) > 0, String(res!.headers.get('retry-after')));
  });
});

describe('OAuth: no open redirector (RFC 9700 4.11.2)', () => {
  it('an invalid authorization request is an error page, not a redirect to the registered URI', async () => {
    const clientId = await registerClient(t.url, REDIRECT);
    const invalid: Record<string, string>[] = [
      { response_type: 'token' },
      { code_challenge_method: 'plain' },
      { code_challenge: 'short' },
      { resource: 'not a uri' },
    ];
    for (const extra of invalid) {
      const { params } = authorizeParams(clientId, REDIRECT, extra);
      const res = await fetch(`${t.url}/oauth/authorize?${new URLSearchParams(params)}`, { redirect: 'manual' });
      assert.equal(res.status, 400, JSON.stringify(extra));
      assert.equal(res.headers.get('location'), null);
      assert.match(res.headers.get('content-type') ?? '', /text\/html/);
      const posted = await fetch(`${t.url}/oauth/authorize`, form({ ...params, decision: 'allow' }, bearer(admin.token)));
      assert.equal(posted.status, 400, JSON.stringify(extra));
      assert.equal(posted.headers.get('location'), null);
    }
    // A valid request the person denies goes back to the client.
    const { params } = authorizeParams(clientId, REDIRECT);
    const denied = await fetch(`${t.url}/oauth/authorize`, form({ ...params, decision: 'deny' }, bearer(admin.token)));
    assert.equal(denied.status, 302);
    assert.equal(new URL(denied.headers.get('location')!).searchParams.get('error'), 'access_denied');
  });
});

describe('OAuth consent page: its session ends with the decision', () => {
  /** Signs in on the page; the hidden fields of the consent form (whatever the session field is called). */
  async function signedInPage(clientId: string) {
    const { params } = authorizeParams(clientId, REDIRECT);
    const res = await fetch(
      `${t.url}/oauth/authorize`,
      form({ ...params, step: 'signin', email: 'admin@example.com', password: 'development-password' }),
    );
    assert.equal(res.status, 200);
    const html = await res.text();
    const fields: Record<string, string> = {};
    for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[m[1]!] = m[2]!;
    const sessionField = Object.keys(fields).find((k) => k === 'consent_session' || k === 'session_token')!;
    assert.ok(sessionField, 'the page carries a session');
    return { fields, session: fields[sessionField]! };
  }
  const restWith = async (session: string) => (await t.api('GET', '/org/me', { key: null, headers: bearer(session) })).status;

  it('Allow and Deny end the page’s session; a script’s own session stays', async () => {
    const clientId = await registerClient(t.url, REDIRECT);
    for (const decision of ['allow', 'deny']) {
      const { fields, session } = await signedInPage(clientId);
      assert.equal(await restWith(session), 200);
      const res = await fetch(`${t.url}/oauth/authorize`, form({ ...fields, decision }));
      assert.equal(res.status, 302, decision);
      assert.equal(await restWith(session), 401, `the page's session is over after ${decision}`);
    }
    const { params } = authorizeParams(clientId, REDIRECT);
    assert.equal((await fetch(`${t.url}/oauth/authorize`, form({ ...params, decision: 'allow' }, bearer(admin.token)))).status, 302);
    assert.equal(await restWith(admin.token), 200, 'a session the caller brought is theirs');
  });
});

describe('OAuth grants end when the member leaves the organization', () => {
  it('removal revokes the grant: its token and refresh are refused, and it does not revive when the person is re-added', async () => {
    const member = await signUpAndLogIn(t, 'oauthmember');
    const roles = (await admin.call('GET', '/org/roles')).body;
    const roleId = (roles.items ?? roles).find((r: { name: string }) => r.name === 'viewer' || r.name === 'Viewer')?.role_id as string;
    assert.ok(roleId, JSON.stringify(roles).slice(0, 300));
    const orgId = (await t.api('GET', '/org/me')).body.org_id as string;
    const add = () => admin.call('POST', '/org/users', { user_id: member.user_id, role_id: roleId });
    assert.equal((await add()).status, 201);

    const clientId = await registerClient(t.url, REDIRECT);
    const { params, verifier } = authorizeParams(clientId, REDIRECT);
    const consent = await fetch(`${t.url}/oauth/authorize`, form({ ...params, org_id: orgId, decision: 'allow' }, bearer(member.token)));
    assert.equal(consent.status, 302, await consent.clone().text());
    const code = new URL(consent.headers.get('location')!).searchParams.get('code')!;
    const tokens = (
      await tokenRequest(t.url, {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        client_id: clientId,
        redirect_uri: REDIRECT,
      })
    ).body;
    assert.equal((await rawMcp(t.url, bearer(tokens.access_token!))).status, 200);

    assert.equal((await admin.call('DELETE', `/org/users/${member.user_id}`)).status, 204);
    const refreshed = await tokenRequest(t.url, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: clientId });
    assert.equal(refreshed.body.error, 'invalid_grant', 'no new tokens for someone who left');

    assert.equal((await add()).status, 201);
    assert.equal((await rawMcp(t.url, bearer(tokens.access_token!))).status, 401, 'the grant does not revive');
    const again = await tokenRequest(t.url, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: clientId });
    assert.equal(again.body.error, 'invalid_grant');
  });
});
