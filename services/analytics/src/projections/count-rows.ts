import {
  addFacts,
  SOURCE_MAPS,
  dict,
  emptyCounts,
  emptySourceTally,
  mergeCounts,
  mergeSourceTally,
  tallySourceFacts,
  type Counts,
  type SourceTally,
} from '../domain/counts.js';
import type { AnswerFacts } from '../domain/facts.js';
import {
  ALL,
  countRowId,
  dayTotalFigures,
  keepsDays,
  keepsMonthSources,
  monthOf,
  seriesFigures,
  type CountDoc,
  type CountRowKey,
  type PromptOutcomeDoc,
  type SourceDoc,
} from './collections.js';
import { tagRowPrompt } from './tag-rows.js';
import { FAMILIES, addFamily, compactOf, isCompact, type CompactSources } from './source-rows.js';
import { addOutcomeColumns, columnsOf, outcomeColumnsOf } from './outcome-rows.js';

/**
 * What a batch of answers adds to the count rows, summed in memory (pure: no
 * store). Each answer is added to its one leaf (prompt, model, location, day);
 * the roll-ups, tag rows and month rows are then summed level by level from
 * the leaves (rowDeltas), sharing a part wherever a row has only one, so an
 * answer costs one sum however many rows it counts in. The stored rows are
 * read and written once per batch each (mergeCountDoc and friends), not once
 * per answer.
 */
export interface CountDelta {
  key: CountRowKey;
  month: boolean;
  counts: Counts;
  /** Month rows: SERIES_FIELDS figures per day added by the batch. */
  series: Record<string, number[]>;
  /** Month rows: dayTotalFigures per day added by the batch (kept only where the row keeps day_totals). */
  dayTotals: Record<string, number[]>;
}
export interface SourceDelta {
  key: CountRowKey;
  sources: SourceTally;
}
export interface OutcomeDelta {
  key: CountRowKey;
  prompts: Record<string, [number, number, number]>;
}

/** The months, models and locations an organization's rows span (what retagging a prompt reads). */
export interface Extent {
  months: Set<string>;
  models: Set<string>;
  locations: Set<string>;
}

/**
 * One (prompt, model, location, day) of the batch: the sum of its answers and
 * the tags of its prompt. Every other row of the batch is summed from these.
 */
export interface LeafDelta {
  key: CountRowKey;
  counts: Counts;
  /** Null while none of its answers cites. */
  sources: SourceTally | null;
  tags: readonly string[];
}

/** A batch: addToBatch fills its leaves; rowDeltas derives every row (roll-ups, tags, months) from them. */
export interface CountBatch {
  leaves: Map<string, LeafDelta>;
  /** Per organization. */
  extents: Map<string, Extent>;
}

/** Every row a batch adds to, by row id: day rows, roll-ups and tag rows, and the month twin of each. */
export interface RowDeltas {
  counts: Map<string, CountDelta>;
  sources: Map<string, SourceDelta>;
  outcomes: Map<string, OutcomeDelta>;
  extents: Map<string, Extent>;
}

export const emptyCountBatch = (): CountBatch => ({ leaves: new Map(), extents: new Map() });

/**
 * Which rows of a batch to derive and write: the count rows, and the source and
 * outcome rows (with the extents and the open day). They share no document, so
 * two threads can each take one (see handOverAnswers).
 */
export interface BatchParts {
  counts: boolean;
  sources: boolean;
}
export const ALL_PARTS: BatchParts = { counts: true, sources: true };

/**
 * The rows an answer adds to: its own (prompt, model, location), every roll-up
 * of them (eight in all), and the four (model and location roll-ups) of each
 * tag of its prompt (see tag-rows.ts).
 */
export function rowKeys(
  orgId: string,
  f: Pick<AnswerFacts, 'day' | 'prompt_id' | 'model' | 'location'>,
  tags: readonly string[] = [],
): CountRowKey[] {
  const keys: CountRowKey[] = [];
  for (const prompt_id of [f.prompt_id, ALL, ...tags.map(tagRowPrompt)])
    for (const model of [f.model, ALL])
      for (const location of [f.location, ALL]) keys.push({ org_id: orgId, day: f.day, prompt_id, model, location });
  return keys;
}

const addFigures = (into: Record<string, number[]>, day: string, figures: readonly number[]) => {
  const row = (into[day] ??= figures.map(() => 0));
  for (let i = 0; i < figures.length; i++) row[i] = (row[i] ?? 0) + figures[i]!;
};

const addOutcome = (prompts: Record<string, [number, number, number]>, prompt: string, [n, won, lost]: readonly number[]) => {
  const cur = (prompts[prompt] ??= [0, 0, 0]);
  cur[0] += n!;
  cur[1] += won!;
  cur[2] += lost!;
};

/** Adds one answer's facts to its leaf of the batch (mutates it): one sum per answer, whatever its rows. */
export function addToBatch(batch: CountBatch, orgId: string, facts: AnswerFacts, tags: readonly string[] = []): void {
  let extent = batch.extents.get(orgId);
  if (!extent) batch.extents.set(orgId, (extent = { months: new Set(), models: new Set(), locations: new Set() }));
  extent.months.add(monthOf(facts.day));
  extent.models.add(facts.model);
  extent.locations.add(facts.location);
  const key = { org_id: orgId, day: facts.day, prompt_id: facts.prompt_id, model: facts.model, location: facts.location };
  const id = countRowId(key);
  let leaf = batch.leaves.get(id);
  if (!leaf) batch.leaves.set(id, (leaf = { key, counts: emptyCounts(), sources: null, tags }));
  addFacts(leaf.counts, facts);
  if (facts.citations.length > 0) tallySourceFacts((leaf.sources ??= emptySourceTally()), facts);
}

/**
 * A row's delta summed from its parts. It shares its first part until a
 * second arrives (then copies it before adding), so a row with one part, such
 * as a prompt's roll-ups on a day it was asked once, costs no sum at all.
 * Parts are never changed once the batch is summed.
 */
interface Sum<T> {
  key: CountRowKey;
  value: T;
  owned: boolean;
}
function addPart<T>(rows: Map<string, Sum<T>>, key: CountRowKey, part: T, merge: (into: T, from: T) => T, empty: () => T): void {
  const id = countRowId(key);
  const row = rows.get(id);
  if (!row) rows.set(id, { key, value: part, owned: false });
  else {
    if (!row.owned) {
      row.value = merge(empty(), row.value);
      row.owned = true;
    }
    merge(row.value, part);
  }
}

/**
 * Sums at one level of the roll-up: each row of `from` is added to the row
 * `target` names for its key. Summing level by level ((prompt, model,
 * location) -> (prompt, *, location) -> (prompt, *, *)) adds each part once per
 * level instead of once per row it ends up in.
 */
function rollUp<T>(
  from: Iterable<Sum<T>>,
  target: (key: CountRowKey) => CountRowKey,
  merge: (into: T, from: T) => T,
  empty: () => T,
): Map<string, Sum<T>> {
  const out = new Map<string, Sum<T>>();
  for (const row of from) addPart(out, target(row.key), row.value, merge, empty);
  return out;
}

/**
 * Every row of the batch (of the parts asked for) from its leaves: the (prompt, model, location) rows
 * are the leaves; the roll-up over every prompt and each tag's rows sum them;
 * each of those is rolled up over models and locations (see rowKeys). The
 * outcome rows (per prompt, over every prompt) take each leaf's answer, won
 * and lost counts. Pure; equal to adding each answer to each of its rows.
 */
function dayRows(batch: CountBatch, parts: BatchParts) {
  const bases = <T>(value: (leaf: LeafDelta) => T | null, merge: (into: T, from: T) => T, empty: () => T) => {
    const rows = new Map<string, Sum<T>>();
    for (const [id, leaf] of batch.leaves) {
      const v = value(leaf);
      if (v === null) continue;
      rows.set(id, { key: leaf.key, value: v, owned: false });
      addPart(rows, { ...leaf.key, prompt_id: ALL }, v, merge, empty);
      for (const tag of leaf.tags) addPart(rows, { ...leaf.key, prompt_id: tagRowPrompt(tag) }, v, merge, empty);
    }
    return rows;
  };
  const levels = <T>(base: Map<string, Sum<T>>, merge: (into: T, from: T) => T, empty: () => T) => {
    // (P, m, l) -> (P, *, l) and (P, m, *); (P, *, l) -> (P, *, *).
    const byModel = rollUp(base.values(), (k) => ({ ...k, model: ALL }), merge, empty);
    const byLocation = rollUp(base.values(), (k) => ({ ...k, location: ALL }), merge, empty);
    const both = rollUp(byModel.values(), (k) => ({ ...k, location: ALL }), merge, empty);
    return [base, byModel, byLocation, both];
  };
  const counts = new Map<string, CountDelta>();
  const sources = new Map<string, SourceDelta>();
  const outcomes = new Map<string, OutcomeDelta>();
  if (parts.counts)
    for (const level of levels(
      bases((l) => l.counts, mergeCounts, emptyCounts),
      mergeCounts,
      emptyCounts,
    ))
      for (const [id, row] of level) counts.set(id, { key: row.key, month: false, counts: row.value, series: dict(), dayTotals: dict() });
  if (!parts.sources) return { counts, sources, outcomes };
  for (const level of levels(
    bases((l) => l.sources, mergeSourceTally, emptySourceTally),
    mergeSourceTally,
    emptySourceTally,
  ))
    for (const [id, row] of level) sources.set(id, { key: row.key, sources: row.value });
  for (const leaf of batch.leaves.values()) {
    const figures = [leaf.counts.answer_count, leaf.counts.won_count, leaf.counts.lost_count];
    for (const model of [leaf.key.model, ALL])
      for (const location of [leaf.key.location, ALL]) {
        const key = { ...leaf.key, prompt_id: ALL, model, location };
        const id = countRowId(key);
        let o = outcomes.get(id);
        if (!o) outcomes.set(id, (o = { key, prompts: dict() }));
        addOutcome(o.prompts, leaf.key.prompt_id, figures);
      }
  }
  return { counts, sources, outcomes };
}

/**
 * Every row the batch adds to (dayRows) with the month twin of each day row:
 * the sum of its days' deltas, with each day's series and day_totals figures
 * (see SERIES_FIELDS) where the row keeps them (keepsDays); source rows only
 * where they have a month twin (keepsMonthSources). A month with one day in the batch (the usual case)
 * shares that day's sums, read only from here on; a second day copies them
 * before adding.
 */
export function rowDeltas(batch: CountBatch, parts: BatchParts = ALL_PARTS): RowDeltas {
  const days = dayRows(batch, parts);
  const out: RowDeltas = { counts: new Map(), sources: new Map(), outcomes: new Map(), extents: batch.extents };
  const monthKey = (key: CountRowKey) => {
    const month = { ...key, day: monthOf(key.day) };
    return [countRowId(month), month] as const;
  };
  const shared = new Set<object>();
  const counts = new Map<string, CountDelta>();
  for (const [id, d] of days.counts) {
    out.counts.set(id, d);
    const [mid, key] = monthKey(d.key);
    let m = counts.get(mid);
    if (!m) {
      counts.set(mid, (m = { key, month: true, counts: d.counts, series: dict(), dayTotals: dict() }));
      shared.add(m);
    } else {
      if (shared.delete(m)) m.counts = mergeCounts(emptyCounts(), m.counts);
      mergeCounts(m.counts, d.counts);
    }
    if (keepsDays(key)) {
      addFigures(m.series, d.key.day, seriesFigures(d.counts));
      addFigures(m.dayTotals, d.key.day, dayTotalFigures(d.counts));
    }
  }
  const sources = new Map<string, SourceDelta>();
  for (const [id, d] of days.sources) {
    out.sources.set(id, d);
    if (!keepsMonthSources(d.key)) continue;
    const [mid, key] = monthKey(d.key);
    const m = sources.get(mid);
    if (!m) {
      const twin = { key, sources: d.sources };
      sources.set(mid, twin);
      shared.add(twin);
    } else {
      if (shared.delete(m)) m.sources = mergeSourceTally(emptySourceTally(), m.sources);
      mergeSourceTally(m.sources, d.sources);
    }
  }
  const outcomes = new Map<string, OutcomeDelta>();
  for (const [id, d] of days.outcomes) {
    out.outcomes.set(id, d);
    const [mid, key] = monthKey(d.key);
    let m = outcomes.get(mid);
    if (!m) outcomes.set(mid, (m = { key, prompts: dict() }));
    for (const p in d.prompts) addOutcome(m.prompts, p, d.prompts[p]!);
  }
  for (const [id, d] of counts) out.counts.set(id, d);
  for (const [id, d] of sources) out.sources.set(id, d);
  for (const [id, d] of outcomes) out.outcomes.set(id, d);
  return out;
}

/**
 * n added to a stored map (parsed JSON, so a plain object) in place: copying
 * it into a dictionary first cost as much as the rest of the merge. Keys are
 * hosts, pages, rule and brand ids; a key that names an Object.prototype
 * member is still kept as the map's own entry.
 */
function addTo(m: Record<string, number>, k: string, n: number): void {
  const cur = Object.prototype.hasOwnProperty.call(m, k) ? m[k]! : 0;
  if (k === '__proto__') Object.defineProperty(m, k, { value: cur + n, enumerable: true, writable: true, configurable: true });
  else m[k] = cur + n;
}

/**
 * The stored count row plus the batch's delta. A month row created now keeps
 * day_totals for every day of its month; a stored one without them never
 * starts them (its earlier days would be missing). A new row copies what it
 * takes from the delta, which a month twin may share with its day.
 */
export function mergeCountDoc(id: string, stored: CountDoc | undefined, d: CountDelta): CountDoc {
  if (!stored) {
    const doc: CountDoc = { id, ...d.key, ...mergeCounts(emptyCounts(), d.counts) };
    if (d.month && keepsDays(d.key)) {
      doc.day_totals = d.dayTotals;
      doc.series = d.series;
    }
    return doc;
  }
  mergeCounts(stored, d.counts);
  if (d.month && !keepsDays(d.key)) {
    // Stored before per-prompt month rows stopped keeping them: dropped, since they would miss this batch's days.
    delete stored.series;
    delete stored.day_totals;
  } else if (d.month) {
    const series = (stored.series ??= {});
    for (const day in d.series) addFigures(series, day, d.series[day]!);
    if (stored.day_totals) for (const day in d.dayTotals) addFigures(stored.day_totals, day, d.dayTotals[day]!);
  }
  return stored;
}

/**
 * A delta's compact form, sorted once for a day row and the month twin that
 * shares its tally (never mutated once the batch is summed; rows share the
 * arrays only until addFamily replaces them).
 */
const compacted = new WeakMap<SourceTally, CompactSources>();
function compactDelta(t: SourceTally): CompactSources {
  let c = compacted.get(t);
  if (!c) compacted.set(t, (c = compactOf(t)));
  return c;
}

/**
 * The stored source row plus the batch's delta: created compact; a compact
 * row gets each family added in one pass over the sorted keys; a row stored
 * before that form keeps its maps and is added to in place.
 */
export function mergeSourceDoc(id: string, stored: SourceDoc | undefined, d: SourceDelta): SourceDoc {
  if (!stored) return { id, ...d.key, ...compactDelta(d.sources) };
  if (isCompact(stored)) {
    const delta = compactDelta(d.sources);
    for (const [name] of FAMILIES) stored[name] = addFamily(stored[name], delta[name]);
    return stored;
  }
  for (const f of SOURCE_MAPS) {
    const m = (stored[f] ??= {});
    for (const [k, n] of d.sources[f]) addTo(m, k, n);
  }
  return stored;
}

/** The stored outcome row plus the batch's delta, as columns (a row of the earlier form is converted). */
export function mergeOutcomeDoc(id: string, stored: PromptOutcomeDoc | undefined, d: OutcomeDelta): PromptOutcomeDoc {
  const delta = outcomeColumnsOf(d.prompts);
  if (!stored) return { id, ...d.key, outcomes: delta };
  const { prompts: _legacy, ...rest } = stored as PromptOutcomeDoc & { prompts?: unknown };
  return { ...rest, outcomes: addOutcomeColumns(columnsOf(stored), delta) };
}
