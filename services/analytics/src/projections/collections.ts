import { createHash } from 'node:crypto';
import type { Counts, SourceCounts } from '../domain/counts.js';
import type { MatchType, TierName } from '../domain/sources.js';
import type { CompactSources } from './source-rows.js';
import type { StoredOutcomes } from './outcome-rows.js';
import type { PackedCell } from './prompt-cells.js';

/** Read-model collections of the analytics service and their documents. */
export const TRACKED_SOURCES = 'tracked_sources';
export const COMPETITORS = 'competitors';
export const COMPETITOR_NAMES = 'competitor_names';
export const BRAND_SETTINGS = 'brand_settings';
export const RUN_CONFIGURATIONS = 'run_configurations';
export const DAILY_COUNTS = 'daily_counts';
export const DAILY_SOURCES = 'daily_sources';
/** Per (organization, day or month, prompt): the prompt's own count rows as cells (prompt-cells.ts). */
export const PROMPT_COUNTS = 'prompt_counts';
/** Per (organization, day or month, model, location): answers, won and lost of every prompt, in one row (outcome-rows.ts). */
export const PROMPT_OUTCOMES = 'prompt_outcomes';
export const LATEST_ANSWERS = 'latest_answers';
/** Per organization: the months, models and locations its count rows span, and whether its tag rows are complete. */
export const COUNT_EXTENTS = 'count_extents';
/**
 * The full text, cited URLs (as spelled, in order) and producer brands of an
 * answer, keyed by answer id, kept only while the answer is the latest of its
 * prompt, model and location (rule 6). Written with the answer.collected event
 * (which carries only counted facts), deleted when a newer answer supersedes it.
 * Not a projection's collection: a rebuild keeps it and reads it back.
 */
export const ANSWER_BODIES = 'answer_bodies';
export const BRAND_TALLIES = 'brand_tallies';
export const PROMPT_RUNS = 'prompt_runs';
/** Fed by other services' events (consumers), not rebuilt from this store. */
export const PROMPTS = 'prompts';
export const ORGANIZATIONS = 'organizations';

/** '*' in a count row's dimension means "every value" (a roll-up). */
export const ALL = '*';
/** The prompt_id of a tag's rows starts with this (tag-rows.ts). */
export const TAG_ROW_PREFIX = 'tag:';

export interface SourceRuleDoc {
  id: string;
  source_id: string;
  org_id: string;
  match_type: MatchType;
  pattern: string;
  tier: TierName;
  label?: string;
  source_origin: 'manual' | 'import' | 'published';
  created_at: string;
  updated_at: string;
  seq: number;
}

export interface CompetitorDoc {
  id: string;
  competitor_id: string;
  org_id: string;
  name: string;
  aliases: string[];
  website?: string;
  created_at: string;
  updated_at: string;
  seq: number;
}

export interface BrandSettingsDoc {
  id: string;
  org_id: string;
  brand_name: string;
  aliases: string[];
  websites: string[];
  updated_at: string;
}

export interface RunConfigurationDoc {
  id: string;
  org_id: string;
  enabled: boolean;
  models: string[];
  locations: string[];
  cadence: 'hourly' | 'daily' | 'weekly';
  prompt_ids: string[];
  tag_ids: string[];
  updated_at: string;
}

export interface CountRowKey {
  org_id: string;
  day: string;
  prompt_id: string;
  model: string;
  location: string;
}

/**
 * The time series' figures of one day, in this order. Month rows (and only they)
 * keep them per day in `series`, so a daily series over a year reads 12 rows per
 * prompt of a tag instead of 365; the totals still come from the full counts.
 */
export const SERIES_FIELDS = [
  'answer_count',
  'cited_run_count',
  'cited_total',
  'mention_total',
  'brand_mention_total',
  'tracked_mention_total',
  'won_count',
  'lost_count',
  'owned_run_count',
] as const;

/** A day's figures as SERIES_FIELDS (owned_run_count is tier_runs.primary). */
export const seriesFigures = (c: Counts): number[] => SERIES_FIELDS.map((f) => (f === 'owned_run_count' ? c.tier_runs.primary : c[f]));

/** Counts carrying only a day's series figures (what the time series reads of a day). */
export function countsFromFigures(figures: readonly number[], into: Counts): Counts {
  SERIES_FIELDS.forEach((f, i) => {
    const n = figures[i] ?? 0;
    if (f === 'owned_run_count') into.tier_runs.primary += n;
    else into[f] += n;
  });
  return into;
}

/** Every scalar count of Counts, in this order (brand_mentions, a map, is not one). */
export const DAY_TOTAL_FIELDS = [
  'answer_count',
  'cited_run_count',
  'cited_total',
  'mentioned_run_count',
  'mention_total',
  'brand_mention_total',
  'tracked_mention_total',
  'won_count',
  'lost_count',
] as const;

/** A day's scalar counts as day_totals keeps them: DAY_TOTAL_FIELDS, then tier_runs and tier_citations per tier. */
export const dayTotalFigures = (c: Counts): number[] => [
  ...DAY_TOTAL_FIELDS.map((f) => c[f]),
  c.tier_runs.primary,
  c.tier_runs.tracked,
  c.tier_runs.secondary,
  c.tier_citations.primary,
  c.tier_citations.tracked,
  c.tier_citations.secondary,
];

/** Adds a day_totals entry to counts (every scalar count; brand_mentions stays as it is). */
export function countsFromDayTotals(figures: readonly number[], into: Counts): Counts {
  DAY_TOTAL_FIELDS.forEach((f, i) => (into[f] += figures[i] ?? 0));
  const k = DAY_TOTAL_FIELDS.length;
  into.tier_runs.primary += figures[k] ?? 0;
  into.tier_runs.tracked += figures[k + 1] ?? 0;
  into.tier_runs.secondary += figures[k + 2] ?? 0;
  into.tier_citations.primary += figures[k + 3] ?? 0;
  into.tier_citations.tracked += figures[k + 4] ?? 0;
  into.tier_citations.secondary += figures[k + 5] ?? 0;
  return into;
}

/**
 * Whether a month row keeps per-day maps (series, day_totals): only the
 * roll-ups over every prompt and the tag rows, which unfiltered and tag
 * reports read. A prompt's own month rows would be rewritten with a growing
 * map by every answer (each answer is the only one of its prompt, model and
 * location that day), which made the fold slow down through each month; a
 * report filtered on a prompt reads that prompt's day rows for the days instead.
 */
export const keepsDays = (key: Pick<CountRowKey, 'prompt_id'>): boolean =>
  key.prompt_id === ALL || key.prompt_id.startsWith(TAG_ROW_PREFIX);

/**
 * Whether a source row has a month twin: every row but a prompt's own rows
 * split by model or location, which an answer would rewrite alone every day
 * with the month's growing set of pages (a prompt's (prompt, *, *) rows are
 * shared by its models and locations' answers of the day). A source report
 * filtered on a prompt and a model or location sums those day rows instead.
 */
export const keepsMonthSources = (key: Pick<CountRowKey, 'prompt_id' | 'model' | 'location'>): boolean =>
  key.prompt_id === ALL || key.prompt_id.startsWith(TAG_ROW_PREFIX) || (key.model === ALL && key.location === ALL);

export type CountDoc = CountRowKey &
  Counts & {
    id: string;
    /** Month rows only: SERIES_FIELDS figures per day of the month (YYYY-MM-DD). Absent on rows folded before it existed. */
    series?: Record<string, number[]>;
    /**
     * Month rows created since it exists (so complete for every day of the
     * month): every scalar count per day (dayTotalFigures). A window's edge days
     * are read from it, one row per month instead of one per day; rows without it
     * fall back to their day rows.
     */
    day_totals?: Record<string, number[]>;
  };
/** A prompt's own count rows of one period, keyed by cellName (JSON [model, location]), without their id and key. */
export interface PromptCountsDoc {
  id: string;
  org_id: string;
  day: string;
  prompt_id: string;
  /** Packed (prompt-cells.ts); cells stored before are Counts objects. */
  cells: Record<string, PackedCell | Counts>;
}
/** A source row: compact (see source-rows.ts), or as SourceCounts maps when folded before that form. */
export type SourceDoc = CountRowKey & { id: string } & (SourceCounts | CompactSources);
/** Answers, won and lost per prompt id: as columns (see outcome-rows.ts), or as a map when folded before that form. */
export type PromptOutcomeDoc = CountRowKey & { id: string } & StoredOutcomes;

export interface CountExtentDoc {
  id: string;
  org_id: string;
  months: string[];
  models: string[];
  locations: string[];
  /**
   * The tag rows hold every answer: false when the organization had answers
   * folded before tag rows existed (reports then sum the tagged prompts' rows
   * until `rebuild-read-models analytics`).
   */
  tag_rows: boolean;
  /**
   * The organization's own prompt rows are cells of PROMPT_COUNTS documents
   * (prompt-cells.ts); absent on extents created before cells existed, whose
   * prompt rows stay in DAILY_COUNTS until `rebuild-read-models analytics`.
   */
  prompt_cells?: boolean;
  /**
   * The source and outcome month rows over every prompt and per tag leave out
   * the open day (open-day.ts); absent on extents created before, whose month
   * rows stay whole until `rebuild-read-models analytics`.
   */
  open_days?: boolean;
  /** The open day and the tag rows (their prompt_id) it has source rows for. */
  open?: { day: string; prompts: string[] };
}

/** The month a day belongs to: rows keyed by month hold the sum of the month's days. */
export const monthOf = (day: string): string => day.slice(0, 7);

export interface LatestAnswerDoc {
  id: string;
  answer_id: string;
  org_id: string;
  prompt_id: string;
  model: string;
  location: string;
  run_at: string;
  text: string;
  citations: { url: string; normalized_url: string; domain: string; tier: TierName }[];
  mentions: { brand_id: string | null; name: string; is_organization: boolean; count: number }[];
  other_brand_mention_count: number;
  won: boolean;
  lost: boolean;
  origin: 'scheduled' | 'import';
}

export interface AnswerBodyDoc {
  id: string;
  org_id: string;
  text: string;
  citations: string[];
  brands?: string[];
}

export interface BrandTallyDoc {
  id: string;
  org_id: string;
  name: string;
  key: string;
  mentions: number;
  answer_count: number;
}

export interface PromptDoc {
  id: string;
  org_id: string;
  name: string;
  text: string;
  tags: string[];
  deleted: boolean;
}

export interface OrganizationDoc {
  id: string;
  name: string;
  /** The organization's master switch for runs (absent until the gateway reports it). */
  runs_enabled?: boolean;
  /** The organization's websites (gateway profile): owned, read-only source rules. */
  websites?: string[];
  /** When the websites last changed. */
  websites_at?: string;
}

export interface PromptRunDoc {
  id: string;
  run_id: string;
  org_id: string;
  slot: string;
  status: 'running' | 'completed' | 'failed';
  /** Why the whole run failed (e.g. no answer engine configured). */
  error: string | null;
  planned: number;
  collected: number;
  failed: number;
  engines: Record<string, { collected: number; failed: number; last_error: string | null }>;
  started_at: string;
  finished_at: string | null;
}

/** Whether JSON.stringify escapes anything in the string: quotes, backslashes, control characters, surrogates. */
function needsEscape(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return true;
  }
  return false;
}

/**
 * JSON text of an array of strings, as JSON.stringify writes it: joined by
 * hand when no string needs escaping (ids, days, model and location names),
 * which the fold does for every row of a batch.
 */
export function jsonStrings(parts: readonly string[]): string {
  if (parts.length === 0) return '[]';
  for (const p of parts) if (needsEscape(p)) return JSON.stringify(parts);
  return `["${parts.join('","')}"]`;
}

export const countRowId = (k: CountRowKey): string => jsonStrings([k.org_id, k.day, k.prompt_id, k.model, k.location]);

/** A stable uuid derived from text (rules made from the organization's websites). */
export function derivedUuid(text: string): string {
  const h = createHash('sha1').update(text).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
