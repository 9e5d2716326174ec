import { errors } from '@kb/platform';
import { NO_RULE, type Counts, type SourceCounts } from './counts.js';
import { ratio, shares, type Ratio } from './ratios.js';
import { TIERS, TIER_LABELS, type MatchType, type TierName } from './sources.js';
import { registrableDomain } from './urls.js';

/** The effective window and filters of a report (rule 8). */
export interface ReportWindow {
  from: string;
  to: string;
  days: number;
  timezone: 'UTC';
  filters: { prompt_id?: string; model?: string; location?: string; tag_id?: string };
}

/** answers/latest filters on run_at instants; an open end is null. */
export interface LatestWindow {
  from: string | null;
  to: string | null;
  timezone: 'UTC';
  filters: ReportWindow['filters'];
}

export type DataQuality = 'ok' | 'no_data' | 'low_sample';
/** Under this many answers in the window, ratios move a lot from one answer to the next. */
export const LOW_SAMPLE = 30;

export function totalsOf(c: Counts) {
  return {
    answer_count: c.answer_count,
    cited_run_count: c.cited_run_count,
    cited_total: c.cited_total,
    mentioned_run_count: c.mentioned_run_count,
    mention_total: c.mention_total,
    brand_mention_total: c.brand_mention_total,
    tracked_mention_total: c.tracked_mention_total,
    won_count: c.won_count,
    lost_count: c.lost_count,
    tier_runs: { ...c.tier_runs },
    tier_citations: { ...c.tier_citations },
  };
}

const dataQuality = (c: Counts): DataQuality => (c.answer_count === 0 ? 'no_data' : c.answer_count < LOW_SAMPLE ? 'low_sample' : 'ok');

const COMMON_NOTES = [
  'Days are UTC calendar days of each answer\u2019s collection time (run_at); from and to are inclusive.',
  'Every count is a sum of daily counts, so every ratio here can be recomputed from the totals and rows of this response.',
];

/** Rule 8: every report carries window, totals, data_quality, notes and definitions. */
export function envelope<B extends object>(
  window: ReportWindow | LatestWindow,
  counts: Counts,
  notes: string[],
  definitions: Record<string, string>,
  body: B,
) {
  const quality = dataQuality(counts);
  const extra =
    quality === 'no_data'
      ? ['No answers in this window: every ratio is null.']
      : quality === 'low_sample'
        ? [`Fewer than ${LOW_SAMPLE} answers in this window: ratios are volatile.`]
        : [];
  return { window, totals: totalsOf(counts), data_quality: quality, notes: [...COMMON_NOTES, ...notes, ...extra], definitions, ...body };
}

// ---- sorting (rule 10: analytics reports alone take sort and order) ----

export type Order = 'asc' | 'desc';
type SortValue = string | number | Ratio;

/** Sorts rows by one of the report's keys; ratios sort by value with null last; ties by the row's natural key. */
export function sortRows<R>(
  rows: R[],
  keys: Record<string, (r: R) => SortValue>,
  sort: string,
  order: Order,
  natural: (r: R) => string,
): R[] {
  const get = keys[sort];
  if (!get) throw errors.validation(`sort must be one of ${Object.keys(keys).join(', ')}`, { details: { field: 'sort' } });
  const num = (v: SortValue) => (typeof v === 'object' ? v.value : v);
  return [...rows].sort((a, b) => {
    const av = num(get(a));
    const bv = num(get(b));
    if (av === null || bv === null) {
      if (av !== bv) return av === null ? 1 : -1;
    } else if (av !== bv) {
      const c = av < bv ? -1 : 1;
      return order === 'asc' ? c : -c;
    }
    const an = natural(a);
    const bn = natural(b);
    return an < bn ? -1 : an > bn ? 1 : 0;
  });
}

// ---- the reports ----

export const definitions = {
  answer_count: 'Answers collected in the window (one per prompt, model, location and collection).',
  cited_run_count: 'D: answers with at least one citation of any tier.',
  cited_total: 'S: citation instances (every cited URL of every answer counted separately).',
  cited_answer_rate: 'cited_run_count / answer_count.',
  mention_rate: 'Answers naming the organization / answer_count.',
  share_of_voice: 'mention_total / brand_mention_total (mention instances of every brand named, tracked or not).',
  citation_rate: 'Per tier: distinct answers citing the tier / D (cited_run_count). Tiers overlap, so rates can sum above 100%.',
  citation_share: 'Per tier: citation instances in the tier / S (cited_total). Shares sum to exactly 100%.',
  coverage: 'Per source (domain, registrable domain, page or tracked-source rule): distinct answers citing it / D (cited_run_count).',
  source_share: 'Per source (domain, registrable domain, page or tracked-source rule): citation instances of it / S (cited_total).',
  registrable_domain:
    'A host rolled up to its registrable domain by the public suffix list: its public suffix plus one label (docs.example.com -> example.com, news.example.co.uk -> example.co.uk).',
  source_rule:
    'The tracked-source rule that decided a citation\u2019s tier (the most specific match, rule precedence); none when no rule matched (External).',
  tracked_share: 'Per tracked brand: its mention instances / tracked_mention_total.',
  win_rate: 'won_count / answer_count.',
  loss_rate: 'lost_count / answer_count.',
} as const;

export function overviewReport(window: ReportWindow, c: Counts) {
  const [ownedShare] = shares([c.tier_citations.primary, c.tier_citations.tracked, c.tier_citations.secondary], c.cited_total);
  return envelope(
    window,
    c,
    [],
    {
      cited_answer_rate: definitions.cited_answer_rate,
      mention_rate: definitions.mention_rate,
      share_of_voice: definitions.share_of_voice,
      owned_citation_rate: 'Answers citing an Owned (primary) URL / D (cited_run_count).',
      owned_citation_share: 'Owned (primary) citation instances / S (cited_total).',
      win_rate: definitions.win_rate,
      loss_rate: definitions.loss_rate,
    },
    {
      metrics: {
        cited_answer_rate: ratio(c.cited_run_count, c.answer_count),
        mention_rate: ratio(c.mentioned_run_count, c.answer_count),
        share_of_voice: ratio(c.mention_total, c.brand_mention_total),
        owned_citation_rate: ratio(c.tier_runs.primary, c.cited_run_count),
        owned_citation_share: ownedShare!,
        win_rate: ratio(c.won_count, c.answer_count),
        loss_rate: ratio(c.lost_count, c.answer_count),
      },
    },
  );
}

export function tierReport(window: ReportWindow, c: Counts, sort: string, order: Order) {
  const tierShares = shares(
    TIERS.map((t) => c.tier_citations[t]),
    c.cited_total,
  );
  const rows = TIERS.map((tier, i) => ({
    tier,
    label: TIER_LABELS[tier],
    answers_citing: c.tier_runs[tier],
    citations: c.tier_citations[tier],
    citation_rate: ratio(c.tier_runs[tier], c.cited_run_count),
    citation_share: tierShares[i]!,
  }));
  const rank = (t: string) => String(TIERS.indexOf(t as never));
  const sorted = sortRows(
    rows,
    {
      tier: (r) => TIERS.indexOf(r.tier),
      answers_citing: (r) => r.answers_citing,
      citations: (r) => r.citations,
      citation_rate: (r) => r.citation_rate,
      citation_share: (r) => r.citation_share,
    },
    sort,
    order,
    (r) => rank(r.tier),
  );
  return envelope(
    window,
    c,
    [
      'A citation\u2019s tier is decided by the tracked-source rules in force when its answer was folded; rule changes apply to answers folded afterwards.',
      'Tiers partition citations, not answers: one answer can cite all three tiers, so citation rates can sum above 100%. Citation shares sum to exactly 100%.',
    ],
    {
      citation_rate: definitions.citation_rate,
      citation_share: definitions.citation_share,
      cited_run_count: definitions.cited_run_count,
      cited_total: definitions.cited_total,
    },
    { tiers: sorted },
  );
}

export function sourceReport(
  kind: 'domain' | 'page',
  window: ReportWindow,
  c: Counts,
  s: SourceCounts,
  sort: string,
  order: Order,
  page: { limit: number; offset: number },
) {
  const runs = kind === 'domain' ? s.domain_runs : s.page_runs;
  const cites = kind === 'domain' ? s.domain_citations : s.page_citations;
  const name = kind === 'domain' ? 'domain' : 'url';
  // Thousands of pages: rank bare counts and build ratios for the page of rows
  // only. Coverage and share divide every source by the same D and S, so they
  // rank as answers_citing and citations do (all null when it is 0).
  const NONE = { value: null, display: 'n/a' };
  const all = Object.keys(cites).map((key) => ({ key, runs: runs[key] ?? 0, cites: cites[key]! }));
  const sorted = sortRows(
    all,
    {
      [name]: (r) => r.key,
      answers_citing: (r) => r.runs,
      citations: (r) => r.cites,
      coverage: (r) => (c.cited_run_count === 0 ? NONE : r.runs),
      share: (r) => (c.cited_total === 0 ? NONE : r.cites),
    },
    sort,
    order,
    (r) => r.key,
  );
  const rows = sorted.slice(page.offset, page.offset + page.limit).map((r) => ({
    [name]: r.key,
    answers_citing: r.runs,
    citations: r.cites,
    coverage: ratio(r.runs, c.cited_run_count),
    share: ratio(r.cites, c.cited_total),
  }));
  return envelope(
    window,
    c,
    [
      kind === 'domain'
        ? 'A domain is the normalised host of the cited URL (without www.).'
        : 'A page is the normalised cited URL (no scheme, www., fragment, tracking parameters or trailing slash; sorted query).',
      'Coverage counts distinct answers and can sum above 100% across sources; share counts citation instances.',
    ],
    {
      coverage: definitions.coverage,
      share: definitions.source_share,
      cited_run_count: definitions.cited_run_count,
      cited_total: definitions.cited_total,
    },
    { total_count: all.length, limit: page.limit, offset: page.offset, [kind === 'domain' ? 'domains' : 'pages']: rows },
  );
}

export interface BrandName {
  key: string;
  name: string;
}

export function shareOfVoiceReport(window: ReportWindow, c: Counts, brands: BrandName[], sort: string, order: Order) {
  const rows = brands.map((b) => {
    const mentions = c.brand_mentions[b.key] ?? 0;
    return {
      brand_id: b.key === 'org' ? null : b.key,
      name: b.name,
      is_organization: b.key === 'org',
      mentions,
      share_of_voice: ratio(mentions, c.brand_mention_total),
      tracked_share: ratio(mentions, c.tracked_mention_total),
    };
  });
  const sorted = sortRows(
    rows,
    {
      mentions: (r) => r.mentions,
      share_of_voice: (r) => r.share_of_voice,
      tracked_share: (r) => r.tracked_share,
      name: (r) => r.name.toLowerCase(),
    },
    sort,
    order,
    (r) => `${r.is_organization ? 0 : 1}${r.name.toLowerCase()}`,
  );
  return envelope(
    window,
    c,
    [
      'Brands other than the organization and its tracked competitors are counted in brand_mention_total but never named.',
      'Mentions of a competitor count from when it was tracked; mentions before that are in brand_mention_total only.',
    ],
    {
      share_of_voice: definitions.share_of_voice,
      tracked_share: definitions.tracked_share,
      brand_mention_total: 'Mention instances of every brand named, tracked or not.',
      tracked_mention_total: 'Mention instances of the organization plus tracked competitors (reported, not the denominator).',
    },
    {
      share_of_voice: ratio(c.mention_total, c.brand_mention_total),
      other_brand_mention_total: c.brand_mention_total - c.tracked_mention_total,
      brands: sorted,
    },
  );
}

export interface PromptRowInput {
  prompt_id: string;
  name: string | null;
  counts: Pick<Counts, 'answer_count' | 'won_count' | 'lost_count'>;
}

/** Glossary: a prompt's outcome over the window compares its won and lost answers. */
export const outcomeOf = (won: number, lost: number): 'won' | 'lost' | 'tied' | 'none' =>
  won > lost ? 'won' : lost > won ? 'lost' : won > 0 ? 'tied' : 'none';

export function promptsReport(
  window: ReportWindow,
  c: Counts,
  prompts: PromptRowInput[],
  sort: string,
  order: Order,
  page: { limit: number; offset: number },
) {
  const all = prompts.map((p) => ({
    prompt_id: p.prompt_id,
    name: p.name,
    answer_count: p.counts.answer_count,
    won_count: p.counts.won_count,
    lost_count: p.counts.lost_count,
    win_rate: ratio(p.counts.won_count, p.counts.answer_count),
    loss_rate: ratio(p.counts.lost_count, p.counts.answer_count),
    outcome: outcomeOf(p.counts.won_count, p.counts.lost_count),
  }));
  const sorted = sortRows(
    all,
    {
      answer_count: (r) => r.answer_count,
      won_count: (r) => r.won_count,
      lost_count: (r) => r.lost_count,
      win_rate: (r) => r.win_rate,
      loss_rate: (r) => r.loss_rate,
      name: (r) => (r.name ?? '').toLowerCase(),
    },
    sort,
    order,
    (r) => r.prompt_id,
  );
  const count = (o: string) => all.filter((r) => r.outcome === o).length;
  return envelope(
    window,
    c,
    [
      'An answer is won when it names the organization before any other brand; lost when it names a tracked competitor and not the organization; otherwise neither.',
    ],
    {
      won_count: 'Answers that name the organization before any other brand.',
      lost_count: 'Answers that name a tracked competitor and not the organization.',
      win_rate: definitions.win_rate,
      loss_rate: definitions.loss_rate,
      outcome:
        'Per prompt over the window: won when won_count > lost_count, lost when lost_count > won_count, tied when equal and above 0, else none.',
    },
    {
      prompts_won: count('won'),
      prompts_lost: count('lost'),
      prompts_tied: count('tied'),
      total_count: all.length,
      limit: page.limit,
      offset: page.offset,
      prompts: sorted.slice(page.offset, page.offset + page.limit),
    },
  );
}

export function timeseriesReport(window: ReportWindow, c: Counts, days: { day: string; counts: Counts }[], sort: string, order: Order) {
  const rows = days.map(({ day, counts: d }) => ({
    day,
    answer_count: d.answer_count,
    cited_run_count: d.cited_run_count,
    cited_total: d.cited_total,
    mention_total: d.mention_total,
    brand_mention_total: d.brand_mention_total,
    tracked_mention_total: d.tracked_mention_total,
    won_count: d.won_count,
    lost_count: d.lost_count,
    cited_answer_rate: ratio(d.cited_run_count, d.answer_count),
    share_of_voice: ratio(d.mention_total, d.brand_mention_total),
    owned_citation_rate: ratio(d.tier_runs.primary, d.cited_run_count),
  }));
  const sorted = sortRows(rows, { day: (r) => r.day, answer_count: (r) => r.answer_count }, sort, order, (r) => r.day);
  return envelope(
    window,
    c,
    ['One row per UTC day of the window, days without answers included (their ratios are null).'],
    {
      cited_answer_rate: definitions.cited_answer_rate,
      share_of_voice: definitions.share_of_voice,
      owned_citation_rate: 'Answers citing an Owned URL that day / that day\u2019s cited_run_count.',
    },
    { days: sorted },
  );
}

/** Rows folded before per-rule and registrable-domain counts existed lack them (replay adds them). */
const legacyNote = (legacy: boolean) =>
  legacy
    ? [
        'Some days of this window were folded before per-rule and registrable-domain counts were kept; their citations are missing here until the read models are rebuilt (npm run admin -- rebuild-read-models analytics).',
      ]
    : [];

/** A tracked-source rule as the per-rule report names it; null fields for a rule deleted since. */
export interface RuleInfo {
  source_id: string;
  match_type: MatchType;
  pattern: string;
  tier: TierName;
  label?: string;
  source_origin: string;
}

/**
 * Rule 4 per source: for each tracked-source rule, the citations it won (its
 * tier decided by it): coverage over D (distinct answers) and share over S
 * (instances). Rules in force are listed even when nothing cited them; rules
 * deleted since are listed while the window holds citations they won.
 */
export function ruleReport(
  window: ReportWindow,
  c: Counts,
  s: Required<SourceCounts>,
  rules: RuleInfo[],
  legacy: boolean,
  sort: string,
  order: Order,
  page: { limit: number; offset: number },
) {
  const byId = new Map(rules.map((r) => [r.source_id, r]));
  const ids = new Set([...rules.map((r) => r.source_id), ...Object.keys(s.rule_citations).filter((k) => k !== NO_RULE)]);
  const all = [...ids].map((id) => {
    const rule = byId.get(id);
    const runs = s.rule_runs[id] ?? 0;
    const cites = s.rule_citations[id] ?? 0;
    return {
      source_id: id,
      status: rule ? ('active' as const) : ('deleted' as const),
      match_type: rule?.match_type ?? null,
      pattern: rule?.pattern ?? null,
      tier: rule?.tier ?? null,
      label: rule?.label ?? null,
      source_origin: rule?.source_origin ?? null,
      answers_citing: runs,
      citations: cites,
      coverage: ratio(runs, c.cited_run_count),
      share: ratio(cites, c.cited_total),
    };
  });
  const sorted = sortRows(
    all,
    {
      answers_citing: (r) => r.answers_citing,
      citations: (r) => r.citations,
      coverage: (r) => r.coverage,
      share: (r) => r.share,
      pattern: (r) => r.pattern ?? '',
      tier: (r) => (r.tier === null ? 3 : TIERS.indexOf(r.tier)),
    },
    sort,
    order,
    (r) => r.source_id,
  );
  const unmatchedRuns = s.rule_runs[NO_RULE] ?? 0;
  const unmatchedCites = s.rule_citations[NO_RULE] ?? 0;
  return envelope(
    window,
    c,
    [
      'Each citation counts for the one rule that decided its tier when its answer was folded (rule precedence); a rule changed since keeps its id and its counts, and shows its current pattern and tier.',
      'Coverage counts distinct answers and can sum above 100% across rules; shares of the rules plus unmatched sum to 100% of S.',
      ...legacyNote(legacy),
    ],
    {
      source_rule: definitions.source_rule,
      coverage: definitions.coverage,
      share: definitions.source_share,
      cited_run_count: definitions.cited_run_count,
      cited_total: definitions.cited_total,
      unmatched: 'Citations no tracked-source rule matched (External, secondary).',
    },
    {
      unmatched: {
        answers_citing: unmatchedRuns,
        citations: unmatchedCites,
        coverage: ratio(unmatchedRuns, c.cited_run_count),
        share: ratio(unmatchedCites, c.cited_total),
      },
      total_count: all.length,
      limit: page.limit,
      offset: page.offset,
      sources: sorted.slice(page.offset, page.offset + page.limit),
    },
  );
}

/**
 * Coverage and share per registrable domain: every host cited (docs.example.com,
 * example.com) rolled up under example.com by the public suffix list, with the
 * hosts seen in the window. Coverage counts an answer once per registrable
 * domain, however many of its hosts it cites.
 */
export function registrableDomainReport(
  window: ReportWindow,
  c: Counts,
  s: Required<SourceCounts>,
  legacy: boolean,
  sort: string,
  order: Order,
  page: { limit: number; offset: number },
) {
  const hosts = new Map<string, string[]>();
  for (const host of Object.keys(s.domain_citations)) {
    const site = registrableDomain(host);
    const list = hosts.get(site) ?? [];
    list.push(host);
    hosts.set(site, list);
  }
  const all = Object.keys(s.site_citations).map((site) => ({
    registrable_domain: site,
    answers_citing: s.site_runs[site] ?? 0,
    citations: s.site_citations[site]!,
    coverage: ratio(s.site_runs[site] ?? 0, c.cited_run_count),
    share: ratio(s.site_citations[site]!, c.cited_total),
    hosts: (hosts.get(site) ?? []).sort((a, b) => s.domain_citations[b]! - s.domain_citations[a]! || (a < b ? -1 : a > b ? 1 : 0)),
  }));
  const sorted = sortRows(
    all,
    {
      registrable_domain: (r) => r.registrable_domain,
      answers_citing: (r) => r.answers_citing,
      citations: (r) => r.citations,
      coverage: (r) => r.coverage,
      share: (r) => r.share,
    },
    sort,
    order,
    (r) => r.registrable_domain,
  );
  return envelope(
    window,
    c,
    [
      'Hosts are rolled up by the public suffix list (ICANN and private sections, from the tldts package): example.co.uk is a registrable domain, co.uk is not. A host without one (an IP address, localhost) is its own.',
      'hosts lists the cited hosts under each registrable domain, most cited first.',
      ...legacyNote(legacy),
    ],
    {
      registrable_domain: definitions.registrable_domain,
      coverage: definitions.coverage,
      share: definitions.source_share,
      cited_run_count: definitions.cited_run_count,
      cited_total: definitions.cited_total,
    },
    {
      total_count: all.length,
      limit: page.limit,
      offset: page.offset,
      registrable_domains: sorted.slice(page.offset, page.offset + page.limit),
    },
  );
}
