import {
  addFacts,
  SOURCE_MAPS,
  addSourceTally,
  dict,
  emptyCounts,
  emptySourceCounts,
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
  monthOf,
  seriesFigures,
  type CountDoc,
  type CountRowKey,
  type PromptOutcomeDoc,
  type SourceDoc,
} from './collections.js';

/**
 * What a batch of answers adds to the count rows, summed in memory (pure: no
 * store). Each answer's own counts are computed once and added to the day rows
 * of its eight keys; each month row's delta is then the sum of its days' deltas
 * (withMonths), so a roll-up that a thousand answers share is added to its month
 * once, not a thousand times. The stored rows are read and written once per
 * batch each (mergeCountDoc and friends), not once per answer.
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

/** Deltas by row id; addToBatch fills the day rows, withMonths adds their month twins. */
export interface CountBatch {
  counts: Map<string, CountDelta>;
  sources: Map<string, SourceDelta>;
  outcomes: Map<string, OutcomeDelta>;
}

export const emptyCountBatch = (): CountBatch => ({ counts: new Map(), sources: new Map(), outcomes: new Map() });

/** The eight rows an answer adds to: its own (prompt, model, location) and every roll-up of them. */
export function rowKeys(orgId: string, f: Pick<AnswerFacts, 'day' | 'prompt_id' | 'model' | 'location'>): CountRowKey[] {
  const keys: CountRowKey[] = [];
  for (const prompt_id of [f.prompt_id, ALL])
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

const countDelta = (key: CountRowKey, month: boolean): CountDelta => ({ key, month, counts: emptyCounts(), series: dict(), dayTotals: dict() });

/** Adds one answer's facts to the day rows of the batch (mutates it). */
export function addToBatch(batch: CountBatch, orgId: string, facts: AnswerFacts): void {
  const own = addFacts(emptyCounts(), facts);
  const ownSources = facts.citations.length > 0 ? tallySourceFacts(emptySourceTally(), facts) : null;
  const outcome = [1, facts.won ? 1 : 0, facts.lost ? 1 : 0];
  for (const key of rowKeys(orgId, facts)) {
    const id = countRowId(key);
    let c = batch.counts.get(id);
    if (!c) batch.counts.set(id, (c = countDelta(key, false)));
    mergeCounts(c.counts, own);
    if (ownSources) {
      let s = batch.sources.get(id);
      if (!s) batch.sources.set(id, (s = { key, sources: emptySourceTally() }));
      mergeSourceTally(s.sources, ownSources);
    }
    if (key.prompt_id !== ALL) continue;
    let o = batch.outcomes.get(id);
    if (!o) batch.outcomes.set(id, (o = { key, prompts: dict() }));
    addOutcome(o.prompts, facts.prompt_id, outcome);
  }
}

/**
 * The batch with the month twin of every day row: the sum of its days'
 * deltas, with each day's series and day_totals figures (see SERIES_FIELDS).
 */
export function withMonths(batch: CountBatch): CountBatch {
  const out = emptyCountBatch();
  const twin = <D extends { key: CountRowKey }>(into: Map<string, D>, d: D, make: (key: CountRowKey) => D): D => {
    const key = { ...d.key, day: monthOf(d.key.day) };
    const id = countRowId(key);
    let m = into.get(id);
    if (!m) into.set(id, (m = make(key)));
    return m;
  };
  const months = { counts: new Map<string, CountDelta>(), sources: new Map<string, SourceDelta>(), outcomes: new Map<string, OutcomeDelta>() };
  for (const [id, d] of batch.counts) {
    out.counts.set(id, d);
    const m = twin(months.counts, d, (key) => countDelta(key, true));
    mergeCounts(m.counts, d.counts);
    addFigures(m.series, d.key.day, seriesFigures(d.counts));
    addFigures(m.dayTotals, d.key.day, dayTotalFigures(d.counts));
  }
  for (const [id, d] of batch.sources) {
    out.sources.set(id, d);
    mergeSourceTally(twin(months.sources, d, (key) => ({ key, sources: emptySourceTally() })).sources, d.sources);
  }
  for (const [id, d] of batch.outcomes) {
    out.outcomes.set(id, d);
    const m = twin(months.outcomes, d, (key) => ({ key, prompts: dict<[number, number, number]>() }));
    for (const p in d.prompts) addOutcome(m.prompts, p, d.prompts[p]!);
  }
  for (const [id, d] of months.counts) out.counts.set(id, d);
  for (const [id, d] of months.sources) out.sources.set(id, d);
  for (const [id, d] of months.outcomes) out.outcomes.set(id, d);
  return out;
}

/** A stored map made a dictionary before keys are added to it (see dict()); one already is stays as it is. */
const dictOf = <V>(m: Record<string, V> | undefined): Record<string, V> =>
  m && Object.getPrototypeOf(m) === null ? m : dict(m);

/**
 * The stored count row plus the batch's delta. A month row created now keeps
 * day_totals for every day of its month; a stored one without them never
 * starts them (its earlier days would be missing).
 */
export function mergeCountDoc(id: string, stored: CountDoc | undefined, d: CountDelta): CountDoc {
  if (!stored) {
    const doc: CountDoc = { id, ...d.key, ...d.counts };
    if (d.month) {
      doc.day_totals = d.dayTotals;
      doc.series = d.series;
    }
    return doc;
  }
  stored.brand_mentions = dictOf(stored.brand_mentions);
  mergeCounts(stored, d.counts);
  if (d.month) {
    const series = (stored.series = dictOf(stored.series));
    for (const day in d.series) addFigures(series, day, d.series[day]!);
    if (stored.day_totals) {
      const all = (stored.day_totals = dictOf(stored.day_totals));
      for (const day in d.dayTotals) addFigures(all, day, d.dayTotals[day]!);
    }
  }
  return stored;
}

export function mergeSourceDoc(id: string, stored: SourceDoc | undefined, d: SourceDelta): SourceDoc {
  if (!stored) return addSourceTally({ id, ...d.key, ...emptySourceCounts() }, d.sources);
  for (const f of SOURCE_MAPS) stored[f] = dictOf(stored[f]);
  return addSourceTally(stored, d.sources);
}

export function mergeOutcomeDoc(id: string, stored: PromptOutcomeDoc | undefined, d: OutcomeDelta): PromptOutcomeDoc {
  if (!stored) return { id, ...d.key, prompts: d.prompts };
  const prompts = (stored.prompts = dictOf(stored.prompts));
  for (const p in d.prompts) {
    const [n, won, lost] = d.prompts[p]!;
    const cur = prompts[p];
    prompts[p] = cur ? [cur[0] + n, cur[1] + won, cur[2] + lost] : [n, won, lost];
  }
  return stored;
}
