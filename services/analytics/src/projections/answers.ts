import type { StoreTransaction } from '@kb/store';
import type { Projection, Stored, StoredOf } from '@kb/eventsourcing';
import type { AnswerCollected } from '@kb/events';
import { answerFacts, factsOfEvent, type AnswerBody, type AnswerFacts } from '../domain/facts.js';
import { daysOfMonth } from '../domain/periods.js';
import { loadFoldContext } from './fold-context.js';
import { addToBatch, emptyCountBatch, rowKeys, type CountBatch } from './count-rows.js';
import { addCountRow, addSourceRow, memberTags, tagChanges, tagRowPrompt } from './tag-rows.js';
import { countRowStore } from './prompt-cells.js';
import { writeBatch, type RowStore } from './write-batch.js';
import type { RowWrite } from './row-overlay.js';
import { FoldThreadInterrupted, type FoldThread } from './fold-thread.js';
import type { HandedAnswer } from './fold-worker.js';
import { sealOpenDay } from './open-day.js';
import { foldLatest } from './latest.js';
import {
  ALL,
  ANSWER_BODIES,
  BRAND_TALLIES,
  COUNT_EXTENTS,
  PROMPTS,
  countRowId,
  dayTotalFigures,
  keepsMonthSources,
  seriesFigures,
  type CountExtentDoc,
  type CountRowKey,
  type PromptDoc,
  DAILY_COUNTS,
  DAILY_SOURCES,
  PROMPT_COUNTS,
  LATEST_ANSWERS,
  PROMPT_OUTCOMES,
  PROMPT_RUNS,
  type BrandTallyDoc,
  type CountDoc,
  type AnswerBodyDoc,
  type PromptRunDoc,
  type SourceDoc,
} from './collections.js';

/**
 * What one transaction adds to the count rows and brand tallies, summed in
 * memory and written at its end (flush): each stored row is read and written
 * once per batch, not once per answer. Only this projection reads or writes
 * these collections inside a command transaction.
 */
interface Pending {
  batch: CountBatch;
  tallies: Map<string, BrandTallyDoc>;
  /** The tags of each prompt folded in this transaction (read once). */
  tags: Map<string, string[]>;
  /** Per organization: whether it had answers before its extent (and so its tag rows) existed. */
  legacy: Map<string, boolean>;
  /** Answers handed to the fold thread (handOverAnswers), until each one's event is folded here. */
  handedOver?: Set<string>;
  /** Answers folded in this transaction that were not handed over (none may be when some were). */
  strays?: number;
  /** What the fold thread has the transaction write for them, in pieces. */
  merged?: AsyncIterable<RowWrite[]>;
  /** The handed-over answers' foldLatest arguments, in append order: folded here should the thread fail. */
  latest?: LatestArgs[];
}
const pendingByTx = new WeakMap<StoreTransaction, Pending>();
/** foldLatest's arguments after the row store. */
type LatestArgs = Parameters<typeof foldLatest> extends [unknown, ...infer Rest] ? Rest : never;

function pendingOf(tx: StoreTransaction): Pending {
  let p = pendingByTx.get(tx);
  if (!p) pendingByTx.set(tx, (p = { batch: emptyCountBatch(), tallies: new Map(), tags: new Map(), legacy: new Map() }));
  return p;
}

/**
 * Hands the answers this transaction is about to append to the fold thread,
 * which folds them into the source and outcome rows and the latest answers
 * while the transaction appends them; flush then adds them to the count rows
 * here and writes what the thread sends back (the same documents writeBatch and
 * foldLatest would write here). The thread reads the rows from the store's file
 * as this transaction started, so this works only on an embedded store
 * (`tx.file`) and only before the transaction folded anything: otherwise it
 * returns false and the answers fold here as usual. The transaction must then
 * append every answer handed over and no other (flush checks).
 */
export async function handOverAnswers(tx: StoreTransaction, thread: FoldThread, answers: readonly HandedAnswer[]): Promise<boolean> {
  if (!tx.file || answers.length === 0) return false;
  const pending = pendingOf(tx);
  if (pending.merged || pending.batch.leaves.size > 0) return false;
  const ids = new Set<string>();
  const tags: Record<string, string[]> = {};
  for (const { data: a } of answers) {
    await noteLegacy(tx, pending, a.org_id);
    tags[a.prompt_id] ??= await tagsOf(tx, pending, a.org_id, a.prompt_id);
    ids.add(a.answer_id);
  }
  const legacy = [...pending.legacy].filter(([, old]) => old).map(([orgId]) => orgId);
  pending.handedOver = ids;
  pending.latest = [];
  // Read by flush; a transaction that fails before it drops the pieces (discardPending).
  pending.merged = thread.merge(tx.file, answers, tags, legacy);
  return true;
}

/**
 * Takes back the answers handed to the fold thread before any of them was
 * appended (some turned out to be imported already): they fold here, and what
 * the thread sends back is dropped.
 */
export function takeBackAnswers(tx: StoreTransaction): void {
  const pending = pendingByTx.get(tx);
  if (!pending?.merged) return;
  pending.handedOver = undefined;
  pending.latest = undefined;
  pending.strays = undefined;
  pending.merged = undefined;
}

/** A transaction that did not reach flush (it failed) leaves nothing for the next one on the same store. */
function discardPending(tx: StoreTransaction): void {
  pendingByTx.delete(tx);
  writtenBodies.delete(tx);
}

async function flushRows(tx: StoreTransaction): Promise<void> {
  const p = pendingByTx.get(tx);
  if (!p) return;
  pendingByTx.delete(tx);
  const legacy = (orgId: string) => p.legacy.get(orgId) ?? false;
  if (p.merged) {
    if (p.handedOver!.size > 0 || p.strays)
      throw new Error('the answers handed to the fold thread are not the ones this transaction appended');
    // The count rows here while the thread finishes the rest; neither part reads what the other writes.
    await writeBatch(tx, p.batch, legacy, { counts: true, sources: false });
    // Each piece is written while the thread makes the next.
    let written = false;
    try {
      for await (const writes of p.merged) {
        for (const [collection, id, json] of writes) await (json === null ? tx.delete(collection, id) : tx.putJson(collection, id, json));
        written ||= writes.length > 0;
      }
    } catch (err) {
      // The thread failed (it logged why). Before any write, its part is done here, in the same order,
      // as if never handed over; after some, the transaction is run again without it.
      if (written) throw new FoldThreadInterrupted(err);
      await writeBatch(tx, p.batch, legacy, { counts: false, sources: true });
      for (const l of p.latest!) await foldLatest(tx, ...l);
    }
  } else if (p.batch.leaves.size > 0) await writeBatch(tx, p.batch, legacy);
  for (const [id, t] of p.tallies) {
    const stored = await tx.get<BrandTallyDoc>(BRAND_TALLIES, id);
    await tx.put(
      BRAND_TALLIES,
      stored ? { ...stored, mentions: stored.mentions + t.mentions, answer_count: stored.answer_count + t.answer_count } : t,
    );
  }
}

export { rowKeys };

/**
 * Answer bodies written in this transaction, handed to the projection folding
 * their event so it need not read back what was just written (replay, which
 * has no such hand-off, reads them from ANSWER_BODIES).
 */
const writtenBodies = new WeakMap<StoreTransaction, Map<string, AnswerBodyDoc>>();

export function bodyWritten(tx: StoreTransaction, body: AnswerBodyDoc): void {
  let m = writtenBodies.get(tx);
  if (!m) writtenBodies.set(tx, (m = new Map()));
  m.set(body.id, body);
}

async function bodyOf(tx: StoreTransaction, answerId: string): Promise<AnswerBodyDoc | undefined> {
  const m = writtenBodies.get(tx);
  const body = m?.get(answerId);
  if (!body) return tx.get<AnswerBodyDoc>(ANSWER_BODIES, answerId);
  m!.delete(answerId);
  return body;
}

/**
 * Adds one answer's facts to every count row it belongs to: its eight daily
 * rows (counts; source counts when it cites; prompt outcomes for the roll-ups
 * over every prompt) and the month twin of each. Reports sum whole months from
 * month rows and only the days at a window's ends from day rows, so a year is
 * 12 to 72 reads per key instead of 365, whatever the filter: a tag over a
 * hundred prompts, or a model filter on the large source maps, stays interactive.
 * Given several answers, each row is read and written once for all of them
 * (the projection batches a transaction's answers the same way; see Pending).
 */
export async function addToRows(
  tx: RowStore,
  orgId: string,
  facts: AnswerFacts | AnswerFacts[],
  tagsOf: (promptId: string) => readonly string[] = () => [],
): Promise<void> {
  const batch = emptyCountBatch();
  for (const f of Array.isArray(facts) ? facts : [facts]) addToBatch(batch, orgId, f, tagsOf(f.prompt_id));
  await writeBatch(tx, batch);
}

/** The tags whose rows an answer of this prompt adds to (read once per transaction). */
async function tagsOf(tx: StoreTransaction, pending: Pending, orgId: string, promptId: string): Promise<string[]> {
  let tags = pending.tags.get(promptId);
  if (!tags) {
    const prompt = await tx.get<PromptDoc>(PROMPTS, promptId);
    pending.tags.set(promptId, (tags = prompt?.org_id === orgId ? memberTags(prompt) : []));
  }
  return tags;
}

/**
 * Whether the organization had answers folded before its extent existed (its
 * tag rows would then miss them): asked once per transaction, before this
 * transaction's answers are written.
 */
async function noteLegacy(tx: StoreTransaction, pending: Pending, orgId: string): Promise<void> {
  if (pending.legacy.has(orgId)) return;
  const extent = await tx.get<CountExtentDoc>(COUNT_EXTENTS, orgId);
  pending.legacy.set(orgId, !extent && (await tx.find(LATEST_ANSWERS, { where: { org_id: orgId }, limit: 1 })).length > 0);
}

/**
 * A prompt's tags changed (or it was created or deleted): its count and source
 * rows, every period, model and location of the organization's extent, are
 * added to the rows of the tags it gained and taken from those it lost, so each
 * tag's rows stay the sum of its current prompts' rows (what a replay folds).
 * Reads the prompt's count and source rows of each month, model and location
 * it has answers on (24 combinations with 5 models and 3 locations) and of
 * every day of those months (a prompt's month rows do not say which days had
 * answers; see keepsDays).
 */
export async function retagRows(
  tx: Pick<StoreTransaction, 'get' | 'put' | 'delete'>,
  orgId: string,
  promptId: string,
  before: PromptDoc | undefined,
  after: PromptDoc | undefined,
): Promise<void> {
  const { added, removed } = tagChanges(memberTags(before), memberTags(after));
  if (added.length === 0 && removed.length === 0) return;
  const stored = await tx.get<CountExtentDoc>(COUNT_EXTENTS, orgId);
  if (!stored?.tag_rows) return;
  // The arithmetic below needs whole month rows: the open day goes into them first.
  const extent = await sealOpenDay(tx, stored);
  if (extent !== stored) await tx.put(COUNT_EXTENTS, extent);
  const changes = [...added.map((t) => [t, 1] as const), ...removed.map((t) => [t, -1] as const)];
  const rows = countRowStore(tx, () => extent.prompt_cells === true);
  const read = (key: CountRowKey) => Promise.all([rows.get(key), tx.get<SourceDoc>(DAILY_SOURCES, countRowId(key))]);
  const apply = async (key: CountRowKey, counts: CountDoc | undefined, sources: SourceDoc | undefined) => {
    for (const [tag, sign] of changes) {
      const tagKey = { ...key, prompt_id: tagRowPrompt(tag) };
      const id = countRowId(tagKey);
      if (counts) {
        const next = addCountRow(await rows.get(tagKey), id, tagKey, counts, sign);
        await (next ? rows.put(tagKey, next) : rows.delete(tagKey));
      }
      if (sources) {
        const next = addSourceRow(await tx.get<SourceDoc>(DAILY_SOURCES, id), id, tagKey, sources, sign);
        await (next ? tx.put(DAILY_SOURCES, next) : tx.delete(DAILY_SOURCES, id));
      }
    }
  };
  for (const month of extent.months)
    for (const model of [ALL, ...extent.models])
      for (const location of [ALL, ...extent.locations]) {
        const key = { org_id: orgId, day: month, prompt_id: promptId, model, location };
        const [counts, sources] = await read(key);
        if (!counts) continue;
        // The days with answers: the month row's series days where it keeps them (rows stored before
        // keepsDays), else every day of the month.
        const dayRows: CountDoc[] = [];
        let daySources: SourceDoc | undefined;
        for (const day of counts.series ? Object.keys(counts.series) : daysOfMonth(month)) {
          const [c, s] = await read({ ...key, day });
          await apply({ ...key, day }, c, s);
          if (c) dayRows.push(c);
          if (s) daySources = addSourceRow(daySources, countRowId(key), key, s, 1);
        }
        // A prompt's month row keeps no per-day maps (keepsDays) and, by model or location, has no
        // source twin (keepsMonthSources; one stored before is stale); the tag's month rows have
        // both, so the prompt's part of them is taken from the day rows just read.
        await apply(key, counts.series ? counts : withDays(counts, dayRows), keepsMonthSources(key) ? sources : daySources);
      }
  await rows.flush();
}

/** A month row with the per-day maps a fold gives a row that keeps them (keepsDays), from its day rows. */
const withDays = (month: CountDoc, days: readonly CountDoc[]): CountDoc => ({
  ...month,
  series: Object.fromEntries(days.map((d) => [d.day, seriesFigures(d)])),
  day_totals: Object.fromEntries(days.map((d) => [d.day, dayTotalFigures(d)])),
});

/** A schema-1 answer.collected event: it carried the text, cited URLs and brands itself (folded on replay). */
type LegacyAnswerCollected = AnswerBody & { org_id: string; origin: AnswerCollected['origin']; run_id?: string };

/**
 * The facts to add up, the brand names they refer to, and the answer's body
 * (text, URLs as cited, brands) when it is still kept: in the event for schema
 * 1; for schema 2 in ANSWER_BODIES, which holds it only while the answer is the
 * latest of its combination (on replay, a superseded answer's body is gone; it
 * is superseded again later in the same replay).
 */
async function factsOf(tx: StoreTransaction, event: StoredOf<'answer.collected'>) {
  if (event.schema === 1) {
    // The catalogue types the current schema (2); a schema-1 payload was validated against the schema of its day.
    const legacy = event.data as unknown as LegacyAnswerCollected;
    const context = await loadFoldContext(tx, legacy.org_id);
    return { answer: legacy, facts: answerFacts(legacy, context), names: new Map(context.names.map((n) => [n.key, n.name])), body: legacy };
  }
  const answer = event.data;
  const body = await bodyOf(tx, answer.answer_id);
  return { answer, facts: factsOfEvent(answer), names: new Map(answer.tracked_mentions.map((m) => [m.key, m.name])), body };
}

async function foldAnswer(tx: StoreTransaction, event: StoredOf<'answer.collected'>): Promise<void> {
  const { answer, facts, names, body } = await factsOf(tx, event);

  const pending = pendingOf(tx);
  const handedOver = pending.handedOver?.delete(answer.answer_id) ?? false;
  if (pending.handedOver && !handedOver) pending.strays = (pending.strays ?? 0) + 1;
  await noteLegacy(tx, pending, answer.org_id);
  addToBatch(pending.batch, answer.org_id, facts, await tagsOf(tx, pending, answer.org_id, answer.prompt_id));

  // Rule 6 (latest.ts); for answers handed over, the fold thread decides it (kept here in case it fails).
  if (handedOver) pending.latest!.push([answer, facts, names, body]);
  else await foldLatest(tx, answer, facts, names, body);

  // Candidates for competitor suggestions: brands named that are not tracked.
  for (const other of facts.other_mentions) {
    const key = other.name.toLowerCase().replace(/\s+/g, ' ');
    const id = JSON.stringify([answer.org_id, key]);
    const tally = pending.tallies.get(id);
    if (tally) {
      tally.mentions += other.count;
      tally.answer_count += 1;
    } else pending.tallies.set(id, { id, org_id: answer.org_id, name: other.name, key, mentions: other.count, answer_count: 1 });
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
  collections: [DAILY_COUNTS, PROMPT_COUNTS, DAILY_SOURCES, PROMPT_OUTCOMES, COUNT_EXTENTS, LATEST_ANSWERS, BRAND_TALLIES, PROMPT_RUNS],
  indexes: [
    // Count rows are read by id only (their id is their key): no field index to keep up on every write.
    { collection: LATEST_ANSWERS, fields: ['org_id', 'run_at'] },
    { collection: BRAND_TALLIES, fields: ['org_id'] },
    { collection: PROMPT_RUNS, fields: ['org_id', 'slot'] },
  ],
  flush: flushRows,
  discard: discardPending,
  async apply(tx, event: Stored) {
    switch (event.type) {
      case 'answer.collected':
        await foldAnswer(tx, event);
        return;
      case 'prompt_run.started': {
        const d = event.data;
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
        const d = event.data;
        await bumpRun(tx, d.run_id, d.model, 'failed', d.error);
        return;
      }
      case 'prompt_run.finished': {
        const d = event.data;
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
