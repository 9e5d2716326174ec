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

/** The OAuth service against hostile clients: abandoned registrations, forged refresh tokens, reused codes. */
const REDIRECT = 'https://assistant.example/cb';
const ORG = '22222222-2222-4333-8444-555555555555';
const USER = '33333333-2222-4333-8444-555555555555';
let dir: string;
let store: Store;
let oauth: OAuthService;
const clock = fixedClock('2026-11-23T12:00:00Z');
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'kb-oauth-sec-'));
  store = createSqliteStore({ path: join(dir, 'store.db') });
  oauth = createOAuthService({
    store,
    commands: createCommandBus({ store, catalog: eventCatalog, projections: [oauthProjection], ids: randomIds, clock }),
    clock,
    accessTtlSeconds: 900,
    refreshTtlSeconds: 3600,
  });
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const rejects = (p: Promise<unknown>, error: string) => assert.rejects(p, (e) => e instanceof OAuthError && e.error === error);

async function authorization(clientId: string) {
  const verifier = randomBytes(32).toString('base64url');
  const req = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  };
  const code = await oauth.issueCode(req, { org_id: ORG, user_id: USER, folder_scope: null });
  return { client_id: clientId, code, code_verifier: verifier, redirect_uri: REDIRECT };
}
const registered = async () => (await oauth.register({ redirect_uris: [REDIRECT] })).client_id as string;

describe('OAuth client registration', () => {
  it('caps what one client records: five redirect URIs of at most 512 characters', async () => {
    await rejects(oauth.register({ redirect_uris: Array.from({ length: 6 }, (_, i) => `${REDIRECT}${i}`) }), 'invalid_redirect_uri');
    await rejects(oauth.register({ redirect_uris: [`${REDIRECT}?${'x'.repeat(600)}`] }), 'invalid_redirect_uri');
    assert.ok(await oauth.register({ redirect_uris: Array.from({ length: 5 }, (_, i) => `${REDIRECT}${i}`) }));
  });

  it('a client that completes no flow within the time is removed; one that did stays; read models rebuild the same', async () => {
    const abandoned = await registered();
    const used = await registered();
    await oauth.exchangeCode(await authorization(used));
    clock.advance(3_600_000);
    const recent = await registered();
    assert.ok(await oauth.checkAuthorize({ client_id: abandoned, redirect_uri: REDIRECT }));

    assert.ok((await oauth.expireUnusedClients(3_600)) >= 1);
    await rejects(oauth.checkAuthorize({ client_id: abandoned, redirect_uri: REDIRECT }), 'invalid_client');
    assert.ok(await oauth.checkAuthorize({ client_id: used, redirect_uri: REDIRECT }), 'a client with a grant stays');
    assert.ok(await oauth.checkAuthorize({ client_id: recent, redirect_uri: REDIRECT }), 'a recent one is given its time');
    assert.equal(await oauth.expireUnusedClients(3_600), 0, 'nothing twice');

    const before = await snapshotReadModels(store, [oauthProjection]);
    await rebuildReadModels(store, [oauthProjection]);
    assert.deepEqual(await snapshotReadModels(store, [oauthProjection]), before);
  });
});

describe('OAuth refresh tokens and codes', () => {
  it('a forged refresh token of a grant (its id is public) is refused and revokes nothing; a spent one of the family does', async () => {
    const clientId = await registered();
    const tokens = await oauth.exchangeCode(await authorization(clientId));
    const grantId = tokens.refresh_token.slice(5, 37);
    const forged = `kbrt_${grantId}_${randomBytes(32).toString('base64url')}`;
    await rejects(oauth.refresh({ refresh_token: forged, client_id: clientId }), 'invalid_grant');
    assert.ok(await oauth.resolveAccessToken(tokens.access_token), 'the grant lives on');
    const next = await oauth.refresh({ refresh_token: tokens.refresh_token, client_id: clientId });
    assert.ok(await oauth.resolveAccessToken(next.access_token));

    await rejects(oauth.refresh({ refresh_token: tokens.refresh_token, client_id: clientId }), 'invalid_grant');
    assert.equal(await oauth.resolveAccessToken(next.access_token), undefined, 'a spent token of the family revokes it');
  });

  it('presenting a code again revokes the tokens issued from it', async () => {
    const clientId = await registered();
    const auth = await authorization(clientId);
    const tokens = await oauth.exchangeCode(auth);
    assert.ok(await oauth.resolveAccessToken(tokens.access_token));
    await rejects(oauth.exchangeCode(auth), 'invalid_grant');
    assert.equal(await oauth.resolveAccessToken(tokens.access_token), undefined);
    await rejects(oauth.refresh({ refresh_token: tokens.refresh_token, client_id: clientId }), 'invalid_grant');
    const reasons = (await store.readAll(0, 100_000)).filter((e) => e.type === 'oauth.grant_revoked').map((e) => e.data.reason);
    assert.ok(reasons.includes('code_reuse'), reasons.join());
  });
});
