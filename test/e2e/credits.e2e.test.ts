import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { startTestSystem, type TestSystem } from './harness.js';
import { newApiKey, newMember, newOrgAdmin } from './identity-fixtures.js';

let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem();
});
afterAll(async () => t.stop());

describe('GET /org/credits/balance', () => {
  it('shows the bootstrap grant to its key, and zero for a new organization', async () => {
    const res = await t.api('GET', '/org/credits/balance');
    assert.equal(res.status, 200);
    assert.equal(res.body.balance, 1_000_000);
    assert.equal(res.body.reserved, 0);
    assert.equal(res.body.monthly_spend_limit, null);
    assert.match(res.body.month, /^\d{4}-\d{2}$/);
    const admin = await newOrgAdmin(t, 'fresh');
    assert.equal((await admin.call('GET', '/org/credits/balance')).body.balance, 0);
  });

  it('answers no credential with 401', async () => {
    assert.equal((await t.api('GET', '/org/credits/balance', { key: null })).status, 401);
  });
});

describe('POST /org/credits/grants and GET /org/credits/usage', () => {
  it('adds credits (201) and records each grant in the ledger with the balance after it, newest first', async () => {
    const admin = await newOrgAdmin(t, 'grant');
    const first = await admin.call('POST', '/org/credits/grants', { amount: 100, reason: 'trial' });
    assert.equal(first.status, 201);
    assert.equal(first.body.balance, 100);
    assert.equal((await admin.call('POST', '/org/credits/grants', { amount: 50 })).body.balance, 150);
    const { key } = await newApiKey(admin, { name: 'Reader' });
    const usage = await t.api('GET', '/org/credits/usage', { key });
    assert.equal(usage.status, 200);
    assert.equal(usage.headers.get('x-total-count'), '2');
    assert.deepEqual(
      usage.body.map((e: { operation: string; amount: number; balance_after: number; reason: string }) => [
        e.operation,
        e.amount,
        e.balance_after,
        e.reason,
      ]),
      [
        ['grant', 50, 150, 'grant'],
        ['grant', 100, 100, 'trial'],
      ],
    );
    assert.ok(usage.body.every((e: { at: string }) => Date.parse(e.at)));
    const page = await admin.call('GET', '/org/credits/usage?limit=1&offset=1');
    assert.deepEqual(
      page.body.map((e: { amount: number }) => e.amount),
      [100],
    );
    for (const q of ['limit=0', 'limit=101', 'offset=-1', 'sort=at']) {
      assert.equal((await admin.call('GET', `/org/credits/usage?${q}`)).status, 400, q);
    }
    // Another organization sees none of it.
    const other = await newOrgAdmin(t, 'grant-other');
    assert.deepEqual((await other.call('GET', '/org/credits/usage')).body, []);
  });

  it('answers bad amounts with 400, an API key with 401, a collaborator with 403', async () => {
    const admin = await newOrgAdmin(t, 'granterr');
    const collaborator = await newMember(t, admin, 'collaborator');
    for (const body of [{}, { amount: 0 }, { amount: -5 }, { amount: 1.5 }, { amount: '10' }, { amount: 10, note: 'x' }]) {
      assert.equal((await admin.call('POST', '/org/credits/grants', body)).status, 400, JSON.stringify(body));
    }
    assert.equal((await t.api('POST', '/org/credits/grants', { body: { amount: 10 } })).status, 401);
    assert.equal((await collaborator.call('POST', '/org/credits/grants', { amount: 10 })).status, 403);
    assert.equal((await admin.call('GET', '/org/credits/balance')).body.balance, 0);
  });
});

describe('PUT /org/credits/spend-limit', () => {
  it('sets and clears the monthly spend limit', async () => {
    const admin = await newOrgAdmin(t, 'limit');
    const set = await admin.call('PUT', '/org/credits/spend-limit', { monthly_limit: 500 });
    assert.equal(set.status, 200);
    assert.equal(set.body.monthly_spend_limit, 500);
    assert.equal(set.body.spent_this_month, 0);
    assert.equal((await admin.call('GET', '/org/credits/balance')).body.monthly_spend_limit, 500);
    assert.equal((await admin.call('PUT', '/org/credits/spend-limit', { monthly_limit: null })).body.monthly_spend_limit, null);
  });

  it('answers bad limits with 400, an API key with 401, a viewer with 403', async () => {
    const admin = await newOrgAdmin(t, 'limiterr');
    const viewer = await newMember(t, admin, 'viewer');
    for (const body of [{}, { monthly_limit: -1 }, { monthly_limit: 'lots' }]) {
      assert.equal((await admin.call('PUT', '/org/credits/spend-limit', body)).status, 400, JSON.stringify(body));
    }
    assert.equal((await t.api('PUT', '/org/credits/spend-limit', { body: { monthly_limit: 5 } })).status, 401);
    assert.equal((await viewer.call('PUT', '/org/credits/spend-limit', { monthly_limit: 5 })).status, 403);
    assert.equal((await viewer.call('GET', '/org/credits/balance')).status, 200);
  });
});
