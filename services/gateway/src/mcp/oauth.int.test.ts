import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixedClock, randomIds } from '@kb/platform';
import { createSqliteStore } from '@kb/store/sqlite';
import type { Store } from '@kb/store';
import { eventCatalog } from '@kb/events';
import { createCommandBus, rebuildReadModels, snapshotReadModels } from '@kb/eventsourcing';
import { oauthProjection } from '../projections/oauth.js';
import { createOAuthService, OAuthError, type OAuthService } from './oauth.js';

/** The OAuth service (event-sourced) on a store with a manual clock: lifetimes, one-time codes, rotation, restarts. */
const REDIRECT = 'https://assistant.example/cb';
const FOLDER = '11111111-2222-4333-8444-555555555555';
const ORG = '22222222-2222-4333-8444-555555555555';
const USER = '33333333-2222-4333-8444-555555555555';
let dir: string;
let store: Store;
let oauth: OAuthService;
const clock = fixedClock('2026-11-23T12:00:00Z');
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'kb-oauth-'));
  store = createSqliteStore({ path: join(dir, 'store.db') });
  oauth = service(store);
});
/** One gateway's OAuth service on a store (another instance on the same store: a replica, or the gateway after a restart). */
function service(on: Store): OAuthService {
  return createOAuthService({
    store: on,
    commands: createCommandBus({ store: on, catalog: eventCatalog, projections: [oauthProjection], ids: randomIds, clock }),
    clock,
    accessTtlSeconds: 900,
    refreshTtlSeconds: 3600,
    codeTtlSeconds: 60,
  });
}
afterAll(async () => {
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
  const code = await oauth.issueCode(req, { org_id: ORG, user_id: USER, folder_scope: [FOLDER] });
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
      org_id: ORG,
      user_id: USER,
      folder_scope: [FOLDER],
      resource: null,
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

  it('a reused refresh token revokes the family, also on a restarted gateway; everything is in events (read models rebuild the same)', async () => {
    const g = await grant();
    const first = await oauth.exchangeCode({ ...g, code_verifier: g.verifier, redirect_uri: REDIRECT });
    const second = await oauth.refresh({ refresh_token: first.refresh_token, client_id: g.client_id });
    // A second gateway replica on the same store sees the grant and its rotation at once.
    const replica = service(store);
    assert.equal((await replica.resolveAccessToken(second.access_token))?.grant_id, second.access_token.slice(5, 37));
    await rejects(replica.refresh({ refresh_token: first.refresh_token, client_id: 'someone-else' }), 'invalid_grant');

    // The gateway restarts: the store is reopened and a new service built on it.
    await store.close();
    store = createSqliteStore({ path: join(dir, 'store.db') });
    oauth = service(store);
    assert.ok(await oauth.resolveAccessToken(second.access_token));
    const pending = await grant(); // the registered client is still known: a code for it
    assert.ok(await oauth.exchangeCode({ ...pending, code_verifier: pending.verifier, redirect_uri: REDIRECT }));
    const third = await oauth.refresh({ refresh_token: second.refresh_token, client_id: g.client_id });
    await rejects(oauth.refresh({ refresh_token: first.refresh_token, client_id: g.client_id }), 'invalid_grant');
    assert.equal(await oauth.resolveAccessToken(third.access_token), undefined, 'the family is revoked');
    await rejects(oauth.refresh({ refresh_token: third.refresh_token, client_id: g.client_id }), 'invalid_grant');
    const types = (await store.readAll(0, 100_000)).map((e) => e.type);
    for (const type of [
      'oauth.client_registered',
      'oauth.code_issued',
      'oauth.code_redeemed',
      'oauth.grant_created',
      'oauth.tokens_issued',
    ])
      assert.ok(types.includes(type), type);
    assert.ok((await store.readAll(0, 100_000)).some((e) => e.type === 'oauth.grant_revoked' && e.data.reason === 'refresh_reuse'));

    const before = await snapshotReadModels(store, [oauthProjection]);
    await rebuildReadModels(store, [oauthProjection]);
    assert.deepEqual(await snapshotReadModels(store, [oauthProjection]), before);
  });

  it('revocation: a refresh token ends its grant, an access token only itself', async () => {
    const g = await grant();
    const a = await oauth.exchangeCode({ ...g, code_verifier: g.verifier, redirect_uri: REDIRECT });
    const b = await oauth.refresh({ refresh_token: a.refresh_token, client_id: g.client_id });
    await oauth.revoke(a.access_token);
    assert.equal(await oauth.resolveAccessToken(a.access_token), undefined);
    assert.ok(await oauth.resolveAccessToken(b.access_token));
    await oauth.revoke(b.refresh_token);
    assert.equal(await oauth.resolveAccessToken(b.access_token), undefined);
    await oauth.revoke('kbrt_unknown'); // unknown tokens are fine
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
