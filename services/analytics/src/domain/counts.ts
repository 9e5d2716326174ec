import type { AnswerFacts } from './facts.js';
import { TIERS, type TierName } from './sources.js';

/**
 * Daily additive counts (rule 6): one row per (organization, day, prompt,
 * model, location). Every field is a sum over answers, so a report for any
 * window and filter is the sum of the matching rows and every ratio can be
 * recomputed from those sums.
 */
export interface Counts {
  answer_count: number;
  /** D: answers with at least one citation of any tier. */
  cited_run_count: number;
  /** S: citation instances. */
  cited_total: number;
  /** Answers that name the organization at least once. */
  mentioned_run_count: number;
  /** Distinct answers citing at least one URL of the tier. */
  tier_runs: Record<TierName, number>;
  /** Citation instances per tier (they partition cited_total). */
  tier_citations: Record<TierName, number>;
  /** Mention instances of the organization. */
  mention_total: number;
  /** Mention instances of every brand named, tracked or not. */
  brand_mention_total: number;
  /** Mention instances of the organization plus tracked competitors. */
  tracked_mention_total: number;
  /** Mention instances per tracked brand: 'org' and competitor ids. */
  brand_mentions: Record<string, number>;
  won_count: number;
  lost_count: number;
}

/** Per-source counts, kept apart from Counts so the tier and brand reports stay small to read. */
export interface SourceCounts {
  domain_runs: Record<string, number>;
  domain_citations: Record<string, number>;
  page_runs: Record<string, number>;
  page_citations: Record<string, number>;
  /** Per registrable domain (hosts rolled up by the public suffix list). Absent on rows folded before it existed. */
  site_runs?: Record<string, number>;
  site_citations?: Record<string, number>;
  /** Per tracked-source rule that won the citation (source id; NO_RULE when none matched). Absent on rows folded before it existed. */
  rule_runs?: Record<string, number>;
  rule_citations?: Record<string, number>;
}

/** The rule key of citations no tracked-source rule matched (they are secondary). */
export const NO_RULE = 'none';

const perTier = (): Record<TierName, number> => ({ primary: 0, tracked: 0, secondary: 0 });

/**
 * A map keyed by data (domains, pages, brands): a prototype-less object, which
 * V8 keeps in dictionary mode. Plain objects that gain many different keys get
 * a hidden class per key set, and adding to them was the fold's largest cost.
 */
export const dict = <V = number>(from?: Record<string, V>): Record<string, V> =>
  from ? Object.assign(Object.create(null) as Record<string, V>, from) : (Object.create(null) as Record<string, V>);

export const emptyCounts = (): Counts => ({
  answer_count: 0,
  cited_run_count: 0,
  cited_total: 0,
  mentioned_run_count: 0,
  tier_runs: perTier(),
  tier_citations: perTier(),
  mention_total: 0,
  brand_mention_total: 0,
  tracked_mention_total: 0,
  brand_mentions: dict(),
  won_count: 0,
  lost_count: 0,
});

export const emptySourceCounts = (): Required<SourceCounts> => ({
  domain_runs: dict(),
  domain_citations: dict(),
  page_runs: dict(),
  page_citations: dict(),
  site_runs: dict(),
  site_citations: dict(),
  rule_runs: dict(),
  rule_citations: dict(),
});

const bump = (map: Record<string, number>, key: string, by = 1) => {
  map[key] = (map[key] ?? 0) + by;
};

/** Adds one answer to a row (mutates and returns it). */
export function addFacts<C extends Counts>(c: C, f: AnswerFacts): C {
  c.answer_count += 1;
  if (f.citations.length > 0) c.cited_run_count += 1;
  c.cited_total += f.citations.length;
  // Which tiers the answer cites, as flags: a Set per answer was a visible share of the fold's garbage.
  let primary = false;
  let tracked = false;
  let secondary = false;
  let unknown: Set<TierName> | undefined; // none in a valid event; counted as they always were
  for (const cit of f.citations) {
    c.tier_citations[cit.tier] += 1;
    if (cit.tier === 'primary') primary = true;
    else if (cit.tier === 'tracked') tracked = true;
    else if (cit.tier === 'secondary') secondary = true;
    else (unknown ??= new Set()).add(cit.tier);
  }
  if (primary) c.tier_runs.primary += 1;
  if (tracked) c.tier_runs.tracked += 1;
  if (secondary) c.tier_runs.secondary += 1;
  if (unknown) for (const t of unknown) c.tier_runs[t] += 1;
  const orgMentions = f.tracked_mentions.org ?? 0;
  if (orgMentions > 0) c.mentioned_run_count += 1;
  c.mention_total += orgMentions;
  let trackedMentions = 0;
  for (const key of Object.keys(f.tracked_mentions)) {
    const n = f.tracked_mentions[key]!;
    trackedMentions += n;
    bump(c.brand_mentions, key, n);
  }
  c.tracked_mention_total += trackedMentions;
  let others = 0;
  for (const o of f.other_mentions) others += o.count;
  c.brand_mention_total += trackedMentions + others;
  if (f.won) c.won_count += 1;
  if (f.lost) c.lost_count += 1;
  return c;
}

export function addSourceFacts<S extends SourceCounts>(s: S, f: AnswerFacts): S {
  const domains = new Set<string>();
  const pages = new Set<string>();
  const sites = new Set<string>();
  const rules = new Set<string>();
  const siteCitations = (s.site_citations ??= dict());
  const ruleCitations = (s.rule_citations ??= dict());
  for (const cit of f.citations) {
    const rule = cit.source_id ?? NO_RULE;
    bump(s.domain_citations, cit.domain);
    bump(s.page_citations, cit.page);
    bump(siteCitations, cit.site);
    bump(ruleCitations, rule);
    domains.add(cit.domain);
    pages.add(cit.page);
    sites.add(cit.site);
    rules.add(rule);
  }
  for (const d of domains) bump(s.domain_runs, d);
  for (const p of pages) bump(s.page_runs, p);
  const siteRuns = (s.site_runs ??= dict());
  for (const x of sites) bump(siteRuns, x);
  const ruleRuns = (s.rule_runs ??= dict());
  for (const r of rules) bump(ruleRuns, r);
  return s;
}

/** The eight maps of SourceCounts. */
export const SOURCE_MAPS = [
  'domain_runs',
  'domain_citations',
  'page_runs',
  'page_citations',
  'site_runs',
  'site_citations',
  'rule_runs',
  'rule_citations',
] as const;

/**
 * SourceCounts as Maps, for summing in memory: adding to and iterating a
 * small Map is much cheaper than a dictionary-mode object, whose for-in
 * collects and sorts its keys on every pass.
 */
export type SourceMap = (typeof SOURCE_MAPS)[number];
export type SourceTally = Record<SourceMap, Map<string, number>>;

export const emptySourceTally = (): SourceTally => ({
  domain_runs: new Map(),
  domain_citations: new Map(),
  page_runs: new Map(),
  page_citations: new Map(),
  site_runs: new Map(),
  site_citations: new Map(),
  rule_runs: new Map(),
  rule_citations: new Map(),
});

const bumpTally = (map: Map<string, number>, key: string, by = 1) => map.set(key, (map.get(key) ?? 0) + by);

/** Answers with more citations than this take Sets to find each key's first citation; fewer compare with the earlier ones. */
const FEW_CITATIONS = 8;

/** addSourceFacts into a SourceTally (mutates and returns it). */
export function tallySourceFacts(t: SourceTally, f: AnswerFacts): SourceTally {
  const cits = f.citations;
  if (cits.length > FEW_CITATIONS) return tallyManySourceFacts(t, f);
  for (const cit of cits) {
    bumpTally(t.domain_citations, cit.domain);
    bumpTally(t.page_citations, cit.page);
    bumpTally(t.site_citations, cit.site);
    bumpTally(t.rule_citations, cit.source_id ?? NO_RULE);
  }
  // Runs: each distinct key once, in order of its first citation (as the Sets below give them).
  for (let i = 0; i < cits.length; i++) {
    const cit = cits[i]!;
    let domain = true;
    let page = true;
    let site = true;
    let rule = true;
    for (let j = 0; j < i; j++) {
      const e = cits[j]!;
      if (e.domain === cit.domain) domain = false;
      if (e.page === cit.page) page = false;
      if (e.site === cit.site) site = false;
      if ((e.source_id ?? NO_RULE) === (cit.source_id ?? NO_RULE)) rule = false;
    }
    if (domain) bumpTally(t.domain_runs, cit.domain);
    if (page) bumpTally(t.page_runs, cit.page);
    if (site) bumpTally(t.site_runs, cit.site);
    if (rule) bumpTally(t.rule_runs, cit.source_id ?? NO_RULE);
  }
  return t;
}

function tallyManySourceFacts(t: SourceTally, f: AnswerFacts): SourceTally {
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

/** into += from (mutates and returns into). */
export function mergeSourceTally(into: SourceTally, from: SourceTally): SourceTally {
  for (const f of SOURCE_MAPS) {
    const m = into[f];
    for (const [k, n] of from[f]) m.set(k, (m.get(k) ?? 0) + n);
  }
  return into;
}

/** Adds a tally to stored source counts (mutates and returns them; maps it lacks are created as dictionaries). */
export function addSourceTally<S extends SourceCounts>(s: S, t: SourceTally): S {
  for (const f of SOURCE_MAPS) {
    const m = (s[f] ??= dict());
    for (const [k, n] of t[f]) m[k] = (m[k] ?? 0) + n;
  }
  return s;
}

const addMap = (into: Record<string, number>, from: Record<string, number>) => {
  for (const k in from) into[k] = (into[k] ?? 0) + from[k]!;
};

/** into += from (mutates and returns into). */
export function mergeCounts(into: Counts, from: Counts): Counts {
  into.answer_count += from.answer_count;
  into.cited_run_count += from.cited_run_count;
  into.cited_total += from.cited_total;
  into.mentioned_run_count += from.mentioned_run_count;
  for (const t of TIERS) {
    into.tier_runs[t] += from.tier_runs[t];
    into.tier_citations[t] += from.tier_citations[t];
  }
  into.mention_total += from.mention_total;
  into.brand_mention_total += from.brand_mention_total;
  into.tracked_mention_total += from.tracked_mention_total;
  addMap(into.brand_mentions, from.brand_mentions);
  into.won_count += from.won_count;
  into.lost_count += from.lost_count;
  return into;
}

/**
 * into += from (mutates and returns into), over the maps listed (default all):
 * a report that reads two of the eight maps sums only those.
 */
export function mergeSourceCounts(
  into: Required<SourceCounts>,
  from: SourceCounts,
  maps: readonly SourceMap[] = SOURCE_MAPS,
): Required<SourceCounts> {
  for (const f of maps) {
    const m = from[f];
    if (m) addMap(into[f], m);
  }
  return into;
}

/** Copies only the count fields out of a stored document. */
export function countsOf(doc: Counts): Counts {
  return mergeCounts(emptyCounts(), doc);
}
