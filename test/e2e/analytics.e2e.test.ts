import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startTestSystem, type TestSystem } from './harness.js';
import { newMember, newOrgAdmin } from './identity-fixtures.js';

/**
 * Analytics over HTTP: import, reports, latest answers and glossary, with every
 * ratio recomputed from the totals of the same response.
 */
let t: TestSystem;
beforeAll(async () => {
  // Imports of two or more answers merge their count rows on the second thread, as large imports do by
  // default (100): every report below is then computed from rows that thread wrote.
  t = await startTestSystem({ FOLD_THREAD_MIN_ANSWERS: '2' });
});
afterAll(async () => t?.stop());

const PROMPT_A = randomUUID();
const PROMPT_B = randomUUID();
const WINDOW = 'from=2026-03-01&to=2026-03-07';

interface Ratio {
  value: number | null;
  display: string;
}

/** A ratio must equal numerator / denominator from the response's own numbers (rule 9: null on a zero denominator). */
function assertRatio(r: Ratio, numerator: number, denominator: number, label: string) {
  if (denominator === 0) {
    assert.deepEqual(r, { value: null, display: 'n/a' }, label);
    return;
  }
  assert.equal(r.value, numerator / denominator, label);
  assert.equal(r.display, `${((numerator / denominator) * 100).toFixed(1)}%`, label);
}

function assertEnvelope(body: Record<string, unknown>) {
  for (const k of ['window', 'totals', 'data_quality', 'notes', 'definitions']) assert.ok(k in body, `missing ${k}`);
  assert.ok(Array.isArray(body.notes) && (body.notes as string[]).length > 0);
  assert.ok(Object.keys(body.definitions as object).length > 0);
}

const answers = [
  {
    answer_id: randomUUID(),
    prompt_id: PROMPT_A,
    model: 'gpt-4o',
    location: 'us',
    run_at: '2026-03-02T10:00:00Z',
    text: 'Acme is the best. Globex is fine. Umbrella too.',
    citations: ['https://www.acme.com/pricing/', 'https://news.example.org/a', 'https://other.net/x', 'https://other.net/x'],
    brands: ['Acme', 'Globex', 'Umbrella'],
  },
  {
    answer_id: randomUUID(),
    prompt_id: PROMPT_A,
    model: 'gpt-4o',
    location: 'us',
    run_at: '2026-03-03T10:00:00Z',
    text: 'Globex leads; AcmeSoft follows. Acme again.',
    citations: ['https://acme.com/blog?utm_source=ai'],
    brands: ['Globex', 'Acme'],
  },
  {
    answer_id: randomUUID(),
    prompt_id: PROMPT_B,
    model: 'sonar',
    location: 'de',
    run_at: '2026-03-03T12:00:00Z',
    text: 'Only Globex and Hooli here.',
    citations: [],
    brands: ['Globex', 'Hooli'],
  },
  {
    answer_id: randomUUID(),
    prompt_id: PROMPT_B,
    model: 'sonar',
    location: 'us',
    run_at: '2026-03-05T08:00:00Z',
    text: 'Nobody named.',
    citations: ['https://other.net/y'],
    brands: [],
  },
];

describe('analytics walkthrough: import, track, report', () => {
  beforeAll(async () => {
    const settings = await t.api('PUT', '/org/analytics/settings', {
      body: { brand_name: 'Acme', aliases: ['AcmeSoft'], websites: ['https://www.acme.com'] },
    });
    assert.equal(settings.status, 200, settings.text);
    assert.equal((await t.api('POST', '/org/competitors', { body: { name: 'Globex' } })).status, 201);
    assert.equal(
      (await t.api('POST', '/org/tracked-sources', { body: { match_type: 'host', pattern: 'news.example.org', tier: 'tracked' } })).status,
      201,
    );
    const imported = await t.api('POST', '/org/analytics/answers/import', { body: [...answers, { prompt_id: 'nope', text: 1 }] });
    assert.equal(imported.status, 200, imported.text);
    assert.equal(imported.body.accepted, 4);
    assert.equal(imported.body.rejected, 1);
    assert.deepEqual(
      imported.body.results.map((r: { index: number; status: string }) => [r.index, r.status]),
      [
        [0, 'accepted'],
        [1, 'accepted'],
        [2, 'accepted'],
        [3, 'accepted'],
        [4, 'rejected'],
      ],
    );
    assert.ok(imported.body.results[4].errors.length >= 3, 'every problem of the bad item is listed');
  });

  it('overview: totals and every ratio recomputable from them', async () => {
    const res = await t.api('GET', `/org/analytics/overview?${WINDOW}`);
    assert.equal(res.status, 200, res.text);
    assertEnvelope(res.body);
    const { totals, metrics, window } = res.body;
    assert.deepEqual(window, { from: '2026-03-01', to: '2026-03-07', days: 7, timezone: 'UTC', filters: {} });
    assert.deepEqual(totals, {
      answer_count: 4,
      cited_run_count: 3,
      cited_total: 6,
      mentioned_run_count: 2,
      mention_total: 3,
      brand_mention_total: 8,
      tracked_mention_total: 6,
      won_count: 1,
      lost_count: 1,
      tier_runs: { primary: 2, tracked: 1, secondary: 2 },
      tier_citations: { primary: 2, tracked: 1, secondary: 3 },
    });
    assertRatio(metrics.cited_answer_rate, totals.cited_run_count, totals.answer_count, 'cited_answer_rate');
    assertRatio(metrics.mention_rate, totals.mentioned_run_count, totals.answer_count, 'mention_rate');
    assertRatio(metrics.share_of_voice, totals.mention_total, totals.brand_mention_total, 'share_of_voice');
    assertRatio(metrics.owned_citation_rate, totals.tier_runs.primary, totals.cited_run_count, 'owned rate');
    assertRatio(metrics.win_rate, totals.won_count, totals.answer_count, 'win_rate');
    assertRatio(metrics.loss_rate, totals.lost_count, totals.answer_count, 'loss_rate');
    assert.equal(res.body.data_quality, 'low_sample');
  });

  it('citations per tier: rates over D may pass 100% together, shares over S sum to exactly 100%', async () => {
    const res = await t.api('GET', `/org/analytics/citations?${WINDOW}`);
    assert.equal(res.status, 200, res.text);
    assertEnvelope(res.body);
    const { totals, tiers } = res.body;
    assert.deepEqual(
      tiers.map((r: { tier: string; label: string }) => [r.tier, r.label]),
      [
        ['primary', 'Owned'],
        ['tracked', 'Tracked'],
        ['secondary', 'External'],
      ],
    );
    for (const r of tiers) {
      assertRatio(r.citation_rate, r.answers_citing, totals.cited_run_count, `${r.tier} rate`);
      // Within a few ulps of the plain quotient, so that the three add up to exactly 1.
      assert.ok(Math.abs(r.citation_share.value - r.citations / totals.cited_total) <= 1e-15, `${r.tier} share`);
    }
    assert.equal(
      tiers.reduce((s: number, r: { citation_share: Ratio }) => s + r.citation_share.value!, 0),
      1,
    );
    assert.ok(tiers.reduce((s: number, r: { citation_rate: Ratio }) => s + r.citation_rate.value!, 0) > 1);
    assert.equal(
      tiers.reduce((s: number, r: { citation_share: Ratio }) => s + Math.round(parseFloat(r.citation_share.display) * 10), 0),
      1000,
    );
    const sorted = await t.api('GET', `/org/analytics/citations?${WINDOW}&sort=citations&order=desc`);
    assert.deepEqual(
      sorted.body.tiers.map((r: { tier: string }) => r.tier),
      ['secondary', 'primary', 'tracked'],
    );
  });

  it('domains and pages: coverage over D, share over S, normalised URLs', async () => {
    const domains = await t.api('GET', `/org/analytics/domains?${WINDOW}`);
    assert.equal(domains.status, 200, domains.text);
    assertEnvelope(domains.body);
    const d = Object.fromEntries(domains.body.domains.map((r: { domain: string }) => [r.domain, r]));
    assert.deepEqual(Object.keys(d).sort(), ['acme.com', 'news.example.org', 'other.net']);
    assert.equal(d['other.net'].answers_citing, 2);
    assert.equal(d['other.net'].citations, 3);
    for (const r of domains.body.domains) {
      assertRatio(r.coverage, r.answers_citing, domains.body.totals.cited_run_count, r.domain);
      assertRatio(r.share, r.citations, domains.body.totals.cited_total, r.domain);
    }
    assert.equal(domains.body.domains[0].domain, 'other.net', 'default sort: citations desc');
    const pages = await t.api('GET', `/org/analytics/pages?${WINDOW}&sort=url&order=asc&limit=2&offset=1`);
    assert.equal(pages.status, 200, pages.text);
    assert.equal(pages.body.total_count, 5);
    assert.deepEqual(
      pages.body.pages.map((r: { url: string }) => r.url),
      ['acme.com/pricing', 'news.example.org/a'],
    );
  });

  it('share of voice names the organization and tracked competitors only', async () => {
    const res = await t.api('GET', `/org/analytics/share-of-voice?${WINDOW}`);
    assert.equal(res.status, 200, res.text);
    assertEnvelope(res.body);
    const { totals, brands } = res.body;
    assertRatio(res.body.share_of_voice, totals.mention_total, totals.brand_mention_total, 'sov');
    assert.equal(res.body.other_brand_mention_total, totals.brand_mention_total - totals.tracked_mention_total);
    assert.deepEqual(
      brands.map((b: { name: string; mentions: number; is_organization: boolean }) => [b.name, b.mentions, b.is_organization]),
      [
        ['Acme', 3, true],
        ['Globex', 3, false],
      ],
    );
    for (const b of brands) {
      assertRatio(b.share_of_voice, b.mentions, totals.brand_mention_total, b.name);
      assertRatio(b.tracked_share, b.mentions, totals.tracked_mention_total, b.name);
    }
    assert.ok(!res.text.includes('Umbrella') && !res.text.includes('Hooli'), 'other brands are never named');
  });

  it('prompts won and lost', async () => {
    const res = await t.api('GET', `/org/analytics/prompts?${WINDOW}&sort=lost_count&order=desc`);
    assert.equal(res.status, 200, res.text);
    assertEnvelope(res.body);
    const rows = Object.fromEntries(res.body.prompts.map((p: { prompt_id: string }) => [p.prompt_id, p]));
    assert.deepEqual([rows[PROMPT_A].won_count, rows[PROMPT_A].lost_count, rows[PROMPT_A].outcome], [1, 0, 'won']);
    assert.deepEqual([rows[PROMPT_B].won_count, rows[PROMPT_B].lost_count, rows[PROMPT_B].outcome], [0, 1, 'lost']);
    assertRatio(rows[PROMPT_B].loss_rate, 1, 2, 'loss rate');
    assert.equal(res.body.prompts_won, 1);
    assert.equal(res.body.prompts_lost, 1);
    assert.equal(res.body.prompts[0].prompt_id, PROMPT_B);
  });

  it('filters by model, location and prompt, and sums days in the daily time series', async () => {
    const sonar = await t.api('GET', `/org/analytics/overview?${WINDOW}&model=sonar`);
    assert.equal(sonar.body.totals.answer_count, 2);
    assert.deepEqual(sonar.body.window.filters, { model: 'sonar' });
    const us = await t.api('GET', `/org/analytics/overview?${WINDOW}&location=us&prompt_id=${PROMPT_B}`);
    assert.equal(us.body.totals.answer_count, 1);
    const empty = await t.api('GET', `/org/analytics/overview?${WINDOW}&model=none`);
    assert.equal(empty.body.data_quality, 'no_data');
    assert.deepEqual(empty.body.metrics.share_of_voice, { value: null, display: 'n/a' });
    const series = await t.api('GET', `/org/analytics/timeseries?${WINDOW}`);
    assert.equal(series.status, 200, series.text);
    assertEnvelope(series.body);
    assert.deepEqual(
      series.body.days.map((d: { day: string; answer_count: number }) => [d.day.slice(8), d.answer_count]),
      [
        ['01', 0],
        ['02', 1],
        ['03', 2],
        ['04', 0],
        ['05', 1],
        ['06', 0],
        ['07', 0],
      ],
    );
    assert.deepEqual(series.body.days[0].cited_answer_rate, { value: null, display: 'n/a' });
    const desc = await t.api('GET', `/org/analytics/timeseries?${WINDOW}&order=desc`);
    assert.equal(desc.body.days[0].day, '2026-03-07');
  });

  it('latest answers: one per combination; outside the window hidden, never replaced by an older one', async () => {
    const all = await t.api('GET', '/org/analytics/answers/latest');
    assert.equal(all.status, 200, all.text);
    assertEnvelope(all.body);
    assert.equal(all.body.total_count, 3);
    assert.deepEqual(
      all.body.answers.map((a: { answer_id: string }) => a.answer_id),
      [answers[3]!.answer_id, answers[2]!.answer_id, answers[1]!.answer_id],
    );
    const a1 = all.body.answers[2];
    assert.equal(a1.text, answers[1]!.text);
    assert.deepEqual(a1.citations, [
      { url: 'https://acme.com/blog?utm_source=ai', normalized_url: 'acme.com/blog', domain: 'acme.com', tier: 'primary' },
    ]);
    assert.deepEqual(
      a1.mentions.map((m: { name: string; count: number }) => [m.name, m.count]),
      [
        ['Acme', 2],
        ['Globex', 1],
      ],
    );
    // The window holds only the older gpt-4o/us answer: that combination is hidden, not shown with it.
    const early = await t.api('GET', '/org/analytics/answers/latest?from=2026-03-02T00:00:00Z&to=2026-03-02T23:59:59Z');
    assert.equal(early.body.total_count, 0);
    const day3 = await t.api('GET', '/org/analytics/answers/latest?from=2026-03-03&to=2026-03-03&sort=model&order=asc');
    assert.deepEqual(
      day3.body.answers.map((a: { model: string }) => a.model),
      ['gpt-4o', 'sonar'],
    );
    // A late-arriving older answer is counted but does not replace the latest.
    const late = await t.api('POST', '/org/analytics/answers/import', {
      body: [{ prompt_id: PROMPT_A, model: 'gpt-4o', location: 'us', run_at: '2026-03-01T09:00:00Z', text: 'old', citations: [] }],
    });
    assert.equal(late.status, 200);
    const after = await t.api('GET', `/org/analytics/answers/latest?prompt_id=${PROMPT_A}`);
    assert.equal(after.body.answers[0].answer_id, answers[1]!.answer_id);
    assert.equal((await t.api('GET', `/org/analytics/overview?${WINDOW}`)).body.totals.answer_count, 5);
  });

  it("keeps its rows in a store file of 16 KB pages (ANALYTICS_STORE_FILE); other services' files keep SQLite's 4 KB", () => {
    const pageSize = (service: string) => {
      const db = new Database(join(t.dataDir, `${service}.db`), { readonly: true, fileMustExist: true });
      try {
        return db.pragma('page_size', { simple: true });
      } finally {
        db.close();
      }
    };
    assert.equal(pageSize('analytics'), 16384);
    assert.equal(pageSize('gateway'), 4096);
  });

  it('glossary defines won, lost and the denominators', async () => {
    const res = await t.api('GET', '/org/analytics/glossary');
    assert.equal(res.status, 200);
    const terms = Object.fromEntries(res.body.terms.map((x: { term: string; definition: string }) => [x.term, x.definition]));
    for (const term of ['won', 'lost', 'cited_run_count (D)', 'cited_total (S)', 'share of voice', 'tier', 'rule precedence'])
      assert.ok(terms[term], term);
    assert.equal(res.body.rules.length, 10);
  });
});

describe('POST /org/analytics/answers/import', () => {
  it('accepts NDJSON, reporting a bad line as a rejected item', async () => {
    const lines = [
      JSON.stringify({ prompt_id: randomUUID(), model: 'm', run_at: '2026-03-04T00:00:00Z', text: 'x', citations: [] }),
      '{not json',
      '',
      JSON.stringify({ prompt_id: randomUUID(), model: 'm', run_at: '2026-03-04T00:00:00Z', text: 'y', citations: ['ftp://nope'] }),
    ].join('\n');
    const res = await t.api('POST', '/org/analytics/answers/import', {
      rawBody: lines,
      headers: { 'content-type': 'application/x-ndjson' },
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.body.results.map((r: { status: string }) => r.status),
      ['accepted', 'rejected', 'rejected'],
    );
    assert.deepEqual(res.body.results[1].errors, ['item is not valid JSON']);
    assert.match(res.body.results[2].errors[0], /citations\[0\]/);
  });

  it('rejects * as a model or location (it names every model or location in the roll-ups)', async () => {
    const item = { prompt_id: randomUUID(), run_at: '2026-03-04T00:00:00Z', text: 'x', citations: [] };
    const res = await t.api('POST', '/org/analytics/answers/import', {
      body: [
        { ...item, model: '*' },
        { ...item, model: 'm', location: ' * ' },
        { ...item, model: 'm' },
      ],
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.body.results.map((r: { status: string }) => r.status),
      ['rejected', 'rejected', 'accepted'],
    );
    assert.match(res.body.results[0].errors[0], /model .*not \*/);
    assert.match(res.body.results[1].errors[0], /location .*not \*/);
  });

  it('a repeated answer_id is rejected, never counted twice', async () => {
    const admin = await newOrgAdmin(t, 'dup');
    const item = { answer_id: randomUUID(), prompt_id: randomUUID(), model: 'm', run_at: '2026-03-04T00:00:00Z', text: 'x', citations: [] };
    assert.equal((await admin.call('POST', '/org/analytics/answers/import', [item])).status, 200);
    const again = await admin.call('POST', '/org/analytics/answers/import', [item, { ...item, answer_id: randomUUID() }]);
    assert.equal(again.status, 200);
    assert.deepEqual(
      again.body.results.map((r: { status: string }) => r.status),
      ['rejected', 'accepted'],
    );
    assert.equal((await admin.call('GET', '/org/analytics/overview?from=2026-03-04&to=2026-03-04')).body.totals.answer_count, 2);
  });

  it('400 for a malformed body, an empty batch, too many items or every item invalid; nothing is applied', async () => {
    const admin = await newOrgAdmin(t, 'bad-import');
    assert.equal((await admin.call('POST', '/org/analytics/answers/import', [])).status, 400);
    assert.equal((await admin.call('POST', '/org/analytics/answers/import', { not: 'an array' })).status, 400);
    assert.equal((await admin.call('POST', '/org/analytics/answers/import', [{ model: 'x' }, 42])).status, 400);
    const tooMany = Array.from({ length: 1001 }, () => ({}));
    assert.equal((await admin.call('POST', '/org/analytics/answers/import', tooMany)).status, 400);
    const raw = await t.api('POST', '/org/analytics/answers/import', {
      rawBody: '[{"a":',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(raw.status, 400);
    assert.equal((await admin.call('GET', '/org/analytics/overview?from=2026-01-01&to=2026-12-31')).body.totals.answer_count, 0);
  });

  it('401 without a credential; 403 for a viewer, who may still read reports', async () => {
    assert.equal((await t.api('POST', '/org/analytics/answers/import', { key: null, body: [] })).status, 401);
    const admin = await newOrgAdmin(t, 'viewer-org');
    const viewer = await newMember(t, admin, 'viewer');
    assert.equal((await viewer.call('POST', '/org/analytics/answers/import', answers.slice(0, 1))).status, 403);
    assert.equal((await viewer.call('GET', '/org/analytics/overview')).status, 200);
  });
});

describe('analytics report errors and scoping', () => {
  const reports = ['overview', 'citations', 'domains', 'pages', 'share-of-voice', 'prompts', 'timeseries', 'answers/latest', 'glossary'];

  it('401 without a credential on every report', async () => {
    for (const r of reports) assert.equal((await t.api('GET', `/org/analytics/${r}`, { key: null })).status, 401, r);
  });

  it('400 for an unknown sort key, a bad order, a reversed or too long window, bad filters and unknown parameters', async () => {
    for (const r of reports.filter((x) => x !== 'glossary')) {
      assert.equal((await t.api('GET', `/org/analytics/${r}?sort=nope`)).status, 400, r);
      assert.equal((await t.api('GET', `/org/analytics/${r}?order=up`)).status, 400, r);
      assert.equal((await t.api('GET', `/org/analytics/${r}?from=2026-03-05&to=2026-03-01`)).status, 400, r);
      assert.equal((await t.api('GET', `/org/analytics/${r}?prompt_id=not-a-uuid`)).status, 400, r);
      assert.equal((await t.api('GET', `/org/analytics/${r}?bogus=1`)).status, 400, r);
    }
    assert.equal((await t.api('GET', '/org/analytics/overview?from=2020-01-01&to=2026-01-01')).status, 400);
    // Not a date, and a date-time past the year 9999 (it has no YYYY-MM-DD day).
    assert.equal((await t.api('GET', '/org/analytics/overview?from=yesterday')).status, 400);
    assert.equal((await t.api('GET', '/org/analytics/overview?from=%2B010000-01-01T00:00:00Z&to=%2B010000-01-02T00:00:00Z')).status, 400);
    assert.equal((await t.api('GET', '/org/analytics/domains?limit=0')).status, 400);
    assert.equal((await t.api('GET', '/org/analytics/pages?limit=101')).status, 400);
    // Rule 10: sort and order exist only on analytics endpoints.
    assert.equal((await t.api('GET', '/org/tracked-sources?sort=pattern')).status, 400);
    assert.equal((await t.api('GET', '/org/competitors?order=asc')).status, 400);
  });

  it('another organization sees none of this data', async () => {
    const other = await newOrgAdmin(t, 'other-analytics');
    const res = await other.call('GET', `/org/analytics/overview?${WINDOW}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.totals.answer_count, 0);
    assert.equal((await other.call('GET', '/org/analytics/answers/latest')).body.total_count, 0);
  });
});
