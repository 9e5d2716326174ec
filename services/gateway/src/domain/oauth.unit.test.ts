import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { AppError } from '@kb/platform';
import { oauthCodeDecider, oauthGrantDecider, type OAuthCodeCommand, type OAuthGrantCommand } from './oauth.js';
import { run } from './testing.js';

const h = (c: string) => c.repeat(64);
const at = '2026-01-01T00:00:00.000Z';
const later = '2026-01-01T00:05:00.000Z';
const tokens = (n: string) => ({
  access_hash: h(n),
  access_expires_at: '2026-01-01T00:15:00.000Z',
  refresh_hash: h(String.fromCharCode(n.charCodeAt(0) + 1)),
  refresh_expires_at: '2026-01-31T00:00:00.000Z',
});
const issue: OAuthCodeCommand = {
  type: 'issue',
  code_hash: h('c'),
  client_id: 'a'.repeat(32),
  redirect_uri: 'https://x.example/cb',
  code_challenge: 'x'.repeat(43),
  org_id: 'o',
  user_id: 'u',
  folder_scope: null,
  expires_at: '2026-01-01T00:01:00.000Z',
  at,
};
const create: OAuthGrantCommand = {
  type: 'create',
  grant_id: 'g'.repeat(32),
  client_id: 'a'.repeat(32),
  org_id: 'o',
  user_id: 'u',
  folder_scope: null,
  code_hash: h('c'),
  at,
  ...tokens('1'),
};
const refresh = (presented: string, next: string): OAuthGrantCommand => ({
  type: 'refresh',
  grant_id: 'g'.repeat(32),
  client_id: 'a'.repeat(32),
  presented_hash: presented,
  at,
  ...tokens(next),
});

describe('OAuth deciders', () => {
  it('a code is redeemed once, and not after it expires', () => {
    assert.deepEqual(
      run(oauthCodeDecider, [issue, { type: 'redeem', code_hash: h('c'), at }]).events.map((e) => e.type),
      ['oauth.code_issued', 'oauth.code_redeemed'],
    );
    for (const commands of [
      [issue, { type: 'redeem', code_hash: h('c'), at }, { type: 'redeem', code_hash: h('c'), at }],
      [issue, { type: 'redeem', code_hash: h('c'), at: later }],
      [{ type: 'redeem', code_hash: h('c'), at }],
    ] as OAuthCodeCommand[][])
      assert.throws(
        () => run(oauthCodeDecider, commands),
        (e: unknown) => e instanceof AppError && e.code === 'invalid_grant',
      );
  });

  it('refresh rotates the family; presenting a spent refresh token revokes it; a revoked grant issues nothing', () => {
    const rotated = run(oauthGrantDecider, [create, refresh(h('2'), '3')]);
    assert.equal(rotated.state.refresh_hash, h('4'));
    assert.deepEqual(
      rotated.events.map((e) => e.type),
      ['oauth.grant_created', 'oauth.tokens_issued', 'oauth.tokens_issued'],
    );
    const reused = run(oauthGrantDecider, [create, refresh(h('2'), '3'), refresh(h('2'), '5')]);
    assert.equal(reused.state.status, 'revoked');
    assert.deepEqual(reused.events.at(-1)!.data, { grant_id: 'g'.repeat(32), reason: 'refresh_reuse', at });
    const after = run(oauthGrantDecider, [create, refresh(h('2'), '3'), refresh(h('2'), '5'), refresh(h('4'), '5')]);
    assert.equal(after.events.length, reused.events.length, 'nothing after the family is revoked');
    const otherClient = run(oauthGrantDecider, [create, { ...refresh(h('2'), '3'), client_id: 'b'.repeat(32) }]);
    assert.equal(otherClient.events.length, 2);
  });

  it('revocation ends the grant once', () => {
    const { state, events } = run(oauthGrantDecider, [
      create,
      { type: 'revoke', grant_id: 'g'.repeat(32), at },
      { type: 'revoke', grant_id: 'g'.repeat(32), at },
    ]);
    assert.equal(state.status, 'revoked');
    assert.equal(events.filter((e) => e.type === 'oauth.grant_revoked').length, 1);
  });
});
