import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { fixedClock, randomIds } from '@kb/platform';
import { eventCatalog } from '@kb/events';
import { createCommandBus } from '@kb/eventsourcing';
import { createSqliteStore } from '@kb/store/sqlite';
import type { CallContext } from '@kb/rpc';
import { createAnswersService } from './app/answers.js';
import { createReportsService } from './app/reports.js';
import { createTrackedSourcesService } from './app/tracked-sources.js';
import { createCompetitorsService } from './app/competitors.js';
import { createSettingsService } from './app/settings.js';
import { analyticsProjections } from './projections/index.js';
import { DAILY_COUNTS, PROMPTS, type CountDoc } from './projections/collections.js';

/**
 * Property: for random answer streams (arriving in random order), every count
 * and ratio the reports compute from the daily counts equals a direct
 * computation over the same answers, for random windows and filters; and rules
 * 2, 4, 6, 7 and 9 hold.
 */

// ---- the world the answers are drawn from ----

const PROMPT_IDS: string[] = [randomUUID(), randomUUID(), randomUUID()];
const TAGS: string[] = [randomUUID(), randomUUID()];
/** prompt 0: tag 0; prompt 1: tags 0 and 1; prompt 2: none. */
const PROMPT_TAGS: Record<string, string[]> = {
  [PROMPT_IDS[0]!]: [TAGS[0]!],
  [PROMPT_IDS[1]!]: [TAGS[0]!, TAGS[1]!],
  [PROMPT_IDS[2]!]: [],
};
const MODELS = ['gpt-4o', 'sonar'];
const LOCATIONS = ['us', 'de'];
/** Brand tokens: which brand each one names ('org', competitor name, or another brand). */
const BRAND_TOKENS: Record<string, string> = {
  Acme: 'org',
  AcmeSoft: 'org',
  Globex: 'Globex',
  Initech: 'Initech',
  Initrode: 'Initech',
  Umbrella: 'Umbrella',
  Hooli: 'Hooli',
};
const OTHER_BRANDS = new Set(['Umbrella', 'Hooli']);
const FILLER = ['the', 'best', 'tool', 'is', 'for', 'teams'];
/**
 * Cited URL spellings and what they must normalise to, with the tier the rules
 * below give them (computed by hand: rule 2 and the precedence).
 */
const URLS: Record<string, { page: string; domain: string; tier: 'primary' | 'tracked' | 'secondary' }> = {
  'https://www.acme.com/blog/post-1/': { page: 'acme.com/blog/post-1', domain: 'acme.com', tier: 'primary' },
  'http://acme.com/blog/post-1?utm_source=x&b=2&a=1': { page: 'acme.com/blog/post-1?a=1&b=2', domain: 'acme.com', tier: 'primary' },
  'https://docs.acme.com/guide#intro': { page: 'docs.acme.com/guide', domain: 'docs.acme.com', tier: 'primary' },
  'https://acme.com/careers': { page: 'acme.com/careers', domain: 'acme.com', tier: 'secondary' },
  'https://globex.com/compare/acme': { page: 'globex.com/compare/acme', domain: 'globex.com', tier: 'tracked' },
  'https://globex.com/about': { page: 'globex.com/about', domain: 'globex.com', tier: 'secondary' },
  'https://news.example.org/story': { page: 'news.example.org/story', domain: 'news.example.org', tier: 'tracked' },
  'https://example.org/story2': { page: 'example.org/story2', domain: 'example.org', tier: 'primary' },
  'https://example.org/other': { page: 'example.org/other', domain: 'example.org', tier: 'secondary' },
};
const RULES = [
  { match_type: 'domain', pattern: 'acme.com', tier: 'primary' },
  // More specific than the domain rule: acme.com/careers is External.
  { match_type: 'path_prefix', pattern: 'https://acme.com/careers', tier: 'secondary' },
  { match_type: 'path_prefix', pattern: 'globex.com/compare', tier: 'tracked' },
  { match_type: 'host', pattern: 'news.example.org', tier: 'tracked' },
  { match_type: 'exact_url', pattern: 'https://www.example.org/story2/', tier: 'primary' },
];

// Answers span all of March, so windows covering the whole month read its month rows.
const DAY0 = Date.parse('2026-02-24T00:00:00Z');
const DAY_MS = 86_400_000;
const day = (offset: number) => new Date(DAY0 + offset * DAY_MS).toISOString().slice(0, 10);

interface GenAnswer {
  answer_id: string;
  prompt_id: string;
  model: string;
  location: string;
  run_at: string;
  tokens: string[];
  citations: string[];
  extraListed: boolean;
}

const answerArb = fc.record({
  answer_id: fc.uuid({ version: 4 }),
  prompt_id: fc.constantFrom(...PROMPT_IDS),
  model: fc.constantFrom(...MODELS),
  location: fc.constantFrom(...LOCATIONS),
  // 40 days, to the minute, so several answers share a combination, a day and a month.
  run_at: fc.integer({ min: 0, max: 40 * 24 * 60 - 1 }).map((m) => new Date(DAY0 + m * 60_000).toISOString()),
  tokens: fc.array(fc.constantFrom(...Object.keys(BRAND_TOKENS), ...FILLER, ...FILLER), { maxLength: 14 }),
  citations: fc.array(fc.constantFrom(...Object.keys(URLS)), { maxLength: 5 }),
  extraListed: fc.boolean(),
});

const windowArb = fc.record({
  from: fc.integer({ min: -2, max: 41 }),
  span: fc.integer({ min: 0, max: 45 }),
  prompt: fc.option(fc.constantFrom(...PROMPT_IDS), { nil: undefined }),
  model: fc.option(fc.constantFrom(...MODELS), { nil: undefined }),
  location: fc.option(fc.constantFrom(...LOCATIONS), { nil: undefined }),
  tag: fc.option(fc.constantFrom(...TAGS), { nil: undefined }),
});

// ---- the direct computation ----

interface Expected {
  answer_count: number;
  cited_run_count: number;
  cited_total: number;
  mentioned_run_count: number;
  mention_total: number;
  brand_mention_total: number;
  tracked_mention_total: number;
  won_count: number;
  lost_count: number;
  tier_runs: Record<string, number>;
  tier_citations: Record<string, number>;
  brands: Record<string, number>;
  domain_runs: Record<string, number>;
  domain_citations: Record<string, number>;
  page_runs: Record<string, number>;
  page_citations: Record<string, number>;
}

function analyse(a: GenAnswer) {
  const counts: Record<string, number> = {};
  const first: Record<string, number> = {};
  a.tokens.forEach((t, i) => {
    const brand = BRAND_TOKENS[t];
    if (!brand) return;
    counts[brand] = (counts[brand] ?? 0) + 1;
    first[brand] ??= i;
  });
  // The producer lists the other brands it saw, plus (sometimes) one the text does not contain: one mention.
  const others =
    Object.keys(counts)
      .filter((b) => OTHER_BRANDS.has(b))
      .reduce((s, b) => s + counts[b]!, 0) + (a.extraListed ? 1 : 0);
  const org = counts.org ?? 0;
  const competitors = (counts.Globex ?? 0) + (counts.Initech ?? 0);
  const firstOther = Math.min(
    ...Object.entries(first)
      .filter(([b]) => b !== 'org')
      .map(([, i]) => i),
  );
  return {
    counts,
    org,
    competitors,
    others,
    won: org > 0 && first.org! < firstOther,
    lost: org === 0 && competitors > 0,
  };
}

function expected(answers: GenAnswer[]): Expected {
  const e: Expected = {
    answer_count: 0,
    cited_run_count: 0,
    cited_total: 0,
    mentioned_run_count: 0,
    mention_total: 0,
    brand_mention_total: 0,
    tracked_mention_total: 0,
    won_count: 0,
    lost_count: 0,
    tier_runs: { primary: 0, tracked: 0, secondary: 0 },
    tier_citations: { primary: 0, tracked: 0, secondary: 0 },
    brands: {},
    domain_runs: {},
    domain_citations: {},
    page_runs: {},
    page_citations: {},
  };
  const inc = (m: Record<string, number>, k: string, by = 1) => (m[k] = (m[k] ?? 0) + by);
  for (const a of answers) {
    const x = analyse(a);
    e.answer_count++;
    if (a.citations.length) e.cited_run_count++;
    e.cited_total += a.citations.length;
    const cited = a.citations.map((c) => URLS[c]!);
    for (const c of cited) {
      inc(e.tier_citations, c.tier);
      inc(e.domain_citations, c.domain);
      inc(e.page_citations, c.page);
    }
    for (const t of new Set(cited.map((c) => c.tier))) inc(e.tier_runs, t);
    for (const d of new Set(cited.map((c) => c.domain))) inc(e.domain_runs, d);
    for (const p of new Set(cited.map((c) => c.page))) inc(e.page_runs, p);
    if (x.org) e.mentioned_run_count++;
    e.mention_total += x.org;
    e.tracked_mention_total += x.org + x.competitors;
    e.brand_mention_total += x.org + x.competitors + x.others;
    for (const b of ['org', 'Globex', 'Initech']) if (x.counts[b]) inc(e.brands, b, x.counts[b]);
    if (x.won) e.won_count++;
    if (x.lost) e.lost_count++;
  }
  return e;
}

const ratioOf = (n: number, d: number) => (d === 0 ? null : n / d);

/** Rule 9 over a whole response: every ratio has a value in [0, 1] or null, and a display. */
function checkRatios(node: unknown, path = '$'): void {
  if (Array.isArray(node)) return node.forEach((n, i) => checkRatios(n, `${path}[${i}]`));
  if (typeof node !== 'object' || node === null) return;
  const o = node as Record<string, unknown>;
  if ('value' in o && 'display' in o) {
    assert.equal(typeof o.display, 'string', path);
    if (o.value === null) assert.equal(o.display, 'n/a', path);
    else assert.ok(typeof o.value === 'number' && o.value >= 0 && o.value <= 1, `${path} = ${String(o.value)}`);
    return;
  }
  for (const [k, v] of Object.entries(o)) checkRatios(v, `${path}.${k}`);
}

// ---- the system under test ----

async function buildWorld() {
  const dir = mkdtempSync(join(tmpdir(), 'kb-analytics-prop-'));
  const store = createSqliteStore({ path: join(dir, 'analytics.db') });
  const clock = fixedClock(new Date('2026-06-01T00:00:00Z'));
  for (const p of analyticsProjections) for (const i of p.indexes ?? []) await store.ensureIndex(i.collection, i.fields);
  const commands = createCommandBus({ store, catalog: eventCatalog, projections: analyticsProjections, ids: randomIds, clock });
  const deps = { store, commands, ids: randomIds, clock };
  const ctx: CallContext = {
    org_id: randomUUID(),
    principal: { type: 'api_key', id: randomUUID() },
    permissions: [],
    folder_scope: null,
    request_id: randomUUID(),
  };
  await store.transaction(async (tx) => {
    for (const id of PROMPT_IDS)
      await tx.put(PROMPTS, {
        id,
        org_id: ctx.org_id,
        name: `Prompt ${id.slice(0, 4)}`,
        text: 'q',
        tags: PROMPT_TAGS[id]!,
        deleted: false,
      });
  });
  await createSettingsService(deps).setBrand(ctx, { brand_name: 'Acme', aliases: ['AcmeSoft'] });
  const sources = createTrackedSourcesService(deps);
  for (const r of RULES) await sources.create(ctx, r);
  const competitors = createCompetitorsService(deps);
  const globex = await competitors.create(ctx, { name: 'Globex' });
  const initech = await competitors.create(ctx, { name: 'Initech', aliases: ['Initrode'] });
  return {
    ctx,
    answers: createAnswersService(deps),
    reports: createReportsService({ store, clock }),
    competitorIds: { Globex: globex.competitor_id, Initech: initech.competitor_id } as Record<string, string>,
    /** Make every month row look folded before rows kept a day series. */
    stripSeries: () =>
      store.transaction(async (tx) => {
        for (const doc of await tx.find<CountDoc>(DAILY_COUNTS)) {
          if (!doc.series) continue;
          const { series: _dropped, ...rest } = doc;
          await tx.put(DAILY_COUNTS, rest);
        }
      }),
    cleanup: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const toItem = (a: GenAnswer) => ({
  answer_id: a.answer_id,
  prompt_id: a.prompt_id,
  model: a.model,
  location: a.location,
  run_at: a.run_at,
  text: a.tokens.join(' '),
  citations: a.citations,
  brands: [...new Set(a.tokens.filter((t) => OTHER_BRANDS.has(t))), ...(a.extraListed ? ['Vandelay'] : [])],
});

describe('analytics reports: daily counts against a direct computation', () => {
  it('every ratio, for random answer streams, windows and filters', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(answerArb, { minLength: 0, maxLength: 60, selector: (a) => a.answer_id }),
        fc.array(windowArb, { minLength: 1, maxLength: 4 }),
        async (stream, windows) => {
          const world = await buildWorld();
          try {
            // Two batches in arrival order, not run_at order: a late older answer must never replace a newer one.
            const half = Math.floor(stream.length / 2);
            for (const batch of [stream.slice(0, half), stream.slice(half)])
              if (batch.length) await world.answers.importAnswers(world.ctx, batch.map(toItem));
            for (const w of windows) {
              const from = day(w.from);
              const to = day(w.from + w.span);
              const q = { from, to, prompt_id: w.prompt, model: w.model, location: w.location, tag_id: w.tag, limit: 100 };
              const tagged = w.tag ? PROMPT_IDS.filter((p) => PROMPT_TAGS[p]!.includes(w.tag!)) : PROMPT_IDS;
              const selected = stream.filter(
                (a) =>
                  a.run_at.slice(0, 10) >= from &&
                  a.run_at.slice(0, 10) <= to &&
                  (!w.prompt || a.prompt_id === w.prompt) &&
                  (!w.model || a.model === w.model) &&
                  (!w.location || a.location === w.location) &&
                  tagged.includes(a.prompt_id),
              );
              const e = expected(selected);

              const overview = await world.reports.overview(world.ctx, q);
              checkRatios(overview);
              const { brands: _b, domain_runs: _dr, domain_citations: _dc, page_runs: _pr, page_citations: _pc, ...scalar } = e;
              assert.deepEqual(overview.totals, scalar);
              assert.equal(overview.metrics.cited_answer_rate.value, ratioOf(e.cited_run_count, e.answer_count));
              assert.equal(overview.metrics.share_of_voice.value, ratioOf(e.mention_total, e.brand_mention_total));
              assert.equal(overview.metrics.win_rate.value, ratioOf(e.won_count, e.answer_count));
              assert.equal(overview.data_quality, e.answer_count === 0 ? 'no_data' : e.answer_count < 30 ? 'low_sample' : 'ok');

              // Rule 2: tiers partition citations. Rule 4: rates over D, shares over S summing to 100%.
              const tiers = await world.reports.tiers(world.ctx, q);
              checkRatios(tiers);
              assert.equal(
                tiers.totals.tier_citations.primary + tiers.totals.tier_citations.tracked + tiers.totals.tier_citations.secondary,
                e.cited_total,
              );
              for (const row of tiers.tiers) {
                assert.equal(row.citation_rate.value, ratioOf(e.tier_runs[row.tier]!, e.cited_run_count));
                // Shares may sit a few ulps off the plain quotient so that they add up to exactly 1.
                const share = ratioOf(e.tier_citations[row.tier]!, e.cited_total);
                if (share === null) assert.equal(row.citation_share.value, null);
                else assert.ok(Math.abs(row.citation_share.value! - share) <= 1e-15, `${row.tier} share`);
              }
              if (e.cited_total > 0) {
                // Rule 4: exactly 1, in the rows' order and in tier order.
                assert.equal(
                  tiers.tiers.reduce((s, r) => s + r.citation_share.value!, 0),
                  1,
                );
                assert.equal(
                  [...tiers.tiers].reverse().reduce((s, r) => s + r.citation_share.value!, 0),
                  1,
                );
                const displaySum = tiers.tiers.reduce((s, r) => s + Math.round(parseFloat(r.citation_share.display) * 10), 0);
                assert.equal(displaySum, 1000);
              }

              for (const kind of ['domain', 'page'] as const) {
                const report = await world.reports.sources(world.ctx, kind, q);
                checkRatios(report);
                const rows = (kind === 'domain' ? report.domains : report.pages) as {
                  answers_citing: number;
                  citations: number;
                  coverage: { value: number | null };
                  share: { value: number | null };
                  domain?: string;
                  url?: string;
                }[];
                const runs = kind === 'domain' ? e.domain_runs : e.page_runs;
                const cites = kind === 'domain' ? e.domain_citations : e.page_citations;
                assert.equal(report.total_count, Object.keys(cites).length);
                for (const r of rows) {
                  const key = (r.domain ?? r.url)!;
                  assert.equal(r.answers_citing, runs[key]);
                  assert.equal(r.citations, cites[key]);
                  assert.equal(r.coverage.value, ratioOf(runs[key]!, e.cited_run_count));
                  assert.equal(r.share.value, ratioOf(cites[key]!, e.cited_total));
                }
              }

              const sov = await world.reports.shareOfVoice(world.ctx, q);
              checkRatios(sov);
              assert.equal(sov.other_brand_mention_total, e.brand_mention_total - e.tracked_mention_total);
              for (const b of sov.brands) {
                const key = b.is_organization
                  ? 'org'
                  : Object.keys(world.competitorIds).find((n) => world.competitorIds[n] === b.brand_id)!;
                assert.equal(b.mentions, e.brands[key] ?? 0);
                assert.equal(b.share_of_voice.value, ratioOf(e.brands[key] ?? 0, e.brand_mention_total));
              }
              // Other brands are never named.
              assert.ok(!JSON.stringify(sov).includes('Umbrella') && !JSON.stringify(sov).includes('Vandelay'));

              const prompts = await world.reports.prompts(world.ctx, q);
              checkRatios(prompts);
              for (const row of prompts.prompts) {
                const pe = expected(selected.filter((a) => a.prompt_id === row.prompt_id));
                assert.equal(row.answer_count, pe.answer_count);
                assert.equal(row.won_count, pe.won_count);
                assert.equal(row.lost_count, pe.lost_count);
              }
              assert.equal(prompts.total_count, new Set(selected.map((a) => a.prompt_id)).size);

              const series = await world.reports.timeseries(world.ctx, q);
              checkRatios(series);
              assert.equal(series.days.length, w.span + 1);
              for (const d of series.days) {
                const de = expected(selected.filter((a) => a.run_at.startsWith(d.day)));
                const figures = (x: typeof de | typeof d) => [
                  x.answer_count,
                  x.cited_run_count,
                  x.cited_total,
                  x.mention_total,
                  x.brand_mention_total,
                  x.tracked_mention_total,
                  x.won_count,
                  x.lost_count,
                ];
                assert.deepEqual(figures(d), figures(de), d.day);
                assert.equal(d.owned_citation_rate.value, ratioOf(de.tier_runs.primary ?? 0, de.cited_run_count));
              }

              // Rules 6 and 7: the latest answer per combination over all answers, hidden when outside the window.
              const latestQ = {
                from: `${from}T00:00:00.000Z`,
                to: `${to}T23:59:59.999Z`,
                prompt_id: w.prompt,
                model: w.model,
                location: w.location,
                tag_id: w.tag,
                limit: 100,
              };
              const latest = await world.reports.latestAnswers(world.ctx, latestQ);
              checkRatios(latest);
              const newest = new Map<string, GenAnswer>();
              for (const a of stream) {
                const k = `${a.prompt_id}|${a.model}|${a.location}`;
                const cur = newest.get(k);
                if (!cur || a.run_at > cur.run_at || (a.run_at === cur.run_at && a.answer_id > cur.answer_id)) newest.set(k, a);
              }
              const visible = [...newest.values()]
                .filter((a) => selected.includes(a))
                .map((a) => a.answer_id)
                .sort();
              assert.deepEqual(latest.answers.map((a) => a.answer_id).sort(), visible);
            }

            // Month rows folded before they kept a day series: the time series reads day rows instead, same figures.
            const w0 = windows[0]!;
            const q0 = {
              from: day(w0.from),
              to: day(w0.from + w0.span),
              prompt_id: w0.prompt,
              model: w0.model,
              location: w0.location,
              tag_id: w0.tag,
            };
            const withSeries = await world.reports.timeseries(world.ctx, q0);
            await world.stripSeries();
            assert.deepEqual(await world.reports.timeseries(world.ctx, q0), withSeries);
          } finally {
            await world.cleanup();
          }
        },
      ),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 40) },
    );
  });
});
