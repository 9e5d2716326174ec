import type { StoreTransaction, StoredEvent } from '@kb/store';
import type { Projection } from '@kb/eventsourcing';
import type { AnswerCollected, PromptRunItemFailed, PromptRunStarted } from '@kb/events';
import { addFacts, addSourceFacts, dict, emptyCounts, emptySourceCounts } from '../domain/counts.js';
import { answerFacts, factsOfEvent, type AnswerBody, type AnswerFacts } from '../domain/facts.js';
import { normalizeUrl } from '../domain/urls.js';
import { loadFoldContext } from './fold-context.js';
import {
  ALL,
  ANSWER_BODIES,
  BRAND_TALLIES,
  DAILY_COUNTS,
  DAILY_SOURCES,
  LATEST_ANSWERS,
  PROMPT_OUTCOMES,
  monthOf,
  seriesFigures,
  type PromptOutcomeDoc,
  PROMPT_RUNS,
  countRowId,
  dayTotalFigures,
  type BrandTallyDoc,
  type CountDoc,
  type CountRowKey,
  type AnswerBodyDoc,
  type LatestAnswerDoc,
  type PromptRunDoc,
  type SourceDoc,
} from './collections.js';

type RowStore = Pick<StoreTransaction, 'get' | 'put'>;

/**
 * The count rows one transaction touches (daily and month counts, sources,
 * prompt outcomes, brand tallies), read once and written once at its end
 * (flush): a batch of answers that add to the same month roll-ups parses and
 * writes each row once, not once per answer. Only this projection reads or
 * writes these collections inside a command transaction.
 */
interface RowCache {
  docs: Map<string, Map<string, unknown>>;
  dirty: Map<string, Set<string>>;
}
const rowCaches = new WeakMap<StoreTransaction, RowCache>();

function cachedRows(tx: StoreTransaction): RowStore {
  let cache = rowCaches.get(tx);
  if (!cache) {
    cache = { docs: new Map(), dirty: new Map() };
    rowCaches.set(tx, cache);
  }
  const { docs, dirty } = cache;
  const of = (c: string) => docs.get(c) ?? docs.set(c, new Map()).get(c)!;
  return {
    async get<T extends { id: string }>(collection: string, id: string): Promise<T | undefined> {
      const m = of(collection);
      if (m.has(id)) return m.get(id) as T | undefined;
      const doc = await tx.get<T>(collection, id);
      // Its maps (domains, pages, brands, prompts) become dictionaries: see dict().
      if (doc)
        for (const [k, v] of Object.entries(doc))
          if (v && typeof v === 'object' && !Array.isArray(v)) (doc as Record<string, unknown>)[k] = dict(v);
      m.set(id, doc);
      return doc;
    },
    async put<T extends { id: string }>(collection: string, doc: T): Promise<void> {
      of(collection).set(doc.id, doc);
      (dirty.get(collection) ?? dirty.set(collection, new Set()).get(collection)!).add(doc.id);
    },
  };
}

async function flushRows(tx: StoreTransaction): Promise<void> {
  const cache = rowCaches.get(tx);
  if (!cache) return;
  rowCaches.delete(tx);
  for (const [collection, ids] of cache.dirty) {
    const docs = cache.docs.get(collection)!;
    for (const id of ids) await tx.put(collection, docs.get(id) as { id: string });
  }
}

/** The eight rows an answer adds to: its own (prompt, model, location) and every roll-up of them. */
export function rowKeys(orgId: string, f: Pick<AnswerFacts, 'day' | 'prompt_id' | 'model' | 'location'>): CountRowKey[] {
  const keys: CountRowKey[] = [];
  for (const prompt_id of [f.prompt_id, ALL])
    for (const model of [f.model, ALL])
      for (const location of [f.location, ALL]) keys.push({ org_id: orgId, day: f.day, prompt_id, model, location });
  return keys;
}

const latestId = (a: { org_id: string; prompt_id: string; model: string; location: string }) =>
  JSON.stringify([a.org_id, a.prompt_id, a.model, a.location]);

/** Newer wins; equal run_at: the greater answer id, so the outcome never depends on arrival order. */
const isNewer = (a: { run_at: string; answer_id: string }, b: { run_at: string; answer_id: string }) => {
  const ta = Date.parse(a.run_at);
  const tb = Date.parse(b.run_at);
  return ta > tb || (ta === tb && a.answer_id > b.answer_id);
};

/**
 * Adds one answer's facts to every count row it belongs to: its eight daily
 * rows (counts; source counts when it cites; prompt outcomes for the roll-ups
 * over every prompt) and the month twin of each. Reports sum whole months from
 * month rows and only the days at a window's ends from day rows, so a year is
 * 12 to 72 reads per key instead of 365, whatever the filter: a tag over a
 * hundred prompts, or a model filter on the large source maps, stays interactive.
 */
export async function addToRows(tx: RowStore, orgId: string, facts: AnswerFacts): Promise<void> {
  const own = addFacts(emptyCounts(), facts);
  const figures = seriesFigures(own);
  const totals = dayTotalFigures(own);
  for (const key of rowKeys(orgId, facts)) {
    for (const period of [key, { ...key, day: monthOf(key.day) }]) {
      const id = countRowId(period);
      const isMonth = period.day !== key.day;
      // A month row created now keeps day_totals for every day of its month; an older one never starts them.
      const counts = (await tx.get<CountDoc>(DAILY_COUNTS, id)) ?? {
        id,
        ...period,
        ...emptyCounts(),
        ...(isMonth && { day_totals: dict<number[]>() }),
      };
      addFacts(counts, facts);
      if (isMonth) {
        // A month row also keeps the day's time-series figures (see SERIES_FIELDS).
        const series = (counts.series ??= dict());
        const day = (series[key.day] ??= figures.map(() => 0));
        figures.forEach((n, i) => (day[i] = (day[i] ?? 0) + n));
        if (counts.day_totals) {
          const all = (counts.day_totals[key.day] ??= totals.map(() => 0));
          totals.forEach((n, i) => (all[i] = (all[i] ?? 0) + n));
        }
      }
      await tx.put(DAILY_COUNTS, counts);
      if (facts.citations.length > 0) {
        const sources = (await tx.get<SourceDoc>(DAILY_SOURCES, id)) ?? { id, ...period, ...emptySourceCounts() };
        await tx.put(DAILY_SOURCES, addSourceFacts(sources, facts));
      }
      if (key.prompt_id !== ALL) continue;
      const outcomes = (await tx.get<PromptOutcomeDoc>(PROMPT_OUTCOMES, id)) ?? { id, ...period, prompts: dict() };
      const [n, won, lost] = outcomes.prompts[facts.prompt_id] ?? [0, 0, 0];
      outcomes.prompts[facts.prompt_id] = [n + 1, won + (facts.won ? 1 : 0), lost + (facts.lost ? 1 : 0)];
      await tx.put(PROMPT_OUTCOMES, outcomes);
    }
  }
}

/** A schema-1 answer.collected event: it carried the text, cited URLs and brands itself (folded on replay). */
type LegacyAnswerCollected = AnswerBody & { org_id: string; origin: AnswerCollected['origin']; run_id?: string };

/**
 * The facts to add up, the brand names they refer to, and the answer's body
 * (text, URLs as cited, brands) when it is still kept: in the event for schema
 * 1; for schema 2 in ANSWER_BODIES, which holds it only while the answer is the
 * latest of its combination (on replay, a superseded answer's body is gone; it
 * is superseded again later in the same replay).
 */
async function factsOf(tx: StoreTransaction, event: StoredEvent) {
  if (event.schema === 1) {
    const legacy = event.data as unknown as LegacyAnswerCollected;
    const context = await loadFoldContext(tx, legacy.org_id);
    return { answer: legacy, facts: answerFacts(legacy, context), names: new Map(context.names.map((n) => [n.key, n.name])), body: legacy };
  }
  const answer = event.data as AnswerCollected;
  const body = await tx.get<AnswerBodyDoc>(ANSWER_BODIES, answer.answer_id);
  return { answer, facts: factsOfEvent(answer), names: new Map(answer.tracked_mentions.map((m) => [m.key, m.name])), body };
}

async function foldAnswer(tx: StoreTransaction, event: StoredEvent): Promise<void> {
  const { answer, facts, names, body } = await factsOf(tx, event);

  const rows = cachedRows(tx);
  await addToRows(rows, answer.org_id, facts);

  // Rule 6: text, citations and mentions only for the latest answer per prompt, model and location.
  const lid = latestId(answer);
  const current = await tx.get<LatestAnswerDoc>(LATEST_ANSWERS, lid);
  if (!current || isNewer(answer, current)) {
    const citations: LatestAnswerDoc['citations'] = [];
    if (body) {
      for (const raw of body.citations) {
        const n = normalizeUrl(raw);
        const fact = n && facts.citations.find((c) => c.page === n.key);
        if (n && fact) citations.push({ url: raw, normalized_url: n.key, domain: n.host, tier: fact.tier });
      }
    } else {
      for (const c of facts.citations) citations.push({ url: c.page, normalized_url: c.page, domain: c.domain, tier: c.tier });
    }
    const doc: LatestAnswerDoc = {
      id: lid,
      answer_id: answer.answer_id,
      org_id: answer.org_id,
      prompt_id: answer.prompt_id,
      model: answer.model,
      location: answer.location,
      run_at: answer.run_at,
      text: body?.text ?? '',
      citations,
      mentions: Object.entries(facts.tracked_mentions).map(([key, count]) => ({
        brand_id: key === 'org' ? null : key,
        name: names.get(key) ?? key,
        is_organization: key === 'org',
        count,
      })),
      other_brand_mention_count: facts.other_mentions.reduce((s, o) => s + o.count, 0),
      won: facts.won,
      lost: facts.lost,
      origin: answer.origin,
    };
    await tx.put(LATEST_ANSWERS, doc);
    // The answer it supersedes keeps no text anywhere (its counts stay in the rows).
    if (current && current.answer_id !== answer.answer_id) await tx.delete(ANSWER_BODIES, current.answer_id);
  } else if (current.answer_id !== answer.answer_id) {
    // Older than the latest answer: counted, never shown, its body not kept.
    await tx.delete(ANSWER_BODIES, answer.answer_id);
  }

  // Candidates for competitor suggestions: brands named that are not tracked.
  for (const other of facts.other_mentions) {
    const key = other.name.toLowerCase().replace(/\s+/g, ' ');
    const id = JSON.stringify([answer.org_id, key]);
    const tally = (await rows.get<BrandTallyDoc>(BRAND_TALLIES, id)) ?? {
      id,
      org_id: answer.org_id,
      name: other.name,
      key,
      mentions: 0,
      answer_count: 0,
    };
    await rows.put(BRAND_TALLIES, { ...tally, mentions: tally.mentions + other.count, answer_count: tally.answer_count + 1 });
  }

  if (answer.run_id) await bumpRun(tx, answer.run_id, answer.model, 'collected', null);
}

async function bumpRun(tx: StoreTransaction, runId: string, model: string, field: 'collected' | 'failed', error: string | null) {
  const run = await tx.get<PromptRunDoc>(PROMPT_RUNS, runId);
  if (!run) return;
  const engine = run.engines[model] ?? { collected: 0, failed: 0, last_error: null };
  const next = { ...engine, [field]: engine[field] + 1, ...(error !== null && { last_error: error }) };
  await tx.put(PROMPT_RUNS, { ...run, [field]: run[field] + 1, engines: { ...run.engines, [model]: next } });
}

/** Daily additive counts, the latest answers, brand tallies and run progress, all from the answer stream. */
export const answersProjection: Projection = {
  name: 'analytics-answers',
  collections: [DAILY_COUNTS, DAILY_SOURCES, PROMPT_OUTCOMES, LATEST_ANSWERS, BRAND_TALLIES, PROMPT_RUNS],
  indexes: [
    // Count rows are read by id only (their id is their key): no field index to keep up on every write.
    { collection: LATEST_ANSWERS, fields: ['org_id', 'run_at'] },
    { collection: BRAND_TALLIES, fields: ['org_id'] },
    { collection: PROMPT_RUNS, fields: ['org_id', 'slot'] },
  ],
  flush: flushRows,
  async apply(tx, event: StoredEvent) {
    switch (event.type) {
      case 'answer.collected':
        await foldAnswer(tx, event);
        return;
      case 'prompt_run.started': {
        const d = event.data as PromptRunStarted;
        const doc: PromptRunDoc = {
          id: d.run_id,
          run_id: d.run_id,
          org_id: d.org_id,
          slot: d.slot,
          status: 'running',
          planned: d.planned,
          collected: 0,
          failed: 0,
          engines: Object.fromEntries(d.models.map((m) => [m, { collected: 0, failed: 0, last_error: null }])),
          error: null,
          started_at: d.at,
          finished_at: null,
        };
        await tx.put(PROMPT_RUNS, doc);
        return;
      }
      case 'prompt_run.item_failed': {
        const d = event.data as PromptRunItemFailed;
        await bumpRun(tx, d.run_id, d.model, 'failed', d.error);
        return;
      }
      case 'prompt_run.finished': {
        const d = event.data as { run_id: string; error?: string; at: string };
        const run = await tx.get<PromptRunDoc>(PROMPT_RUNS, d.run_id);
        if (!run) return;
        const engines =
          d.error === undefined
            ? run.engines
            : Object.fromEntries(Object.entries(run.engines).map(([m, e]) => [m, { ...e, last_error: d.error! }]));
        await tx.put(PROMPT_RUNS, {
          ...run,
          engines,
          status: d.error === undefined ? 'completed' : 'failed',
          error: d.error ?? null,
          finished_at: d.at,
        });
        return;
      }
      default:
        return;
    }
  },
};
