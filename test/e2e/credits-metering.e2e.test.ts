import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { silentLogger } from '@kb/platform';
import { startSystem } from '@kb/all-in-one';
import { startTestSystem, type TestSystem } from './harness.js';
import { newApiKey, newOrgAdmin } from './identity-fixtures.js';
import { waitForOutcome } from './ingest-helpers.js';

/**
 * Metering end to end on a real metered route: POST /org/search costs one query
 * credit (CREDIT_COST_QUERY), reserved before the search runs. A search that ran
 * is recorded (GET /org/search/queries), so "no work" is observable.
 */
let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem();
});
afterAll(async () => t.stop());

const recordedSearches = async (key: string) => {
  const res = await t.api('GET', '/org/search/queries', { key });
  assert.equal(res.status, 200, res.text);
  return Number(res.headers.get('x-total-count'));
};

/** About `chars` characters of prose, unique to the call (so it is never a duplicate). */
const prose = (chars: number) => {
  const sentence = `Heat pumps move heat rather than make it, run ${Math.random().toString(36).slice(2)} on electricity. `;
  return sentence.repeat(Math.ceil(chars / sentence.length)).slice(0, chars);
};

type LedgerEntry = { operation: string; amount: number; balance_after: number; reason: string | null };
async function usageOnceCharged(key: string, entries: number): Promise<LedgerEntry[]> {
  for (let i = 0; ; i++) {
    const usage = (await t.api('GET', '/org/credits/usage', { key })).body as LedgerEntry[];
    if (usage.length >= entries) return usage;
    assert.ok(i < 300, `the ledger still has ${usage.length} entries, not ${entries}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('ingest metered by what was stored', () => {
  it('charges one unit per item at acceptance and one per started 100,000 stored characters beyond the first', async () => {
    const admin = await newOrgAdmin(t, 'ingest-meter');
    const { key } = await newApiKey(admin, { name: 'Ingester' });
    await admin.call('POST', '/org/credits/grants', { amount: 10 });

    const small = await t.api('POST', '/org/kb/raw', { key, body: { title: 'Small', text: prose(5_000) } });
    assert.equal(small.status, 202, small.text);
    assert.equal((await waitForOutcome(t, small.body.id, key)).processing_status, 'completed');
    const large = await t.api('POST', '/org/kb/raw', { key, body: { title: 'Large', text: prose(250_000) } });
    assert.equal(large.status, 202, large.text);
    const done = await waitForOutcome(t, large.body.id, key);
    assert.equal(done.processing_status, 'completed');

    const usage = await usageOnceCharged(key, 4);
    assert.deepEqual(
      usage.map((e) => [e.operation, e.amount, e.balance_after]),
      [
        ['ingest', -2, 6],
        ['ingest', -1, 8],
        ['ingest', -1, 9],
        ['grant', 10, 10],
      ],
      'the small text cost its 1 reserved unit; the large one 1 at acceptance and 2 when stored',
    );
    assert.match(usage[0]!.reason!, new RegExp(`content ${large.body.id} version 1: 2[45]\\d,\\d{3} characters stored`));
    const balance = (await t.api('GET', '/org/credits/balance', { key })).body;
    assert.deepEqual([balance.balance, balance.reserved], [6, 0]);
  });

  it('keeps what was stored when the balance cannot cover it, charging down to zero and saying what was not charged', async () => {
    const admin = await newOrgAdmin(t, 'ingest-short');
    const { key } = await newApiKey(admin, { name: 'Ingester' });
    await admin.call('POST', '/org/credits/grants', { amount: 2 });
    const res = await t.api('POST', '/org/kb/raw', { key, body: { title: 'Too large for the balance', text: prose(350_000) } });
    assert.equal(res.status, 202, res.text);
    assert.equal((await waitForOutcome(t, res.body.id, key)).processing_status, 'completed', 'the content is kept');
    const usage = await usageOnceCharged(key, 3);
    assert.deepEqual(
      usage.map((e) => [e.operation, e.amount, e.balance_after]),
      [
        ['ingest', -1, 0],
        ['ingest', -1, 1],
        ['grant', 2, 2],
      ],
    );
    assert.match(usage[0]!.reason!, /2 not charged: the balance ran out$/);
    const refused = await t.api('POST', '/org/kb/raw', { key, body: { title: 'Next', text: prose(100) } });
    assert.equal(refused.status, 402, 'the next ingest is refused');
  });
});

describe('metered operations', () => {
  it('answers 402 with no work done when out of credits, and charges each successful search', async () => {
    const admin = await newOrgAdmin(t, 'meter');
    const { key } = await newApiKey(admin, { name: 'Searcher' });
    const denied = await t.api('POST', '/org/search', { key, body: { query: 'anything at all' } });
    assert.equal(denied.status, 402, denied.text);
    assert.equal(await recordedSearches(key), 0, 'the search never ran');

    await admin.call('POST', '/org/credits/grants', { amount: 2 });
    assert.equal((await t.api('POST', '/org/search', { key, body: { query: 'first question' } })).status, 200);
    assert.equal((await admin.call('POST', '/org/search', { query: 'second question' })).status, 200, 'sessions are metered too');
    assert.equal((await t.api('POST', '/org/search', { key, body: { query: 'third question' } })).status, 402);
    assert.equal(await recordedSearches(key), 2);

    const balance = (await t.api('GET', '/org/credits/balance', { key })).body;
    assert.equal(balance.balance, 0);
    assert.equal(balance.reserved, 0);
    const usage = (await t.api('GET', '/org/credits/usage', { key })).body;
    assert.deepEqual(
      usage.map((e: { operation: string; amount: number; balance_after: number }) => [e.operation, e.amount, e.balance_after]),
      [
        ['query', -1, 0],
        ['query', -1, 1],
        ['grant', 2, 2],
      ],
    );
  });

  it('does not charge a request that fails validation', async () => {
    const admin = await newOrgAdmin(t, 'invalid');
    await admin.call('POST', '/org/credits/grants', { amount: 1 });
    assert.equal((await admin.call('POST', '/org/search', { nope: true })).status, 400);
    assert.equal((await admin.call('GET', '/org/credits/balance')).body.balance, 1);
  });

  it('answers 402 once the monthly spend limit is reached, whatever the balance', async () => {
    const admin = await newOrgAdmin(t, 'limit');
    await admin.call('POST', '/org/credits/grants', { amount: 100 });
    await admin.call('PUT', '/org/credits/spend-limit', { monthly_limit: 1 });
    assert.equal((await admin.call('POST', '/org/search', { query: 'within the limit' })).status, 200);
    const res = await admin.call('POST', '/org/search', { query: 'over the limit' });
    assert.equal(res.status, 402);
    const balance = (await admin.call('GET', '/org/credits/balance')).body;
    assert.equal(balance.balance, 99);
    assert.equal(balance.spent_this_month, 1);
    await admin.call('PUT', '/org/credits/spend-limit', { monthly_limit: null });
    assert.equal((await admin.call('POST', '/org/search', { query: 'limit lifted' })).status, 200);
  });

  it('never drives the balance below zero under many parallel requests', async () => {
    const admin = await newOrgAdmin(t, 'parallel');
    const { key } = await newApiKey(admin, { name: 'Parallel' });
    await admin.call('POST', '/org/credits/grants', { amount: 12 });
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) => t.api('POST', '/org/search', { key, body: { query: `parallel question ${i}` } })),
    );
    const statuses = results.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 200).length, 12, statuses.join(','));
    assert.equal(statuses.filter((s) => s === 402).length, 48);
    const balance = (await t.api('GET', '/org/credits/balance', { key })).body;
    assert.equal(balance.balance, 0);
    assert.equal(balance.reserved, 0);
    assert.equal(await recordedSearches(key), 12);
  });

  it('never drives the balance below zero when two gateways on the same store spend it at once', async () => {
    // A second system on the same data directory: its own store connections, so only the
    // store's transactions (not an in-process lock) keep the two gateways' reservations apart.
    const second = await startSystem({
      env: { DATA_DIR: t.dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' },
      logger: silentLogger(),
    });
    try {
      const admin = await newOrgAdmin(t, 'twin');
      const { key } = await newApiKey(admin, { name: 'Twin' });
      await admin.call('POST', '/org/credits/grants', { amount: 10 });
      const search = (url: string, i: number) =>
        fetch(`${url}/api/v1/org/search`, {
          method: 'POST',
          headers: { 'x-api-key': key, 'content-type': 'application/json' },
          body: JSON.stringify({ query: `twin question ${i}` }),
        }).then(async (res) => (await res.text(), res.status));
      const statuses = await Promise.all(Array.from({ length: 40 }, (_, i) => search(i % 2 === 0 ? t.url : second.url, i)));
      assert.equal(statuses.filter((s) => s === 200).length, 10, statuses.join(','));
      assert.equal(statuses.filter((s) => s === 402).length, 30, statuses.join(','));
      const balance = (await t.api('GET', '/org/credits/balance', { key })).body;
      assert.equal(balance.balance, 0);
      assert.equal(balance.reserved, 0);
      assert.equal(await recordedSearches(key), 10);
      const usage = (await t.api('GET', '/org/credits/usage?limit=100', { key })).body as { balance_after: number }[];
      assert.ok(
        usage.every((e) => e.balance_after >= 0),
        JSON.stringify(usage),
      );
    } finally {
      await second.stop();
    }
  });
});
