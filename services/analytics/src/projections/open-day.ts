import type { StoreTransaction } from '@kb/store';
import { mergeOutcomeDoc, mergeSourceDoc, type OutcomeDelta, type SourceDelta } from './count-rows.js';
import { addOutcomeColumns, columnsOf } from './outcome-rows.js';
import { addSourceRow } from './tag-rows.js';
import {
  ALL,
  DAILY_SOURCES,
  PROMPT_OUTCOMES,
  countRowId,
  keepsDays,
  monthOf,
  type CountExtentDoc,
  type CountRowKey,
  type PromptOutcomeDoc,
  type SourceDoc,
} from './collections.js';

/**
 * The open day. The source and outcome rows over every prompt and per tag are
 * the largest rows the fold writes (every page cited, every prompt's outcome),
 * and their month rows grow all month: rewritten by every batch, they were a
 * fifth of an import's time. So those month rows leave out one day, the
 * organization's open day (the latest day folded, kept in its extent), whose
 * answers go only to that day's rows; when a batch brings a later day, the
 * open day's rows are added to their month rows once (sealed) and the later
 * day opens. A daily import then rewrites each such month row once a day
 * instead of once per batch. A batch's earlier days (a backfill) go to their
 * month rows at once. Reports add the open day's row to its month's row, and
 * retagging seals first (its arithmetic needs whole month rows).
 *
 * Organizations whose extent predates this (`open_days` absent) keep whole
 * month rows until `rebuild-read-models analytics`.
 */

/** The rows this applies to: day rows of the roll-ups over every prompt and of tags (keepsDays). */
export const sealsDay = (key: CountRowKey): boolean => key.day.length === 10 && keepsDays(key);

/** The roll-up month rows that leave out the open day (skipped by the per-batch write). */
export const leavesOutOpenDay = (key: CountRowKey, extent: CountExtentDoc | undefined): boolean =>
  extent?.open_days === true && key.day.length === 7 && keepsDays(key);

/**
 * The periods a report reads roll-up source or outcome rows for: `periods`
 * plus the open day when its whole month is one of them.
 */
export function withOpenDay(periods: string[], extent: CountExtentDoc | undefined): string[] {
  const day = extent?.open_days ? extent.open?.day : undefined;
  return day !== undefined && periods.includes(monthOf(day)) ? [...periods, day] : periods;
}

type Tx = Pick<StoreTransaction, 'get' | 'put'>;

/** Month rows read once, changed in memory and written once (`write`). */
function monthRows(tx: Tx) {
  const sources = new Map<string, SourceDoc | undefined>();
  const outcomes = new Map<string, PromptOutcomeDoc | undefined>();
  const read = async <T>(cache: Map<string, T | undefined>, collection: string, id: string) => {
    if (!cache.has(id)) cache.set(id, await tx.get<T & { id: string }>(collection, id));
    return cache.get(id);
  };
  const monthKey = (key: CountRowKey) => ({ ...key, day: monthOf(key.day) });
  return {
    /** A day's source delta added to its month row. */
    async addSourceDelta(d: SourceDelta) {
      const key = monthKey(d.key);
      const id = countRowId(key);
      sources.set(id, mergeSourceDoc(id, await read(sources, DAILY_SOURCES, id), { key, sources: d.sources }));
    },
    async addOutcomeDelta(d: OutcomeDelta) {
      const key = monthKey(d.key);
      const id = countRowId(key);
      outcomes.set(id, mergeOutcomeDoc(id, await read(outcomes, PROMPT_OUTCOMES, id), { key, prompts: d.prompts }));
    },
    /** A stored day row added to its month row. */
    async addSourceRow(day: SourceDoc, dayKey: CountRowKey) {
      const key = monthKey(dayKey);
      const id = countRowId(key);
      sources.set(id, addSourceRow(await read(sources, DAILY_SOURCES, id), id, key, day, 1));
    },
    async addOutcomeRow(day: PromptOutcomeDoc, dayKey: CountRowKey) {
      const key = monthKey(dayKey);
      const id = countRowId(key);
      const stored = await read(outcomes, PROMPT_OUTCOMES, id);
      outcomes.set(id, {
        ...(stored ?? { id, ...key }),
        outcomes: stored ? addOutcomeColumns(columnsOf(stored), columnsOf(day)) : columnsOf(day),
      } as PromptOutcomeDoc);
    },
    async write() {
      for (const doc of sources.values()) if (doc) await tx.put(DAILY_SOURCES, doc);
      for (const doc of outcomes.values()) if (doc) await tx.put(PROMPT_OUTCOMES, doc);
    },
  };
}

type Months = ReturnType<typeof monthRows>;

/** Adds every stored roll-up row of the open day to its month row. */
async function addOpenDay(tx: Tx, months: Months, extent: CountExtentDoc, day: string, prompts: readonly string[]): Promise<void> {
  for (const prompt_id of [ALL, ...prompts])
    for (const model of [ALL, ...extent.models])
      for (const location of [ALL, ...extent.locations]) {
        const key = { org_id: extent.org_id, day, prompt_id, model, location };
        const id = countRowId(key);
        const sources = await tx.get<SourceDoc>(DAILY_SOURCES, id);
        if (sources) await months.addSourceRow(sources, key);
        if (prompt_id !== ALL) continue;
        const outcomes = await tx.get<PromptOutcomeDoc>(PROMPT_OUTCOMES, id);
        if (outcomes) await months.addOutcomeRow(outcomes, key);
      }
}

/**
 * After a batch's day rows are written: adds to the roll-up month rows what
 * they now miss (the batch's days other than the open one; the previous open
 * day when a later day opens) and returns the extent with its new open day,
 * or the same object when nothing about it changed. `extent.models` and
 * `locations` must already include the batch's.
 */
export async function foldOpenDay(
  tx: Tx,
  extent: CountExtentDoc,
  sources: Iterable<SourceDelta>,
  outcomes: Iterable<OutcomeDelta>,
): Promise<CountExtentDoc> {
  const mine = (key: CountRowKey) => key.org_id === extent.org_id && sealsDay(key);
  const daySources = [...sources].filter((d) => mine(d.key));
  const dayOutcomes = [...outcomes].filter((d) => mine(d.key));
  if (daySources.length === 0 && dayOutcomes.length === 0) return extent;
  const before = extent.open;
  let open = before?.day;
  for (const d of [...daySources, ...dayOutcomes]) if (open === undefined || d.key.day > open) open = d.key.day;
  const months = monthRows(tx);
  for (const d of daySources) if (d.key.day !== open && d.key.day !== before?.day) await months.addSourceDelta(d);
  for (const d of dayOutcomes) if (d.key.day !== open && d.key.day !== before?.day) await months.addOutcomeDelta(d);
  const tagsOn = (day: string) => daySources.filter((d) => d.key.day === day && d.key.prompt_id !== ALL).map((d) => d.key.prompt_id);
  if (before && before.day !== open)
    await addOpenDay(tx, months, extent, before.day, [...new Set([...before.prompts, ...tagsOn(before.day)])]);
  await months.write();
  const same = before !== undefined && before.day === open;
  const prompts = [...new Set([...(same ? before.prompts : []), ...tagsOn(open!)])].sort();
  if (same && prompts.length === before.prompts.length) return extent;
  return { ...extent, open: { day: open!, prompts } };
}

/** Adds the open day to the month rows and closes it (before retagging, which needs whole month rows). */
export async function sealOpenDay(tx: Tx, extent: CountExtentDoc): Promise<CountExtentDoc> {
  if (!extent.open_days || !extent.open) return extent;
  const months = monthRows(tx);
  await addOpenDay(tx, months, extent, extent.open.day, extent.open.prompts);
  await months.write();
  const { open: _open, ...closed } = extent;
  return closed;
}
