import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  addFacts,
  addSourceFacts,
  addSourceTally,
  dict,
  emptyCounts,
  emptySourceCounts,
  emptySourceTally,
  mergeSourceCounts,
  tallySourceFacts,
  type SourceCounts,
} from '../domain/counts.js';
import { compactOf, isCompact } from './source-rows.js';
import { outcomeColumnsOf, sumOutcomeRows, type LegacyOutcomes } from './outcome-rows.js';
import type { AnswerFacts } from '../domain/facts.js';
import type { TierName } from '../domain/sources.js';
import { addToBatch, emptyCountBatch, mergeCountDoc, mergeOutcomeDoc, mergeSourceDoc, rowKeys, rowDeltas } from './count-rows.js';
import {
  ALL,
  COUNT_EXTENTS,
  DAILY_COUNTS,
  DAILY_SOURCES,
  PROMPT_COUNTS,
  PROMPT_OUTCOMES,
  countRowId,
  dayTotalFigures,
  keepsDays,
  keepsMonthSources,
  monthOf,
  seriesFigures,
  type CountDoc,
  type CountExtentDoc,
  type CountRowKey,
  type PromptOutcomeDoc,
  type PromptCountsDoc,
  type SourceDoc,
  type PromptDoc,
} from './collections.js';
import { cellRow, cellsDocId, inCells, packCell, unpackCell } from './prompt-cells.js';
import { addToRows, retagRows } from './answers.js';
import { sealOpenDay, withOpenDay } from './open-day.js';
import { addSourceRow, memberTags } from './tag-rows.js';

type Docs = Map<string, Record<string, unknown>>;
/** An outcome row as a map per prompt: what the oracle folds (compared as columns, see asStored). */
type LegacyOutcomeDoc = CountRowKey & LegacyOutcomes & { id: string };
/** A source row as SourceCounts maps: what the oracle folds (compared in the compact form, see asStored). */
type LegacySourceDoc = CountRowKey & SourceCounts & { id: string };
const ORG = 'org-1';

/** The fold one answer at a time, read-add-write per row (as the projection did before batching): the oracle. */
function foldOneByOne(docs: Docs, facts: AnswerFacts, tags: readonly string[] = []): void {
  const get = <T>(c: string, id: string) => docs.get(`${c}|${id}`) as T | undefined;
  const put = (c: string, doc: { id: string }) => docs.set(`${c}|${doc.id}`, doc as unknown as Record<string, unknown>);
  const own = addFacts(emptyCounts(), facts);
  for (const key of rowKeys(ORG, facts, tags)) {
    for (const period of [key, { ...key, day: monthOf(key.day) }]) {
      const id = countRowId(period);
      // Month rows keep per-day maps only over every prompt and per tag (keepsDays).
      const isMonth = period.day !== key.day && keepsDays(key);
      const counts = get<CountDoc>(DAILY_COUNTS, id) ?? {
        id,
        ...period,
        ...emptyCounts(),
        ...(isMonth && { day_totals: dict<number[]>() }),
      };
      addFacts(counts, facts);
      if (isMonth) {
        const day = ((counts.series ??= dict())[key.day] ??= seriesFigures(emptyCounts()));
        seriesFigures(own).forEach((n, i) => (day[i]! += n));
        if (counts.day_totals) {
          const all = (counts.day_totals[key.day] ??= dayTotalFigures(emptyCounts()));
          dayTotalFigures(own).forEach((n, i) => (all[i]! += n));
        }
      }
      put(DAILY_COUNTS, counts);
      // A prompt's source rows by model or location have no month twin (keepsMonthSources).
      if (facts.citations.length > 0 && (period.day === key.day || keepsMonthSources(key)))
        put(DAILY_SOURCES, addSourceFacts(get<LegacySourceDoc>(DAILY_SOURCES, id) ?? { id, ...period, ...emptySourceCounts() }, facts));
      if (key.prompt_id !== ALL) continue;
      const outcomes = get<LegacyOutcomeDoc>(PROMPT_OUTCOMES, id) ?? { id, ...period, prompts: dict() };
      const [n, won, lost] = outcomes.prompts[facts.prompt_id] ?? [0, 0, 0];
      outcomes.prompts[facts.prompt_id] = [n + 1, won + (facts.won ? 1 : 0), lost + (facts.lost ? 1 : 0)];
      put(PROMPT_OUTCOMES, outcomes);
    }
  }
}

/** The batched fold: a batch's deltas, then each row read, merged and written once. */
function foldBatch(docs: Docs, batch: AnswerFacts[], tagsOf: (prompt: string) => string[]): void {
  const b = emptyCountBatch();
  for (const f of batch) addToBatch(b, ORG, f, tagsOf(f.prompt_id));
  const all = rowDeltas(b);
  const write = <T extends { id: string }, D>(c: string, deltas: Map<string, D>, merge: (id: string, s: T | undefined, d: D) => T) => {
    for (const [id, d] of deltas) {
      const stored = docs.get(`${c}|${id}`) as T | undefined;
      docs.set(`${c}|${id}`, merge(id, stored, d) as unknown as Record<string, unknown>);
    }
  };
  write(DAILY_COUNTS, all.counts, mergeCountDoc);
  write(DAILY_SOURCES, all.sources, mergeSourceDoc);
  write(PROMPT_OUTCOMES, all.outcomes, mergeOutcomeDoc);
}

/**
 * Documents as stored (JSON), so prototype-less maps and plain objects compare
 * equal; source rows as SourceCounts maps in their compact form.
 */
const asStored = (docs: Docs) =>
  Object.fromEntries(
    [...docs].map(([k, v]) => {
      if (k.startsWith(`${DAILY_SOURCES}|`) && !isCompact(v)) {
        const { id, org_id, day, prompt_id, model, location } = v as unknown as LegacySourceDoc;
        v = { id, org_id, day, prompt_id, model, location, ...compactOf(v as unknown as SourceCounts) };
      }
      if (k.startsWith(`${PROMPT_OUTCOMES}|`) && 'prompts' in v) {
        const { prompts, ...rest } = v as unknown as LegacyOutcomeDoc;
        v = { ...rest, outcomes: outcomeColumnsOf(prompts) };
      }
      return [k, JSON.parse(JSON.stringify(v)) as unknown];
    }),
  );

const tier = fc.constantFrom<TierName>('primary', 'tracked', 'secondary');
const citation = fc.record({
  page: fc.constantFrom('a.com/1', 'a.com/2', 'b.org/x', 'docs.b.org/y', 'c.net'),
  tier,
  source_id: fc.constantFrom<string | null>(null, 'r1', 'r2'),
});
const factsArb: fc.Arbitrary<AnswerFacts> = fc
  .record({
    prompt_id: fc.constantFrom('p1', 'p2', 'p3'),
    model: fc.constantFrom('m1', 'm2'),
    location: fc.constantFrom('us', 'de'),
    day: fc.constantFrom('2026-01-30', '2026-01-31', '2026-02-01', '2026-03-15'),
    citations: fc.array(citation, { maxLength: 4 }),
    org: fc.nat(3),
    c1: fc.nat(2),
    others: fc.array(fc.record({ name: fc.constantFrom('Hooli', 'Initech'), count: fc.integer({ min: 1, max: 3 }) }), { maxLength: 2 }),
    won: fc.boolean(),
    lost: fc.boolean(),
  })
  .map((r) => ({
    answer_id: 'a',
    prompt_id: r.prompt_id,
    model: r.model,
    location: r.location,
    run_at: `${r.day}T10:00:00Z`,
    day: r.day,
    citations: r.citations.map((c) => {
      const domain = c.page.split('/')[0]!;
      return { ...c, domain, site: domain.split('.').slice(-2).join('.') };
    }),
    tracked_mentions: { ...(r.org > 0 && { org: r.org }), ...(r.c1 > 0 && { c1: r.c1 }) },
    other_mentions: r.others,
    won: r.won && r.org > 0,
    lost: r.lost && r.org === 0,
  }));

describe('batched count-row fold', () => {
  it('gives the same rows (tag rows included) as folding one answer at a time, however the answers are split into batches', () => {
    // p1 carries t1, p2 carries t1 and t2, p3 none.
    const tagsOf = (prompt: string) => ({ p1: ['t1'], p2: ['t1', 't2'] })[prompt] ?? [];
    fc.assert(
      fc.property(fc.array(fc.array(factsArb, { maxLength: 12 }), { maxLength: 5 }), (batches) => {
        const one = new Map() as Docs;
        const batched = new Map() as Docs;
        for (const batch of batches) {
          for (const f of batch) foldOneByOne(one, f, tagsOf(f.prompt_id));
          foldBatch(batched, batch, tagsOf);
        }
        assert.deepEqual(asStored(batched), asStored(one));
      }),
      { numRuns: 200 },
    );
  });

  /** An answer of prompt p, model m, location us on 2026-01-05 that names the organization `mentions` times. */
  const answerOn5January = (mentions: number): AnswerFacts => ({
    answer_id: 'a',
    prompt_id: 'p',
    model: 'm',
    location: 'us',
    run_at: '2026-01-05T00:00:00Z',
    day: '2026-01-05',
    citations: [],
    tracked_mentions: { org: mentions },
    other_mentions: [],
    won: true,
    lost: false,
  });

  it('adds a month row’s day_totals only where the row keeps them (rows from before never start them)', () => {
    const f = answerOn5January(2);
    assert.equal(rowDeltas(emptyCountBatch()).counts.size, 0);
    const batch = emptyCountBatch();
    addToBatch(batch, ORG, f);
    const month = countRowId({ org_id: ORG, day: '2026-01', prompt_id: ALL, model: 'm', location: 'us' });
    const delta = rowDeltas(batch).counts.get(month)!;
    const legacy = { id: month, org_id: ORG, day: '2026-01', prompt_id: ALL, model: 'm', location: 'us', ...emptyCounts() };
    const merged = mergeCountDoc(month, legacy, delta);
    assert.equal(merged.day_totals, undefined);
    assert.deepEqual(merged.series?.['2026-01-05'], seriesFigures(addFacts(emptyCounts(), f)));
    assert.equal(merged.mention_total, 2);
    const created = mergeCountDoc(month, undefined, delta);
    assert.deepEqual(created.day_totals?.['2026-01-05'], dayTotalFigures(addFacts(emptyCounts(), f)));
  });

  it('keeps no per-day maps in a prompt’s own month rows, and drops those stored before (they would miss the new days)', () => {
    const f = answerOn5January(1);
    const batch = emptyCountBatch();
    addToBatch(batch, ORG, f, ['t1']);
    const deltas = rowDeltas(batch).counts;
    const key = { org_id: ORG, day: '2026-01', prompt_id: 'p', model: 'm', location: 'us' };
    const month = countRowId(key);
    const created = mergeCountDoc(month, undefined, deltas.get(month)!);
    assert.equal(created.series, undefined);
    assert.equal(created.day_totals, undefined);
    const before = {
      id: month,
      ...key,
      ...emptyCounts(),
      answer_count: 1,
      series: { '2026-01-02': [1] },
      day_totals: { '2026-01-02': [1] },
    };
    const merged = mergeCountDoc(month, before, deltas.get(month)!);
    assert.equal(merged.answer_count, 2);
    assert.equal(merged.series, undefined);
    assert.equal(merged.day_totals, undefined);
    // The tag's month row and the roll-up over every prompt keep them.
    for (const prompt_id of [ALL, 'tag:t1']) {
      const id = countRowId({ ...key, prompt_id });
      assert.deepEqual(mergeCountDoc(id, undefined, deltas.get(id)!).series?.['2026-01-05'], seriesFigures(addFacts(emptyCounts(), f)));
    }
  });

  it('an outcome row of the earlier form (a map per prompt) is added to as columns and reads the same sums', () => {
    const key = { org_id: ORG, day: '2026-01', prompt_id: ALL, model: ALL, location: ALL };
    const id = countRowId(key);
    const legacy = { id, ...key, prompts: { p2: [3, 1, 0], p1: [2, 0, 2] } } as PromptOutcomeDoc;
    const delta = { key, prompts: { p3: [1, 1, 0], p1: [1, 0, 1] } as Record<string, [number, number, number]> };
    const merged = mergeOutcomeDoc(id, legacy, delta);
    assert.deepEqual(merged, {
      id,
      ...key,
      outcomes: [
        ['p1', 'p2', 'p3'],
        [3, 3, 1],
        [0, 1, 1],
        [3, 0, 0],
      ],
    });
    assert.deepEqual(
      [...sumOutcomeRows([legacy, merged])],
      [
        ['p1', [5, 0, 5]],
        ['p2', [6, 2, 0]],
        ['p3', [1, 1, 0]],
      ],
    );
  });

  it('a source tally adds up to what addSourceFacts gives', () => {
    fc.assert(
      fc.property(fc.array(factsArb, { maxLength: 10 }), (facts) => {
        const t = emptySourceTally();
        const direct = emptySourceCounts();
        for (const f of facts) {
          tallySourceFacts(t, f);
          addSourceFacts(direct, f);
        }
        assert.deepEqual(JSON.parse(JSON.stringify(addSourceTally(emptySourceCounts(), t))), JSON.parse(JSON.stringify(direct)));
      }),
    );
  });

  it('summing only some source maps gives those maps as the full sum has them, and leaves the others empty', () => {
    fc.assert(
      fc.property(fc.array(factsArb, { maxLength: 10 }), (facts) => {
        const rows = facts.map((f) => addSourceFacts(emptySourceCounts(), f));
        const full = rows.reduce((acc, r) => mergeSourceCounts(acc, r), emptySourceCounts());
        const some = rows.reduce((acc, r) => mergeSourceCounts(acc, r, ['rule_runs', 'rule_citations']), emptySourceCounts());
        assert.deepEqual({ ...some.rule_runs }, { ...full.rule_runs });
        assert.deepEqual({ ...some.rule_citations }, { ...full.rule_citations });
        assert.equal(Object.keys(some.page_citations).length, 0);
      }),
    );
  });
});

/** get/put/delete over documents in memory, as the projection's transaction offers them. */
function memoryStore(docs: Docs) {
  return {
    get: async <T>(c: string, id: string) => docs.get(`${c}|${id}`) as T | undefined,
    put: async <T extends { id: string }>(c: string, doc: T) => void docs.set(`${c}|${doc.id}`, doc as unknown as Record<string, unknown>),
    delete: async (c: string, id: string) => docs.delete(`${c}|${id}`),
  };
}

/** The open day added to the month rows and closed, the extent written back (what retagging does first). */
async function sealed(docs: Docs): Promise<void> {
  const extent = docs.get(`${COUNT_EXTENTS}|${ORG}`) as CountExtentDoc | undefined;
  if (extent) await memoryStore(docs).put(COUNT_EXTENTS, await sealOpenDay(memoryStore(docs), extent));
}

const PROMPT_IDS = ['p1', 'p2', 'p3'] as const;
const promptArb = fc.record({ tags: fc.subarray(['t1', 't2', 't3']), deleted: fc.boolean() });
const promptsArb = fc
  .tuple(fc.option(promptArb, { nil: undefined }), promptArb, promptArb)
  .map((ps) =>
    Object.fromEntries(
      ps.map((p, i) => [PROMPT_IDS[i]!, p && ({ id: PROMPT_IDS[i]!, org_id: ORG, name: 'p', text: 'q', ...p } as PromptDoc)]),
    ),
  );

describe('tag rows', () => {
  it('after a prompt’s tags change, equal the rows folded with the new tags from the start', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(factsArb, { maxLength: 12 }), { maxLength: 4 }),
        promptsArb,
        promptsArb,
        async (batches, before, after) => {
          const retagged = new Map() as Docs;
          const direct = new Map() as Docs;
          for (const batch of batches) {
            await addToRows(memoryStore(retagged), ORG, batch, (p) => memberTags(before[p]));
            await addToRows(memoryStore(direct), ORG, batch, (p) => memberTags(after[p]));
          }
          for (const p of PROMPT_IDS) await retagRows(memoryStore(retagged), ORG, p, before[p], after[p]);
          // Retagging seals the open day (open-day.ts): compared with whole month rows on both sides.
          for (const docs of [retagged, direct]) await sealed(docs);
          assert.deepEqual(asStored(retagged), asStored(direct));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('hold the sum of the tagged prompts’ rows', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(factsArb, { maxLength: 20 }), async (facts) => {
        const docs = new Map() as Docs;
        await addToRows(memoryStore(docs), ORG, facts, (p) => (p === 'p3' ? [] : ['t1']));
        for (const f of facts) {
          const key = { org_id: ORG, day: monthOf(f.day), model: ALL, location: ALL };
          // A prompt's own rows are cells of its cells document (prompt-cells.ts); a tag's rows are rows.
          const row = (prompt_id: string) =>
            inCells({ prompt_id })
              ? cellRow(docs.get(`${PROMPT_COUNTS}|${cellsDocId({ ...key, prompt_id })}`) as PromptCountsDoc | undefined, {
                  ...key,
                  prompt_id,
                })
              : (docs.get(`${DAILY_COUNTS}|${countRowId({ ...key, prompt_id })}`) as CountDoc | undefined);
          const tagged = (row('p1')?.answer_count ?? 0) + (row('p2')?.answer_count ?? 0);
          assert.equal(row('tag:t1')?.answer_count ?? 0, tagged);
        }
      }),
    );
  });
});

describe('prompt cells', () => {
  /** Every count row by id, a prompt's own rows taken out of their cells documents. */
  const countRows = (docs: Docs) => {
    const out = new Map<string, unknown>();
    for (const [k, d] of docs) {
      if (k.startsWith(`${DAILY_COUNTS}|`)) out.set(d.id as string, d);
      if (!k.startsWith(`${PROMPT_COUNTS}|`)) continue;
      const doc = d as unknown as PromptCountsDoc;
      for (const name of Object.keys(doc.cells)) {
        const [model, location] = JSON.parse(name) as [string, string];
        const key = { org_id: doc.org_id, day: doc.day, prompt_id: doc.prompt_id, model, location };
        out.set(countRowId(key), cellRow(doc, key));
      }
    }
    return out;
  };

  it('are stored packed and read back as the counts they were, as are cells stored as objects before', () => {
    fc.assert(
      fc.property(fc.array(factsArb, { maxLength: 6 }), (facts) => {
        const counts = facts.reduce((c, f) => addFacts(c, f), emptyCounts());
        const packed = packCell(counts);
        assert.ok(Array.isArray(packed));
        assert.ok(JSON.stringify(packed).length < JSON.stringify(counts).length / 2);
        // Through JSON, as stored.
        const json = <T>(x: T) => JSON.parse(JSON.stringify(x)) as T;
        assert.deepEqual(json(unpackCell(json(packed))), json(counts));
        assert.equal(unpackCell(counts), counts);
      }),
    );
  });

  it('hold the rows an organization without cells keeps in DAILY_COUNTS, also after retagging', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(factsArb, { maxLength: 12 }), { maxLength: 4 }),
        promptsArb,
        promptsArb,
        async (batches, before, after) => {
          const cells = new Map() as Docs;
          const rows = new Map() as Docs;
          // An extent from before cells existed: that organization keeps every row in DAILY_COUNTS.
          rows.set(`${COUNT_EXTENTS}|${ORG}`, { id: ORG, org_id: ORG, months: [], models: [], locations: [], tag_rows: true });
          for (const batch of batches)
            for (const docs of [cells, rows]) await addToRows(memoryStore(docs), ORG, batch, (p) => memberTags(before[p]));
          for (const p of PROMPT_IDS) for (const docs of [cells, rows]) await retagRows(memoryStore(docs), ORG, p, before[p], after[p]);
          assert.equal((cells.get(`${COUNT_EXTENTS}|${ORG}`) as { prompt_cells?: boolean } | undefined)?.prompt_cells ?? true, true);
          for (const id of countRows(rows).keys()) {
            const [, , prompt_id] = JSON.parse(id) as string[];
            if (inCells({ prompt_id: prompt_id! }))
              assert.equal(cells.has(`${DAILY_COUNTS}|${id}`), false, 'a prompt row outside its cells');
          }
          assert.deepEqual(countRows(cells), countRows(rows));
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('the open day', () => {
  /** The roll-up source and outcome rows (over every prompt and per tag), as stored. */
  const rollUps = (docs: Docs) =>
    Object.fromEntries(
      Object.entries(asStored(docs)).filter(([k, v]) => {
        if (!k.startsWith(`${DAILY_SOURCES}|`) && !k.startsWith(`${PROMPT_OUTCOMES}|`)) return false;
        return keepsDays(v as CountRowKey);
      }),
    );

  it('a month row and the open day’s row hold what a whole month row holds, and equal it once sealed', async () => {
    // Days over two months, in any order (a backfill brings earlier days after later ones).
    const days = ['2026-01-30', '2026-01-31', '2026-02-01', '2026-02-02'];
    const dayFactsArb = fc.tuple(factsArb, fc.constantFrom(...days)).map(([f, day]) => ({ ...f, day }));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(dayFactsArb, { maxLength: 8 }), { maxLength: 6 }), promptsArb, async (batches, prompts) => {
        const open = new Map() as Docs;
        const whole = new Map() as Docs;
        // An extent from before the open day existed: that organization keeps whole month rows.
        whole.set(`${COUNT_EXTENTS}|${ORG}`, {
          id: ORG,
          org_id: ORG,
          months: [],
          models: [],
          locations: [],
          tag_rows: true,
          prompt_cells: true,
        });
        for (const batch of batches)
          for (const docs of [open, whole]) await addToRows(memoryStore(docs), ORG, batch, (p) => memberTags(prompts[p]));
        const extent = open.get(`${COUNT_EXTENTS}|${ORG}`) as CountExtentDoc | undefined;
        if (batches.some((b) => b.length > 0)) assert.equal(extent?.open_days, true);
        // What a report reads for a whole month: its row plus the open day's row (withOpenDay).
        const stored = asStored(open) as Record<string, Record<string, unknown>>;
        const expected = rollUps(whole) as Record<string, Record<string, unknown>>;
        for (const [k, want] of Object.entries(expected)) {
          const key = want as unknown as CountRowKey;
          if (key.day.length !== 7) {
            assert.deepEqual(stored[k], want, 'a day row differs');
            continue;
          }
          const collection = k.slice(0, k.indexOf('|'));
          const parts = withOpenDay([key.day], extent)
            .map((day) => stored[`${collection}|${countRowId({ ...key, day })}`])
            .filter((d) => d !== undefined);
          if (collection === PROMPT_OUTCOMES) {
            const sum = sumOutcomeRows(parts as never);
            assert.deepEqual([...sum].sort(), [...sumOutcomeRows([want as never])].sort(), 'an outcome month differs');
          } else {
            const sum = parts.reduce<SourceDoc | undefined>((acc, p) => addSourceRow(acc, key.day, key, p as never, 1), undefined);
            assert.deepEqual(sum && compactOf(sum), compactOf(want as never), 'a source month differs');
          }
        }
        await sealed(open);
        assert.deepEqual(rollUps(open), expected);
      }),
      { numRuns: 200 },
    );
  });
});
