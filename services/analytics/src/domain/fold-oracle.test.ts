/**
 * The per-answer fold as it was before its fast paths (memoised URLs and
 * rules, compiled brand names, fewer allocations), kept verbatim as the oracle
 * the property tests and test/bench/answer-facts.bench.ts compare the current
 * functions against. Not a test file itself (no tier suffix, so vitest does not
 * run it); named *.test.ts so the build leaves it out.
 */
import { getDomain } from 'tldts';
import { UNPARSEABLE, DEFAULT_LOCATION, isName, type AnswerInput } from './answer-input.js';
import { extractBrands, type MentionResult, type TrackedBrand } from './brands.js';
import type { AnswerCollected } from '@kb/events';
import type { AnswerBody, AnswerFacts, CitationFact, FoldContext } from './facts.js';
import type { SourceRule, TierName } from './sources.js';
import { NO_RULE, SOURCE_MAPS, type Counts, type SourceCounts, type SourceTally } from './counts.js';
import { FAMILIES, isCompact, type CompactSources, type Family } from '../projections/source-rows.js';
import type { NormalizedUrl } from './urls.js';

const TRACKING_PARAMS = new Set([
  'gclid',
  'fbclid',
  'msclkid',
  'dclid',
  'yclid',
  'igshid',
  'mc_cid',
  'mc_eid',
  '_ga',
  '_gl',
  'ref',
  'ref_src',
  'srsltid',
]);

export function registrableDomain(host: string): string {
  return getDomain(host, { allowPrivateDomains: true }) ?? host;
}

const isTracking = (name: string) => name.toLowerCase().startsWith('utm_') || TRACKING_PARAMS.has(name.toLowerCase());

export function normalizeUrl(raw: string): NormalizedUrl | null {
  let parsed: URL;
  const text = raw.trim();
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text) && /^[a-z][a-z0-9+-]*:(?!\d)/i.test(text)) return null;
  try {
    parsed = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`);
  } catch {
    return null;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return null;
  if (parsed.username || parsed.password) return null;
  const host = parsed.hostname
    .toLowerCase()
    .replace(/^www\./, '')
    .replace(/\.$/, '');
  if (!host.includes('.') && host !== 'localhost') return null;
  let path = parsed.pathname.replace(/\/+$/, '');
  try {
    path = decodeURI(path);
  } catch {
    /* keep the encoded form */
  }
  const params = [...parsed.searchParams.entries()].filter(([k]) => !isTracking(k)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const query = params.length ? `?${new URLSearchParams(params).toString()}` : '';
  return { key: `${host}${path}${query}`, host, path };
}

function specificity(rule: SourceRule): number {
  switch (rule.match_type) {
    case 'exact_url':
      return 4e6;
    case 'path_prefix':
      return 3e6 + rule.pattern.length;
    case 'host':
      return 2e6;
    case 'domain':
      return 1e6 + rule.pattern.length;
  }
}

function matches(rule: SourceRule, url: NormalizedUrl): boolean {
  switch (rule.match_type) {
    case 'exact_url':
      return url.key === rule.pattern;
    case 'host':
      return url.host === rule.pattern;
    case 'domain':
      return url.host === rule.pattern || url.host.endsWith(`.${rule.pattern}`);
    case 'path_prefix': {
      const hostPath = `${url.host}${url.path}`;
      return hostPath === rule.pattern || hostPath.startsWith(`${rule.pattern}/`);
    }
  }
}

const tierRank: Record<TierName, number> = { primary: 3, tracked: 2, secondary: 1 };

export function winningRule(rules: SourceRule[], url: NormalizedUrl): SourceRule | undefined {
  let best: SourceRule | undefined;
  for (const rule of rules) {
    if (!matches(rule, url)) continue;
    if (!best) {
      best = rule;
      continue;
    }
    const d = specificity(rule) - specificity(best) || tierRank[rule.tier] - tierRank[best.tier] || best.seq - rule.seq;
    if (d > 0) best = rule;
  }
  return best;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const nameKey = (s: string) => s.trim().toLowerCase().replace(/\s+/g, ' ');

export function countOccurrences(text: string, names: string[]): { count: number; first: number } {
  const spans: [number, number][] = [];
  for (const raw of names) {
    const name = raw.trim();
    if (!name) continue;
    const re = new RegExp(`(?<![\\p{L}\\p{N}])${escape(name).replace(/\s+/g, '\\s+')}(?![\\p{L}\\p{N}])`, 'giu');
    for (const m of text.matchAll(re)) spans.push([m.index, m.index + m[0].length]);
  }
  spans.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  let count = 0;
  let end = -1;
  for (const [s, e] of spans) {
    if (s < end) continue;
    count++;
    end = e;
  }
  return { count, first: spans.length ? spans[0]![0] : Number.POSITIVE_INFINITY };
}

export function findMentions(text: string, tracked: TrackedBrand[], producerBrands: string[] | undefined): MentionResult {
  const listed = producerBrands ?? extractBrands(text);
  const trackedByName = new Map<string, string>();
  for (const b of tracked) for (const n of b.names) if (!trackedByName.has(nameKey(n))) trackedByName.set(nameKey(n), b.key);
  const listedTracked = new Map<string, number>();
  listed.forEach((n, i) => {
    const key = trackedByName.get(nameKey(n));
    if (key !== undefined && !listedTracked.has(key)) listedTracked.set(key, i);
  });

  const afterText = text.length + 1;
  const result: MentionResult = { tracked: [], others: [] };
  for (const b of tracked) {
    const occ = countOccurrences(text, b.names);
    const listedAt = listedTracked.get(b.key);
    if (occ.count > 0) result.tracked.push({ key: b.key, count: occ.count, first: occ.first });
    else if (listedAt !== undefined) result.tracked.push({ key: b.key, count: 1, first: afterText + listedAt });
  }
  const seen = new Set<string>();
  listed.forEach((name, i) => {
    const k = nameKey(name);
    if (seen.has(k) || trackedByName.has(k)) return;
    seen.add(k);
    const occ = countOccurrences(text, [name]);
    result.others.push({ name: name.trim(), count: Math.max(1, occ.count), first: occ.count ? occ.first : afterText + i });
  });
  return result;
}

export const dayOf = (timestamp: string): string => new Date(timestamp).toISOString().slice(0, 10);

export function answerFacts(answer: AnswerBody, context: FoldContext): AnswerFacts {
  const citations: CitationFact[] = [];
  for (const raw of answer.citations) {
    const url = normalizeUrl(raw);
    if (!url) continue;
    const rule = winningRule(context.rules, url);
    citations.push({
      page: url.key,
      domain: url.host,
      site: registrableDomain(url.host),
      tier: rule?.tier ?? 'secondary',
      source_id: rule?.source_id ?? null,
    });
  }
  const mentions = findMentions(answer.text, context.brands, answer.brands);
  const tracked_mentions: Record<string, number> = {};
  for (const m of mentions.tracked) tracked_mentions[m.key] = m.count;
  const org = mentions.tracked.find((m) => m.key === 'org');
  const firstOther = Math.min(
    ...mentions.tracked.filter((m) => m.key !== 'org').map((m) => m.first),
    ...mentions.others.map((m) => m.first),
  );
  return {
    answer_id: answer.answer_id,
    prompt_id: answer.prompt_id,
    model: answer.model,
    location: answer.location,
    run_at: answer.run_at,
    day: dayOf(answer.run_at),
    citations,
    tracked_mentions,
    other_mentions: mentions.others.map(({ name, count }) => ({ name, count })),
    won: org !== undefined && org.first < firstOther,
    lost: org === undefined && mentions.tracked.some((m) => m.key !== 'org'),
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;
const KNOWN = new Set(['answer_id', 'prompt_id', 'model', 'location', 'run_at', 'text', 'citations', 'brands']);
const FUTURE_SLACK_MS = 5 * 60_000;

export function validateAnswerInput(item: unknown, now: Date): { ok: true; value: AnswerInput } | { ok: false; errors: string[] } {
  if (item === UNPARSEABLE) return { ok: false, errors: ['item is not valid JSON'] };
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return { ok: false, errors: ['item must be a JSON object'] };
  const o = item as Record<string, unknown>;
  const errs: string[] = [];
  for (const k of Object.keys(o)) if (!KNOWN.has(k)) errs.push(`unknown field ${k}`);
  if (o.answer_id !== undefined && (typeof o.answer_id !== 'string' || !UUID.test(o.answer_id))) errs.push('answer_id must be a uuid');
  if (typeof o.prompt_id !== 'string' || !UUID.test(o.prompt_id)) errs.push('prompt_id is required and must be a uuid');
  if (!isName(o.model)) errs.push('model is required: 1 to 100 characters, not *');
  if (o.location !== undefined && !isName(o.location)) errs.push('location must be 1 to 100 characters, not *');
  if (typeof o.run_at !== 'string' || !ISO.test(o.run_at) || Number.isNaN(Date.parse(o.run_at)))
    errs.push('run_at is required: an ISO 8601 date-time with a time zone');
  else if (Date.parse(o.run_at) > now.getTime() + FUTURE_SLACK_MS) errs.push('run_at is in the future');
  if (typeof o.text !== 'string' || o.text.length > 200000) errs.push('text is required: a string of at most 200000 characters');
  if (!Array.isArray(o.citations) || o.citations.length > 500)
    errs.push('citations is required: an array of at most 500 URLs (may be empty)');
  else
    o.citations.forEach((c, i) => {
      if (typeof c !== 'string' || c.length > 4096 || !normalizeUrl(c)) errs.push(`citations[${i}] is not an http(s) URL`);
    });
  if (o.brands !== undefined) {
    if (!Array.isArray(o.brands) || o.brands.length > 200) errs.push('brands must be an array of at most 200 names');
    else
      o.brands.forEach((b, i) => {
        if (typeof b !== 'string' || !b.trim() || b.length > 200) errs.push(`brands[${i}] must be a name of 1 to 200 characters`);
      });
  }
  if (errs.length) return { ok: false, errors: errs };
  return {
    ok: true,
    value: {
      ...(o.answer_id !== undefined && { answer_id: (o.answer_id as string).toLowerCase() }),
      prompt_id: (o.prompt_id as string).toLowerCase(),
      model: (o.model as string).trim(),
      location: o.location === undefined ? DEFAULT_LOCATION : (o.location as string).trim(),
      run_at: new Date(o.run_at as string).toISOString(),
      text: o.text as string,
      citations: o.citations as string[],
      ...(o.brands !== undefined && { brands: (o.brands as string[]).map((b) => b.trim()) }),
    },
  };
}

const bump = (map: Record<string, number>, key: string, by = 1) => {
  map[key] = (map[key] ?? 0) + by;
};

export function addFacts<C extends Counts>(c: C, f: AnswerFacts): C {
  c.answer_count += 1;
  if (f.citations.length > 0) c.cited_run_count += 1;
  c.cited_total += f.citations.length;
  const tiers = new Set<TierName>();
  for (const cit of f.citations) {
    c.tier_citations[cit.tier] += 1;
    tiers.add(cit.tier);
  }
  for (const t of tiers) c.tier_runs[t] += 1;
  const orgMentions = f.tracked_mentions.org ?? 0;
  if (orgMentions > 0) c.mentioned_run_count += 1;
  c.mention_total += orgMentions;
  let tracked = 0;
  for (const [key, n] of Object.entries(f.tracked_mentions)) {
    tracked += n;
    bump(c.brand_mentions, key, n);
  }
  c.tracked_mention_total += tracked;
  c.brand_mention_total += tracked + f.other_mentions.reduce((s, o) => s + o.count, 0);
  if (f.won) c.won_count += 1;
  if (f.lost) c.lost_count += 1;
  return c;
}

const bumpTally = (map: Map<string, number>, key: string, by = 1) => map.set(key, (map.get(key) ?? 0) + by);

export function tallySourceFacts(t: SourceTally, f: AnswerFacts): SourceTally {
  const domains = new Set<string>();
  const pages = new Set<string>();
  const sites = new Set<string>();
  const rules = new Set<string>();
  for (const cit of f.citations) {
    const rule = cit.source_id ?? NO_RULE;
    bumpTally(t.domain_citations, cit.domain);
    bumpTally(t.page_citations, cit.page);
    bumpTally(t.site_citations, cit.site);
    bumpTally(t.rule_citations, rule);
    domains.add(cit.domain);
    pages.add(cit.page);
    sites.add(cit.site);
    rules.add(rule);
  }
  for (const d of domains) bumpTally(t.domain_runs, d);
  for (const p of pages) bumpTally(t.page_runs, p);
  for (const x of sites) bumpTally(t.site_runs, x);
  for (const r of rules) bumpTally(t.rule_runs, r);
  return t;
}

export function mergeSourceTally(into: SourceTally, from: SourceTally): SourceTally {
  for (const f of SOURCE_MAPS) {
    const m = into[f];
    for (const [k, n] of from[f]) m.set(k, (m.get(k) ?? 0) + n);
  }
  return into;
}

const emptyFamily = (): Family => [[], [], []];

export function familyOf(
  runs: Map<string, number> | Record<string, number> | undefined,
  citations: Map<string, number> | Record<string, number> | undefined,
): Family {
  if (!citations) return emptyFamily();
  const isMap = citations instanceof Map;
  const keys = (isMap ? [...citations.keys()] : Object.keys(citations)).sort();
  const at = (m: Map<string, number> | Record<string, number> | undefined, k: string) =>
    m instanceof Map ? (m.get(k) ?? 0) : m && Object.prototype.hasOwnProperty.call(m, k) ? m[k]! : 0;
  return [keys, keys.map((k) => at(runs, k)), keys.map((k) => at(citations, k))];
}

export function compactOf(s: SourceTally | SourceCounts | CompactSources): CompactSources {
  if (isCompact(s)) return { domains: s.domains, pages: s.pages, sites: s.sites, rules: s.rules };
  const out = {} as CompactSources;
  for (const [name, runs, citations] of FAMILIES) out[name] = familyOf(s[runs], s[citations]);
  return out;
}

type EventFacts = Pick<AnswerCollected, 'cited' | 'tracked_mentions' | 'other_mentions' | 'won' | 'lost'>;

export function eventFacts(f: AnswerFacts, names: ReadonlyMap<string, string>): EventFacts {
  const cited = new Map<string, EventFacts['cited'][number]>();
  for (const c of f.citations) {
    const row = cited.get(c.page);
    if (row) row.count += 1;
    else
      cited.set(c.page, {
        page: c.page,
        domain: c.domain,
        tier: c.tier,
        ...(c.source_id !== null && { source_id: c.source_id }),
        count: 1,
      });
  }
  return {
    cited: [...cited.values()],
    tracked_mentions: Object.entries(f.tracked_mentions).map(([key, count]) => ({ key, name: names.get(key) ?? key, count })),
    other_mentions: f.other_mentions.map((o) => ({ ...o })),
    won: f.won,
    lost: f.lost,
  };
}
