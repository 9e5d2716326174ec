import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestSystem, type TestSystem } from './harness.js';
import { newMember, newOrgAdmin, type SignedIn } from './identity-fixtures.js';

/**
 * Rule 4 per source (GET /org/analytics/sources: per tracked-source rule; GET
 * /org/analytics/registrable-domains: hosts rolled up by the public suffix
 * list) and rule 8 on the glossary, over HTTP.
 */
let t: TestSystem;
let admin: SignedIn & { org_id: string };
let noAnalytics: SignedIn;
const rule: Record<string, string> = {};
const WINDOW = 'from=2026-03-01&to=2026-03-31';

interface Ratio {
  value: number | null;
  display: string;
}
function assertRatio(r: Ratio, numerator: number, denominator: number, label: string) {
  if (denominator === 0) return assert.deepEqual(r, { value: null, display: 'n/a' }, label);
  assert.equal(r.value, numerator / denominator, label);
  assert.equal(r.display, `${((numerator / denominator) * 100).toFixed(1)}%`, label);
}
function assertEnvelope(body: Record<string, unknown>) {
  for (const k of ['window', 'totals', 'data_quality', 'notes', 'definitions']) assert.ok(k in body, `missing ${k}`);
  assert.ok(Array.isArray(body.notes) && (body.notes as string[]).length > 0);
  assert.ok(Object.keys(body.definitions as object).length > 0);
}

const prompt = randomUUID();
const answer = (day: number, model: string, citations: string[]) => ({
  prompt_id: prompt,
  model,
  location: 'us',
  run_at: `2026-03-0${day}T10:00:00Z`,
  text: 'An answer.',
  citations,
});

beforeAll(async () => {
  t = await startTestSystem();
  admin = await newOrgAdmin(t, 'sources');
  const role = await admin.call('POST', '/org/roles', { name: 'NoAnalytics', permissions: ['read:org'] });
  assert.equal(role.status, 201, role.text);
  noAnalytics = await newMember(t, admin, 'NoAnalytics');
  const create = async (name: string, body: object) => {
    const res = await admin.call('POST', '/org/tracked-sources', body);
    assert.equal(res.status, 201, res.text);
    rule[name] = res.body.source_id;
  };
  await create('acme', { match_type: 'domain', pattern: 'acme.com', tier: 'primary' });
  await create('couk', { match_type: 'domain', pattern: 'example.co.uk', tier: 'tracked' });
  await create('docs', { match_type: 'host', pattern: 'docs.globex.com', tier: 'tracked' });
  await create('other', { match_type: 'host', pattern: 'other.net', tier: 'secondary' });
  await create('uncited', { match_type: 'exact_url', pattern: 'https://nothing.org/x', tier: 'tracked' });
  const imported = await admin.call('POST', '/org/analytics/answers/import', [
    answer(1, 'm1', ['https://docs.acme.com/a', 'https://www.acme.com/b/', 'https://news.example.co.uk/x', 'https://other.net/z']),
    answer(2, 'm1', ['https://shop.example.co.uk/p', 'https://news.example.co.uk/x', 'https://docs.globex.com/d']),
    answer(3, 'm2', ['https://globex.com/']),
    answer(4, 'm2', []),
  ]);
  assert.equal(imported.status, 200, imported.text);
  assert.equal(imported.body.accepted, 4);
  // A rule deleted since keeps the citations it won, listed as deleted.
  assert.equal((await admin.call('DELETE', `/org/tracked-sources/${rule.other}`)).status, 204);
});
afterAll(async () => t?.stop());

describe('GET /org/analytics/sources', () => {
  it('gives each tracked-source rule the coverage (over D) and share (over S) of the citations it won', async () => {
    const res = await admin.call('GET', `/org/analytics/sources?${WINDOW}`);
    assert.equal(res.status, 200, res.text);
    assertEnvelope(res.body);
    const { cited_run_count: D, cited_total: S } = res.body.totals;
    assert.deepEqual([D, S], [3, 8]);
    const row = (id: string) => res.body.sources.find((r: { source_id: string }) => r.source_id === id);
    const expected: [string, number, number][] = [
      ['acme', 1, 2],
      ['couk', 2, 3],
      ['docs', 1, 1],
      ['other', 1, 1],
      ['uncited', 0, 0],
    ];
    for (const [name, runs, cites] of expected) {
      const r = row(rule[name]!);
      assert.ok(r, name);
      assert.equal(r.answers_citing, runs, name);
      assert.equal(r.citations, cites, name);
      assertRatio(r.coverage, runs, D, `${name} coverage`);
      assertRatio(r.share, cites, S, `${name} share`);
    }
    assert.equal(row(rule.couk!).pattern, 'example.co.uk');
    assert.equal(row(rule.couk!).tier, 'tracked');
    assert.equal(row(rule.couk!).status, 'active');
    assert.deepEqual([row(rule.other!).status, row(rule.other!).pattern, row(rule.other!).tier], ['deleted', null, null]);
    assert.deepEqual([res.body.unmatched.answers_citing, res.body.unmatched.citations], [1, 1]);
    assertRatio(res.body.unmatched.share, 1, S, 'unmatched share');
    // Every citation is won by exactly one rule or none: the shares' numerators add up to S.
    const total = res.body.sources.reduce((s: number, r: { citations: number }) => s + r.citations, 0) + res.body.unmatched.citations;
    assert.equal(total, S);
    assert.equal(res.body.total_count, 5);
    // Default sort: citations, descending.
    assert.equal(res.body.sources[0].source_id, rule.couk);
  });

  it('filters, sorts and pages', async () => {
    const m2 = await admin.call('GET', `/org/analytics/sources?${WINDOW}&model=m2`);
    assert.equal(m2.status, 200);
    assert.deepEqual([m2.body.totals.cited_run_count, m2.body.totals.cited_total], [1, 1]);
    assert.equal(m2.body.unmatched.citations, 1);
    assert.ok(m2.body.sources.every((r: { citations: number }) => r.citations === 0));
    const asc = await admin.call('GET', `/org/analytics/sources?${WINDOW}&sort=coverage&order=asc&limit=2&offset=1`);
    assert.equal(asc.status, 200);
    assert.deepEqual(
      asc.body.sources.map((r: { coverage: Ratio }) => r.coverage.value),
      [1 / 3, 1 / 3],
    );
    assert.deepEqual([asc.body.limit, asc.body.offset, asc.body.total_count], [2, 1, 5]);
  });

  it('400 for a bad sort, window, filter, page or unknown parameter; 401; 403 without read:analytics', async () => {
    for (const q of ['sort=nope', 'order=up', 'from=2026-03-05&to=2026-03-01', 'prompt_id=x', 'limit=0', 'limit=101', 'bogus=1'])
      assert.equal((await admin.call('GET', `/org/analytics/sources?${q}`)).status, 400, q);
    assert.equal((await t.api('GET', '/org/analytics/sources', { key: null })).status, 401);
    assert.equal((await noAnalytics.call('GET', '/org/analytics/sources')).status, 403);
  });
});

describe('GET /org/analytics/registrable-domains', () => {
  it('rolls hosts up to their registrable domain by the public suffix list, counting an answer once per domain', async () => {
    const res = await admin.call('GET', `/org/analytics/registrable-domains?${WINDOW}`);
    assert.equal(res.status, 200, res.text);
    assertEnvelope(res.body);
    const { cited_run_count: D, cited_total: S } = res.body.totals;
    const rows = Object.fromEntries(res.body.registrable_domains.map((r: { registrable_domain: string }) => [r.registrable_domain, r]));
    assert.deepEqual(Object.keys(rows).sort(), ['acme.com', 'example.co.uk', 'globex.com', 'other.net']);
    const expected: [string, number, number, string[]][] = [
      ['acme.com', 1, 2, ['acme.com', 'docs.acme.com']],
      ['example.co.uk', 2, 3, ['news.example.co.uk', 'shop.example.co.uk']],
      ['globex.com', 2, 2, ['docs.globex.com', 'globex.com']],
      ['other.net', 1, 1, ['other.net']],
    ];
    for (const [site, runs, cites, hosts] of expected) {
      const r = rows[site];
      assert.equal(r.answers_citing, runs, site);
      assert.equal(r.citations, cites, site);
      assert.deepEqual(r.hosts, hosts, site);
      assertRatio(r.coverage, runs, D, `${site} coverage`);
      assertRatio(r.share, cites, S, `${site} share`);
    }
    assert.equal(res.body.registrable_domains[0].registrable_domain, 'example.co.uk');
    // The per-host report still lists every host apart.
    const hosts = await admin.call('GET', `/org/analytics/domains?${WINDOW}`);
    assert.equal(hosts.body.total_count, 7);
  });

  it('filters, sorts and pages', async () => {
    const m2 = await admin.call('GET', `/org/analytics/registrable-domains?${WINDOW}&model=m2`);
    assert.deepEqual(
      m2.body.registrable_domains.map((r: { registrable_domain: string; hosts: string[] }) => [r.registrable_domain, r.hosts]),
      [['globex.com', ['globex.com']]],
    );
    const byName = await admin.call(
      'GET',
      `/org/analytics/registrable-domains?${WINDOW}&sort=registrable_domain&order=asc&limit=2&offset=2`,
    );
    assert.deepEqual(
      byName.body.registrable_domains.map((r: { registrable_domain: string }) => r.registrable_domain),
      ['globex.com', 'other.net'],
    );
  });

  it('400 for a bad sort, window, filter, page or unknown parameter; 401; 403 without read:analytics', async () => {
    for (const q of ['sort=domain', 'order=up', 'from=2026-03-05&to=2026-03-01', 'tag_id=x', 'limit=0', 'bogus=1'])
      assert.equal((await admin.call('GET', `/org/analytics/registrable-domains?${q}`)).status, 400, q);
    assert.equal((await t.api('GET', '/org/analytics/registrable-domains', { key: null })).status, 401);
    assert.equal((await noAnalytics.call('GET', '/org/analytics/registrable-domains')).status, 403);
  });
});

describe('GET /org/analytics/glossary', () => {
  it('carries the envelope: the default window, the totals over it, data_quality, notes and definitions of every term', async () => {
    const org = await newOrgAdmin(t, 'glossary');
    const empty = await org.call('GET', '/org/analytics/glossary');
    assert.equal(empty.status, 200, empty.text);
    assertEnvelope(empty.body);
    assert.equal(empty.body.data_quality, 'no_data');
    assert.equal(empty.body.window.days, 30);
    assert.equal(empty.body.window.to, new Date().toISOString().slice(0, 10));
    assert.deepEqual(empty.body.window.filters, {});
    assert.equal(empty.body.rules.length, 10);
    for (const term of empty.body.terms) assert.equal(empty.body.definitions[term.term], term.definition, term.term);
    for (const term of ['registrable domain', 'source rule', 'won', 'cited_run_count (D)']) assert.ok(empty.body.definitions[term], term);

    const runAt = new Date(Date.now() - 3_600_000).toISOString();
    const imported = await org.call('POST', '/org/analytics/answers/import', [
      { prompt_id: randomUUID(), model: 'm', run_at: runAt, text: 'x', citations: ['https://a.example.com/'] },
    ]);
    assert.equal(imported.status, 200, imported.text);
    const one = await org.call('GET', '/org/analytics/glossary');
    assert.equal(one.body.data_quality, 'low_sample');
    const overview = await org.call('GET', '/org/analytics/overview');
    assert.deepEqual(one.body.totals, overview.body.totals);
    assert.deepEqual(one.body.window, overview.body.window);
    assert.equal(one.body.totals.cited_total, 1);
  });

  it('401 without a credential; 403 without read:analytics', async () => {
    assert.equal((await t.api('GET', '/org/analytics/glossary', { key: null })).status, 401);
    assert.equal((await noAnalytics.call('GET', '/org/analytics/glossary')).status, 403);
  });
});
