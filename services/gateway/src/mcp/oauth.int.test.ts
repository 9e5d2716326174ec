import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixedClock } from '@kb/platform';
import { createSqliteStore } from '@kb/store/sqlite';
import type { Store } from '@kb/store';
import { createOAuthService, OAuthError, type OAuthService } from './oauth.js';

/** The OAuth service on a store with a manual clock: lifetimes, one-time codes, rotation. */
const REDIRECT = 'https://assistant.example/cb';
const FOLDER = '11111111-2222-4333-8444-555555555555';
let dir: string;
let store: Store;
let oauth: OAuthService;
const clock = fixedClock('2026-11-23T12:00:00Z');
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'kb-oauth-'));
  store = createSqliteStore({ path: join(dir, 'store.db') });
  oauth = createOAuthService({ store, clock, accessTtlSeconds: 900, refreshTtlSeconds: 3600, codeTtlSeconds: 60 });
});
after(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function grant() {
  const client = await oauth.register({ client_name: 'Assistant', redirect_uris: [REDIRECT] });
  const verifier = randomBytes(32).toString('base64url');
  const req = {
    response_type: 'code',
    client_id: client.client_id as string,
    redirect_uri: REDIRECT,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  };
  const code = await oauth.issueCode(req, { org_id: 'org', user_id: 'user', folder_scope: [FOLDER] });
  return { client_id: req.client_id, code, verifier };
}
const rejects = (p: Promise<unknown>, error: string) => assert.rejects(p, (e) => e instanceof OAuthError && e.error === error);

describe('OAuth service', () => {
  it('access tokens live accessTtlSeconds; the grant carries the consent', async () => {
    const g = await grant();
    const tokens = await oauth.exchangeCode({ ...g, code_verifier: g.verifier, redirect_uri: REDIRECT });
    assert.deepEqual(await oauth.resolveAccessToken(tokens.access_token), {
      grant_id: tokens.access_token.slice(5, 37),
      client_id: g.client_id,
      org_id: 'org',
      user_id: 'user',
      folder_scope: [FOLDER],
    });
    clock.advance(899_000);
    assert.ok(await oauth.resolveAccessToken(tokens.access_token));
    clock.advance(1_000);
    assert.equal(await oauth.resolveAccessToken(tokens.access_token), undefined, 'expired');
    const next = await oauth.refresh({ refresh_token: tokens.refresh_token, client_id: g.client_id });
    assert.ok(await oauth.resolveAccessToken(next.access_token));
    clock.advance(3_600_000);
    await rejects(oauth.refresh({ refresh_token: next.refresh_token, client_id: g.client_id }), 'invalid_grant');
  });

  it('codes expire, belong to their client and redirect URI, and need the right verifier', async () => {
    const late = await grant();
    clock.advance(61_000);
    await rejects(oauth.exchangeCode({ ...late, code_verifier: late.verifier, redirect_uri: REDIRECT }), 'invalid_grant');
    const other = await grant();
    await rejects(
      oauth.exchangeCode({ ...other, client_id: 'someone-else', code_verifier: other.verifier, redirect_uri: REDIRECT }),
      'invalid_grant',
    );
    const uri = await grant();
    await rejects(oauth.exchangeCode({ ...uri, code_verifier: uri.verifier, redirect_uri: `${REDIRECT}/x` }), 'invalid_grant');
    await rejects(oauth.exchangeCode({ ...uri, code_verifier: 'short', redirect_uri: REDIRECT }), 'invalid_request');
  });

  it('refuses bad registrations and authorization requests', async () => {
    await rejects(oauth.register({ redirect_uris: [] }), 'invalid_redirect_uri');
    await rejects(oauth.register({ redirect_uris: ['http://example.com/cb'] }), 'invalid_redirect_uri');
    await rejects(oauth.register({ redirect_uris: ['https://a.example/cb#frag'] }), 'invalid_redirect_uri');
    await rejects(
      oauth.register({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_basic' }),
      'invalid_client_metadata',
    );
    assert.ok(await oauth.register({ redirect_uris: ['http://127.0.0.1:3000/cb', 'com.example.app:/cb'] }));
    await rejects(oauth.checkAuthorize({ client_id: 'nope', redirect_uri: REDIRECT }), 'invalid_client');
    const client = await oauth.register({ redirect_uris: [REDIRECT] });
    await rejects(oauth.checkAuthorize({ client_id: client.client_id as string, redirect_uri: `${REDIRECT}?x=1` }), 'invalid_request');
    const plain = await oauth.checkAuthorize({
      client_id: client.client_id as string,
      redirect_uri: REDIRECT,
      response_type: 'code',
      code_challenge: 'a'.repeat(43),
      code_challenge_method: 'plain',
    });
    assert.equal(plain.redirectError?.error, 'invalid_request');
  });
});
