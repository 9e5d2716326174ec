import { TIERS } from '../domain/sources.js';
import { addCompact, compactOf } from './source-rows.js';
import { DAY_TOTAL_FIELDS, TAG_ROW_PREFIX, type CountDoc, type CountRowKey, type SourceDoc } from './collections.js';

/**
 * Per-tag roll-up rows: the count and source rows of a tag hold, for every
 * day, month, model and location, the sum of the rows of the prompts that
 * carry the tag now (not deleted). A report filtered by a tag then reads one
 * row per period instead of one per tagged prompt and period. The fold adds
 * an answer to its prompt's tags' rows; when a prompt's tags change, its own
 * rows are added to or taken from the rows of the tags it gained or lost
 * (retagRows in answers.ts). Since the rows depend only on the current tags,
 * a replay (which folds with the current tags) gives the same rows.
 */

/** The prompt_id of a tag's rows: never a prompt id (those are uuids) nor ALL. */
export const tagRowPrompt = (tagId: string): string => `${TAG_ROW_PREFIX}${tagId}`;

/** The tags whose rows hold a prompt's counts: none once it is deleted. */
export const memberTags = (prompt: { tags: readonly string[]; deleted: boolean } | undefined): string[] =>
  prompt && !prompt.deleted ? [...new Set(prompt.tags)] : [];

/** Tags gained and lost between two versions of a prompt. */
export function tagChanges(before: readonly string[], after: readonly string[]): { added: string[]; removed: string[] } {
  return { added: after.filter((t) => !before.includes(t)), removed: before.filter((t) => !after.includes(t)) };
}

/** into[k] += sign * n, the entry removed when it reaches 0 (a fold never stores a zero entry). */
function addEntry(into: Record<string, number>, k: string, n: number, sign: number): void {
  const next = (Object.prototype.hasOwnProperty.call(into, k) ? into[k]! : 0) + sign * n;
  if (next === 0) delete into[k];
  else if (k === '__proto__') Object.defineProperty(into, k, { value: next, enumerable: true, writable: true, configurable: true });
  else into[k] = next;
}

/** Per-day figures added (sign 1) or taken; a day whose answer count (figure 0) reaches 0 had no answer and is dropped. */
function addDays(into: Record<string, number[]>, from: Record<string, number[]>, sign: number): void {
  for (const day of Object.keys(from)) {
    const figures = from[day]!;
    const cur = Object.prototype.hasOwnProperty.call(into, day) ? into[day]! : figures.map(() => 0);
    const next = figures.map((n, i) => (cur[i] ?? 0) + sign * n);
    if (next[0] === 0) delete into[day];
    else into[day] = next;
  }
}

const clone = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;

/**
 * A tag's count row with a prompt's row added (sign 1) or taken (sign -1);
 * undefined when no answer is left (a fold would not have written the row).
 * Per-day maps stay only while both sides keep them (rows folded before they
 * existed lack them, and reports then read the day rows instead).
 */
export function addCountRow(target: CountDoc | undefined, id: string, key: CountRowKey, row: CountDoc, sign: 1 | -1): CountDoc | undefined {
  const out: CountDoc = target
    ? clone(target)
    : {
        id,
        ...key,
        answer_count: 0,
        cited_run_count: 0,
        cited_total: 0,
        mentioned_run_count: 0,
        tier_runs: { primary: 0, tracked: 0, secondary: 0 },
        tier_citations: { primary: 0, tracked: 0, secondary: 0 },
        mention_total: 0,
        brand_mention_total: 0,
        tracked_mention_total: 0,
        brand_mentions: {},
        won_count: 0,
        lost_count: 0,
        ...(row.series && { series: {} }),
        ...(row.day_totals && { day_totals: {} }),
      };
  for (const f of DAY_TOTAL_FIELDS) out[f] += sign * row[f];
  for (const t of TIERS) {
    out.tier_runs[t] += sign * row.tier_runs[t];
    out.tier_citations[t] += sign * row.tier_citations[t];
  }
  for (const k of Object.keys(row.brand_mentions)) addEntry(out.brand_mentions, k, row.brand_mentions[k]!, sign);
  for (const f of ['series', 'day_totals'] as const) {
    const from = row[f];
    if (!from) delete out[f];
    else if (out[f]) addDays(out[f], from, sign);
  }
  return out.answer_count === 0 ? undefined : out;
}

/** A tag's source row (compact) with a prompt's source row (either form) added or taken; undefined when no citation is left. */
export function addSourceRow(
  target: SourceDoc | undefined,
  id: string,
  key: CountRowKey,
  row: SourceDoc,
  sign: 1 | -1,
): SourceDoc | undefined {
  const empty = { domains: [[], [], []], pages: [[], [], []], sites: [[], [], []], rules: [[], [], []] } satisfies ReturnType<
    typeof compactOf
  >;
  const sum = addCompact(target ? compactOf(target) : empty, compactOf(row), sign);
  return sum.domains[0].length === 0 ? undefined : { id, ...key, ...sum };
}
