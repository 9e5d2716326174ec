/**
 * Analytics at the scale of a year of daily runs: 1,000 prompts x 5 models x 3
 * locations x 365 days (5.5 million answers).
 *
 * 1. Fold rate: answers per second through the real write path (import use
 *    case: validation, event append, projections into daily counts and latest
 *    answers, one SQLite transaction per batch), against the pure in-memory
 *    fold of the same answers in the same run.
 * 2. Report latency: the year's daily count rows are loaded into a SQLite store
 *    (the roll-up rows every report reads, produced by the same fold functions
 *    the projection uses), then each report is timed against a direct scan over
 *    the raw answers (a compact in-memory array of every answer's facts) that
 *    computes the same totals in the same run.
 *
 * 3. Import of a year end to end (ONLY=import, IMPORT_DAYS days of it, default
 *    all of DAYS): every answer of every day, in time order, through the import
 *    use case in batches of 1,000 (one transaction each), then the overview,
 *    domains and prompts reports over the imported days checked against a
 *    direct scan of the same answers; the rate is printed against the pure
 *    in-memory fold of the same answers, measured in the same run.
 *
 *   npm run bench:analytics            (PROMPTS, DAYS, FOLD_ANSWERS, IMPORT_DAYS to scale down;
 *                                       ONLY=fold|reports|import to run one part; PROFILE=dir
 *                                       [PROFILE_REPORT=name] writes CPU profiles of the reports;
 *                                       IMPORTER_IDS=v4: the importer's answer ids are random
 *                                       v4 uuids instead of time-ordered ones like the service's;
 *                                       FOLD_THREAD_MIN_ANSWERS=0: the import folds on one thread;
 *                                       PAGE_SIZE=4096: the store file with SQLite's default pages
 *                                       instead of the service's)
 */
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { fixedClock, randomIds } from '@kb/platform';
import { eventCatalog } from '@kb/events';
import { createCommandBus } from '@kb/eventsourcing';
import { createSqliteStore } from '@kb/store/sqlite';
import type { CallContext } from '@kb/rpc';
import { analyticsBench } from '@kb/analytics/bench';
import { BRANDS, DOMAINS, prng } from './synthetic.js';

const {
  analyticsProjections,
  createAnswersService,
  createFoldThread,
  createReportsService,
  createSettingsService,
  createCompetitorsService,
  answerFacts,
  addToRows,
  addCompact,
  compactOf,
  addOutcomeColumns,
  COUNT_EXTENTS,
  DAILY_COUNTS,
  DAILY_SOURCES,
  PROMPT_OUTCOMES,
  PROMPT_COUNTS,
  PROMPTS: PROMPTS_COLLECTION,
  mergeCounts,
  countsOf,
  packCell,
  unpackCell,
  sealOpenDay,
} = analyticsBench;

type AnyDoc = { id: string } & Record<string, unknown>;
/** The (every model, every location) cell of a prompt's cells document (prompt-cells.ts). */
const ALL_CELL = JSON.stringify(['*', '*']);

/** Documents in memory behind the get/put the fold uses (the bench writes them to the store in bulk). */
function memoryDocs() {
  const docs = new Map<string, Map<string, AnyDoc>>();
  const of = (c: string) => docs.get(c) ?? docs.set(c, new Map()).get(c)!;
  return {
    docs,
    get: async <T>(c: string, id: string) => of(c).get(id) as T | undefined,
    put: async <T extends { id: string }>(c: string, doc: T) => {
      of(c).set(doc.id, doc as unknown as AnyDoc);
    },
    delete: async (c: string, id: string) => of(c).delete(id),
  };
}

const PROMPTS = Number(process.env.PROMPTS ?? 1000);
const MODELS = ['gpt-4o', 'claude', 'gemini', 'sonar', 'llama'];
const LOCATIONS = ['us', 'de', 'jp'];
const DAYS = Number(process.env.DAYS ?? 365);
const FOLD_ANSWERS = Number(process.env.FOLD_ANSWERS ?? 2000);
const DAY0 = Date.parse('2025-01-01T00:00:00Z');
const DAY_MS = 86_400_000;

function syntheticAnswer(rand: () => number, orgId: string, promptIds: string[], p: number, m: number, l: number, day: number) {
  const words: string[] = [];
  const n = 2 + Math.floor(rand() * 5);
  for (let i = 0; i < n; i++) words.push(BRANDS[Math.floor(rand() * BRANDS.length)]!, 'is', 'good.');
  const citations = Array.from({ length: Math.floor(rand() * 5) }, () => {
    const d = DOMAINS[Math.floor(rand() * rand() * DOMAINS.length)]!;
    return `https://${d}/page-${Math.floor(rand() * 10)}`;
  });
  return {
    // An importer's own ids (idempotent re-imports): time-ordered like the service's, or random with IMPORTER_IDS=v4.
    answer_id: process.env.IMPORTER_IDS === 'v4' ? randomUUID() : randomIds.uuid(),
    org_id: orgId,
    prompt_id: promptIds[p]!,
    model: MODELS[m]!,
    location: LOCATIONS[l]!,
    run_at: new Date(DAY0 + day * DAY_MS + Math.floor(rand() * DAY_MS)).toISOString(),
    text: words.join(' '),
    citations,
    brands: [...new Set(words.filter((w) => BRANDS.includes(w)))],
    origin: 'import' as const,
  };
}

const time = async <T>(fn: () => Promise<T> | T): Promise<[T, number]> => {
  const t0 = performance.now();
  const out = await fn();
  return [out, performance.now() - t0];
};
/** Wall time and this process's CPU time (user + system): on a shared machine the CPU time is the steadier figure. */
const timeCpu = async <T>(fn: () => Promise<T> | T): Promise<[T, number, number]> => {
  const c0 = process.cpuUsage();
  const [out, ms] = await time(fn);
  const c = process.cpuUsage(c0);
  return [out, ms, (c.user + c.system) / 1000];
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (ms: number) => `${ms.toFixed(ms < 10 ? 2 : 1)} ms`;

async function world(dir: string) {
  // The service's page size (ANALYTICS_STORE_FILE) unless PAGE_SIZE names another, to compare.
  const pageSize = Number(process.env.PAGE_SIZE ?? analyticsBench.ANALYTICS_STORE_FILE.pageSize ?? 4096);
  const store = createSqliteStore({ path: join(dir, 'analytics.db'), pageSize });
  for (const p of analyticsProjections) for (const i of p.indexes ?? []) await store.ensureIndex(i.collection, i.fields);
  const clock = fixedClock(new Date(DAY0 + (DAYS + 1) * DAY_MS));
  const commands = createCommandBus({ store, catalog: eventCatalog, projections: analyticsProjections, ids: randomIds, clock });
  const ctx: CallContext = {
    org_id: randomUUID(),
    principal: { type: 'system', id: 'bench' },
    permissions: [],
    folder_scope: null,
    request_id: randomUUID(),
  };
  const deps = { store, commands, ids: randomIds, clock };
  await createSettingsService(deps).setBrand(ctx, { brand_name: 'Acme', websites: DOMAINS.slice(0, 10) });
  for (const name of ['Globex', 'Initech']) await createCompetitorsService(deps).create(ctx, { name });
  return { store, clock, ctx, deps, pageSize };
}

async function foldRate() {
  const dir = mkdtempSync(join(tmpdir(), 'kb-bench-fold-'));
  try {
    const w = await world(dir);
    const answers = createAnswersService(w.deps);
    const rand = prng(1);
    const promptIds = Array.from({ length: PROMPTS }, () => randomUUID());
    const items = Array.from({ length: FOLD_ANSWERS }, () =>
      syntheticAnswer(
        rand,
        w.ctx.org_id,
        promptIds,
        Math.floor(rand() * PROMPTS),
        Math.floor(rand() * 5),
        Math.floor(rand() * 3),
        Math.floor(rand() * DAYS),
      ),
    );
    const [, ms] = await time(async () => {
      for (let i = 0; i < items.length; i += 500)
        await answers.importAnswers(
          w.ctx,
          items.slice(i, i + 500).map(({ org_id: _o, origin: _g, ...rest }) => rest),
        );
    });
    // The pure fold of the same answers (facts and the eight row updates each) as the baseline.
    const context = { rules: [], brands: [{ key: 'org', names: ['Acme'] }] };
    const memory = memoryDocs();
    const [, pureMs] = await time(async () => {
      // Batched as the projection batches a transaction's answers.
      for (let i = 0; i < items.length; i += 500)
        await addToRows(
          memory,
          w.ctx.org_id,
          items.slice(i, i + 500).map((a) => answerFacts(a, context)),
        );
    });
    const rate = FOLD_ANSWERS / (ms / 1000);
    console.log(
      `fold: ${FOLD_ANSWERS} answers in ${fmt(ms)} = ${Math.round(rate)} answers/s through the store (pure in-memory fold: ${Math.round(FOLD_ANSWERS / (pureMs / 1000))} answers/s, ratio ${(ms / pureMs).toFixed(1)}x)`,
    );
    console.log(
      `      a year of ${PROMPTS * 15 * DAYS} answers would take ${((PROMPTS * 15 * DAYS) / rate / 3600).toFixed(1)} h to fold at that rate (${((PROMPTS * 15) / rate).toFixed(1)} s per daily slot)`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Compact raw facts of every answer, for the direct scan: one entry per answer in typed arrays. */
interface RawYear {
  day: Uint16Array;
  prompt: Uint16Array;
  model: Uint8Array;
  location: Uint8Array;
  citations: Uint8Array;
  orgMentions: Uint8Array;
  brandMentions: Uint8Array;
  n: number;
}

/** A month row built from one day's answers added to the stored month row. */
function mergeMonth(collection: string, stored: AnyDoc, day: AnyDoc): AnyDoc {
  if (collection === PROMPT_OUTCOMES) return { ...stored, outcomes: addOutcomeColumns(stored.outcomes as never, day.outcomes as never) };
  if (collection === DAILY_SOURCES) return { ...stored, ...addCompact(compactOf(stored as never), compactOf(day as never)) };
  if (collection === COUNT_EXTENTS) {
    const union = (k: string) => [...new Set([...(stored[k] as string[]), ...(day[k] as string[])])].sort();
    return { ...stored, months: union('months'), models: union('models'), locations: union('locations') };
  }
  if (collection === PROMPT_COUNTS) {
    const cells = { ...(stored.cells as Record<string, never>) };
    for (const [name, cell] of Object.entries(day.cells as Record<string, never>))
      cells[name] = (cells[name] ? packCell(mergeCounts(unpackCell(cells[name]), unpackCell(cell))) : cell) as never;
    return { ...stored, cells };
  }
  if (collection === DAILY_COUNTS) {
    // Per-day maps of a month row: each day is built once, so the union.
    const perDay = (k: string) =>
      stored[k] === undefined ? {} : { [k]: { ...(stored[k] as object), ...((day[k] as object | undefined) ?? {}) } };
    return { ...stored, ...mergeCounts(countsOf(stored as never), day as never), ...perDay('series'), ...perDay('day_totals') };
  }
  throw new Error(`no month rows in ${collection}`);
}

async function reports() {
  const dir = mkdtempSync(join(tmpdir(), 'kb-bench-reports-'));
  try {
    const w = await world(dir);
    const reportsSvc = createReportsService({ store: w.store, clock: w.clock });
    const rand = prng(2);
    const promptIds = Array.from({ length: PROMPTS }, () => randomUUID());
    const total = PROMPTS * 5 * 3 * DAYS;
    const raw: RawYear = {
      day: new Uint16Array(total),
      prompt: new Uint16Array(total),
      model: new Uint8Array(total),
      location: new Uint8Array(total),
      citations: new Uint8Array(total),
      orgMentions: new Uint8Array(total),
      brandMentions: new Uint8Array(total),
      n: 0,
    };
    const context = {
      rules: DOMAINS.slice(0, 10).map((d, i) => ({
        source_id: String(i),
        match_type: 'domain' as const,
        pattern: d,
        tier: 'primary' as const,
        seq: i,
      })),
      brands: [
        { key: 'org', names: ['Acme'] },
        { key: 'c1', names: ['Globex'] },
        { key: 'c2', names: ['Initech'] },
      ],
    };

    // A tag on one prompt in ten (100 at full size): the tag filter sums that many prompts' rows.
    const tagId = randomUUID();
    const tagged = new Set(promptIds.filter((_, i) => i % 10 === 0).map((id) => promptIds.indexOf(id)));
    const tagsOf = new Map<string, string[]>([...tagged].map((i) => [promptIds[i]!, [tagId]]));
    await w.store.transaction(async (tx) => {
      for (const [i, id] of promptIds.entries())
        await tx.put(PROMPTS_COLLECTION, {
          id,
          org_id: w.ctx.org_id,
          name: `p${i}`,
          text: 'q',
          tags: tagged.has(i) ? [tagId] : [],
          deleted: false,
        });
    });

    const pool = Array.from({ length: 5000 }, () => answerFacts(syntheticAnswer(rand, w.ctx.org_id, promptIds, 0, 0, 0, 0), context));
    const dayKey = (day: number) => new Date(DAY0 + day * DAY_MS).toISOString().slice(0, 10);

    // Build the year day by day: fold each day's answers into that day's roll-up rows and write them.
    const t0 = performance.now();
    let docs = 0;
    for (let day = 0; day < DAYS; day++) {
      const memory = memoryDocs();
      const dayFacts: ReturnType<typeof answerFacts>[] = [];
      for (let p = 0; p < PROMPTS; p++)
        for (let m = 0; m < 5; m++)
          for (let l = 0; l < 3; l++) {
            // Facts of a pool of synthetic answers, re-keyed: extracting them is not what is measured here.
            const base = pool[Math.floor(rand() * pool.length)]!;
            const f = { ...base, prompt_id: promptIds[p]!, model: MODELS[m]!, location: LOCATIONS[l]!, day: dayKey(day) };
            const i = raw.n++;
            raw.day[i] = day;
            raw.prompt[i] = p;
            raw.model[i] = m;
            raw.location[i] = l;
            raw.citations[i] = f.citations.length;
            raw.orgMentions[i] = f.tracked_mentions.org ?? 0;
            raw.brandMentions[i] =
              Object.values(f.tracked_mentions).reduce((s, x) => s + x, 0) + f.other_mentions.reduce((s, o) => s + o.count, 0);
            dayFacts.push(f);
          }
      // Each answer also goes to its prompt's tag rows, as the projection folds it.
      await addToRows(memory, w.ctx.org_id, dayFacts, (p) => tagsOf.get(p) ?? []);
      // The day's roll-up source and outcome rows go into their month rows too (open-day.ts), as the fold does once a later day comes.
      const extent = await memory.get<Parameters<typeof sealOpenDay>[1]>(COUNT_EXTENTS, w.ctx.org_id);
      if (extent) await memory.put(COUNT_EXTENTS, await sealOpenDay(memory, extent));
      // The rows the reports below read: every roll-up and month row (tags' included), without the per-prompt x model / location
      // detail rows; and the organization's extent, which says its tag rows are complete.
      const needed = (d: AnyDoc) => d.prompt_id === '*' || (d.model === '*' && d.location === '*') || d.tag_rows !== undefined;
      const writes: [string, AnyDoc][] = [];
      for (const [collection, docs] of memory.docs)
        for (const d of docs.values()) {
          // A prompt's cells documents: every cell of a month (what a prompt-filtered report parses),
          // only the (*, *) cell of a day, as for the day rows elsewhere.
          const all = collection === PROMPT_COUNTS && (d.cells as Record<string, unknown>)[ALL_CELL];
          if (all && (d.day as string).length === 7) writes.push([collection, d]);
          else if (all) writes.push([collection, { ...d, cells: { [ALL_CELL]: all } }]);
          else if (needed(d)) writes.push([collection, d]);
        }
      // Month rows already written on earlier days of the month (and the extent) are merged with what is stored.
      await w.store.transaction(async (tx) => {
        for (const [collection, d] of writes) {
          const month = (typeof d.day === 'string' && d.day.length === 7) || collection === COUNT_EXTENTS;
          const stored = month ? await tx.get<AnyDoc>(collection, d.id) : undefined;
          await tx.put(collection, stored ? mergeMonth(collection, stored, d) : d);
        }
      });
      docs += writes.length;
      if (day % 30 === 29) process.stdout.write(`  built ${day + 1}/${DAYS} days (${raw.n} answers, ${docs} count documents)\r`);
    }
    const size = statSync(join(dir, 'analytics.db')).size;
    console.log(
      `\nyear: ${raw.n} answers -> ${docs} daily count documents (${(size / 1e6).toFixed(0)} MB) in ${((performance.now() - t0) / 1000).toFixed(0)} s`,
    );

    const from = new Date(DAY0).toISOString().slice(0, 10);
    const to = new Date(DAY0 + (DAYS - 1) * DAY_MS).toISOString().slice(0, 10);
    const midDays: [number, number] = [Math.min(14, DAYS - 1), Math.max(Math.min(14, DAYS - 1), DAYS - 20)];
    const mid = {
      fromDay: midDays[0],
      toDay: midDays[1],
      from: new Date(DAY0 + midDays[0] * DAY_MS).toISOString().slice(0, 10),
      to: new Date(DAY0 + midDays[1] * DAY_MS).toISOString().slice(0, 10),
    };

    /** The direct scan: the overview's totals straight from every raw answer in the window and filter. */
    const scan = (filter: { model?: number; prompt?: number; tag?: boolean; days?: number[] }) => {
      let answers = 0;
      let cited = 0;
      let citations = 0;
      let mention = 0;
      let brand = 0;
      for (let i = 0; i < raw.n; i++) {
        if (filter.model !== undefined && raw.model[i] !== filter.model) continue;
        if (filter.prompt !== undefined && raw.prompt[i] !== filter.prompt) continue;
        if (filter.tag && !tagged.has(raw.prompt[i]!)) continue;
        if (filter.days && (raw.day[i]! < filter.days[0]! || raw.day[i]! > filter.days[1]!)) continue;
        answers++;
        if (raw.citations[i]) cited++;
        citations += raw.citations[i]!;
        mention += raw.orgMentions[i]!;
        brand += raw.brandMentions[i]!;
      }
      return { answers, cited, citations, mention, brand };
    };

    const cases: {
      name: string;
      run: () => Promise<{
        totals: { answer_count: number; cited_run_count: number; cited_total: number; mention_total: number; brand_mention_total: number };
      }>;
      filter: { model?: number; prompt?: number; tag?: boolean; days?: number[] };
    }[] = [
      { name: 'overview, whole year', run: () => reportsSvc.overview(w.ctx, { from, to }), filter: {} },
      { name: 'overview, model filter', run: () => reportsSvc.overview(w.ctx, { from, to, model: 'sonar' }), filter: { model: 3 } },
      {
        name: 'overview, prompt filter',
        run: () => reportsSvc.overview(w.ctx, { from, to, prompt_id: promptIds[7] }),
        filter: { prompt: 7 },
      },
      { name: 'citation tiers', run: () => reportsSvc.tiers(w.ctx, { from, to }), filter: {} },
      { name: 'share of voice', run: () => reportsSvc.shareOfVoice(w.ctx, { from, to }), filter: {} },
      { name: 'time series', run: () => reportsSvc.timeseries(w.ctx, { from, to }), filter: {} },
      { name: 'domains', run: () => reportsSvc.sources(w.ctx, 'domain', { from, to }), filter: {} },
      { name: 'pages', run: () => reportsSvc.sources(w.ctx, 'page', { from, to }), filter: {} },
      { name: 'per source rule', run: () => reportsSvc.sourceRules(w.ctx, { from, to }), filter: {} },
      { name: 'registrable domains', run: () => reportsSvc.registrableDomains(w.ctx, { from, to }), filter: {} },
      {
        name: 'per source rule, tag',
        run: () => reportsSvc.sourceRules(w.ctx, { from, to, tag_id: tagId }),
        filter: { tag: true },
      },
      { name: 'prompts won/lost', run: () => reportsSvc.prompts(w.ctx, { from, to }), filter: {} },
      {
        name: `overview, tag (${tagged.size} prompts)`,
        run: () => reportsSvc.overview(w.ctx, { from, to, tag_id: tagId }),
        filter: { tag: true },
      },
      {
        name: 'overview, tag, odd days',
        // A window that starts and ends mid-month: day rows at both ends, month rows between.
        run: () => reportsSvc.overview(w.ctx, { from: mid.from, to: mid.to, tag_id: tagId }),
        filter: { tag: true, days: [mid.fromDay, mid.toDay] },
      },
      { name: 'domains, model filter', run: () => reportsSvc.sources(w.ctx, 'domain', { from, to, model: 'sonar' }), filter: { model: 3 } },
      { name: 'prompts, model filter', run: () => reportsSvc.prompts(w.ctx, { from, to, model: 'sonar' }), filter: { model: 3 } },
      { name: 'time series, model', run: () => reportsSvc.timeseries(w.ctx, { from, to, model: 'sonar' }), filter: { model: 3 } },
      {
        name: 'time series, tag',
        run: () => reportsSvc.timeseries(w.ctx, { from, to, tag_id: tagId }),
        filter: { tag: true },
      },
    ];
    console.log(`\nreport latency over ${DAYS} days (median of 9) vs a direct scan of the ${raw.n} raw answers:`);
    // PROFILE=dir [PROFILE_REPORT=name]: a CPU profile of the timed report runs (of that report only), written to dir.
    const profiler = process.env.PROFILE ? new Session() : undefined;
    if (profiler) {
      profiler.connect();
      await profiler.post('Profiler.enable');
    }
    for (const c of cases) {
      const profiled = profiler && (!process.env.PROFILE_REPORT || c.name === process.env.PROFILE_REPORT);
      if (profiled) await profiler.post('Profiler.start');
      const times: number[] = [];
      const cpuTimes: number[] = [];
      let report: Awaited<ReturnType<typeof c.run>> | undefined;
      // Median of 9 (wall and this process's CPU time, steadier on a shared machine).
      for (let i = 0; i < 9; i++) {
        const [r, ms, cpuMs] = await timeCpu(c.run);
        report = r;
        times.push(ms);
        cpuTimes.push(cpuMs);
      }
      if (profiled) {
        const { profile } = await profiler.post('Profiler.stop');
        mkdirSync(process.env.PROFILE!, { recursive: true });
        writeFileSync(join(process.env.PROFILE!, `report-${c.name.replace(/[^a-z0-9]+/gi, '-')}.cpuprofile`), JSON.stringify(profile));
      }
      const scanTimes: number[] = [];
      let direct: ReturnType<typeof scan> | undefined;
      for (let i = 0; i < 3; i++) {
        const [r, ms] = await time(() => scan(c.filter));
        direct = r;
        scanTimes.push(ms);
      }
      const t = report!.totals;
      const same =
        t.answer_count === direct!.answers &&
        t.cited_run_count === direct!.cited &&
        t.cited_total === direct!.citations &&
        t.mention_total === direct!.mention &&
        t.brand_mention_total === direct!.brand;
      const r = median(times);
      const s = median(scanTimes);
      console.log(
        `  ${c.name.padEnd(24)} ${fmt(r).padStart(10)} (cpu ${fmt(median(cpuTimes)).padStart(9)})   scan ${fmt(s).padStart(10)}   scan/report ${(s / r).toFixed(1).padStart(6)}x   totals ${same ? 'equal' : 'DIFFER'}`,
      );
    }
    profiler?.disconnect();
    await w.store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A year (or IMPORT_DAYS of it) imported in time order through the import use case, then checked against a direct scan. */
async function importYear() {
  const days = Number(process.env.IMPORT_DAYS ?? DAYS);
  const dir = mkdtempSync(join(tmpdir(), 'kb-bench-import-'));
  try {
    const w = await world(dir);
    // As the service runs it: imports of FOLD_THREAD_MIN_ANSWERS or more fold part of their work on a second thread (0: never).
    const minAnswers = Number(process.env.FOLD_THREAD_MIN_ANSWERS ?? 100);
    const thread = minAnswers > 0 ? createFoldThread() : undefined;
    const answers = createAnswersService({ ...w.deps, ...(thread && { foldThread: { thread, minAnswers } }) });
    const reportsSvc = createReportsService({ store: w.store, clock: w.clock });
    const rand = prng(3);
    const promptIds = Array.from({ length: PROMPTS }, () => randomUUID());
    // The prompts as analytics knows them, one in ten with a tag (the fold adds their answers to the tag's rows).
    const tagId = randomUUID();
    const promptTags = new Map(promptIds.filter((_, i) => i % 10 === 0).map((id) => [id as string, [tagId]]));
    await w.store.transaction(async (tx) => {
      for (const [i, id] of promptIds.entries())
        await tx.put(PROMPTS_COLLECTION, {
          id,
          org_id: w.ctx.org_id,
          name: `p${i}`,
          text: 'q',
          tags: i % 10 === 0 ? [tagId] : [],
          deleted: false,
        });
    });
    const context = {
      rules: DOMAINS.slice(0, 10).map((d, i) => ({
        source_id: randomUUID(),
        match_type: 'domain' as const,
        pattern: d,
        tier: 'primary' as const,
        seq: i,
      })),
      brands: [
        { key: 'org', names: ['Acme'] },
        { key: 'c1', names: ['Globex'] },
        { key: 'c2', names: ['Initech'] },
      ],
    };
    const perDay = PROMPTS * 15;
    let storeMs = 0;
    let storeCpuMs = 0;
    let pureMs = 0;
    let pureCpuMs = 0;
    let n = 0;
    const direct = { answers: 0, cited: 0, citations: 0, won: 0, pages: new Set<string>() };
    for (let day = 0; day < days; day++) {
      const items: ReturnType<typeof syntheticAnswer>[] = [];
      for (let p = 0; p < PROMPTS; p++)
        for (let m = 0; m < 5; m++) for (let l = 0; l < 3; l++) items.push(syntheticAnswer(rand, w.ctx.org_id, promptIds, p, m, l, day));
      const [, ms, cpuMs] = await timeCpu(async () => {
        for (let i = 0; i < items.length; i += 1000) {
          const res = await answers.importAnswers(
            w.ctx,
            items.slice(i, i + 1000).map(({ org_id: _o, origin: _g, ...rest }) => rest),
          );
          if (res.rejected > 0) throw new Error(`rejected: ${JSON.stringify(res.results.find((r) => r.status === 'rejected'))}`);
        }
      });
      storeMs += ms;
      storeCpuMs += cpuMs;
      // Baseline: the pure in-memory fold of the same answers (facts and every row update), fresh rows per day.
      const memory = memoryDocs();
      const [facts, pure, pureCpu] = await timeCpu(async () => {
        // Batched as the projection batches a transaction's answers (1,000 per import call).
        const out = [];
        for (let i = 0; i < items.length; i += 1000) {
          const batch = items.slice(i, i + 1000).map((a) => answerFacts(a, context));
          await addToRows(memory, w.ctx.org_id, batch, (p) => promptTags.get(p) ?? []);
          out.push(...batch);
        }
        return out;
      });
      pureMs += pure;
      pureCpuMs += pureCpu;
      for (const f of facts) {
        direct.answers++;
        if (f.citations.length) direct.cited++;
        direct.citations += f.citations.length;
        if (f.won) direct.won++;
        for (const c of f.citations) direct.pages.add(c.page);
      }
      n += items.length;
      process.stdout.write(`  imported ${day + 1}/${days} days (${n} answers, ${Math.round(n / (storeMs / 1000))} answers/s)\r`);
    }
    const rate = n / (storeMs / 1000);
    const size = statSync(join(dir, 'analytics.db')).size;
    console.log(
      `\nimport: ${n} answers (${days} days x ${perDay}) in ${(storeMs / 1000).toFixed(1)} s = ${Math.round(rate)} answers/s end to end (pure in-memory fold: ${Math.round(n / (pureMs / 1000))} answers/s, ratio ${(storeMs / pureMs).toFixed(1)}x); store ${(size / 1e6).toFixed(0)} MB in ${w.pageSize / 1024} KB pages`,
    );
    console.log(
      `        CPU time: ${Math.round(n / (storeCpuMs / 1000))} answers per CPU-second end to end, pure fold ${Math.round(n / (pureCpuMs / 1000))} (ratio ${(storeCpuMs / pureCpuMs).toFixed(1)}x)`,
    );
    console.log(
      `        a year of ${PROMPTS * 15 * 365} answers at that rate: ${((PROMPTS * 15 * 365) / rate / 60).toFixed(0)} min (${(perDay / rate).toFixed(1)} s per daily slot)`,
    );
    const from = new Date(DAY0).toISOString().slice(0, 10);
    const to = new Date(DAY0 + (days - 1) * DAY_MS).toISOString().slice(0, 10);
    const [overview, overviewMs] = await time(() => reportsSvc.overview(w.ctx, { from, to }));
    const [pages, pagesMs] = await time(() => reportsSvc.sources(w.ctx, 'page', { from, to }));
    const [prompts, promptsMs] = await time(() => reportsSvc.prompts(w.ctx, { from, to }));
    const t = overview.totals;
    const same =
      t.answer_count === direct.answers &&
      t.cited_run_count === direct.cited &&
      t.cited_total === direct.citations &&
      t.won_count === direct.won &&
      pages.total_count === direct.pages.size &&
      prompts.total_count === PROMPTS;
    console.log(
      `        reports over the imported days: overview ${fmt(overviewMs)}, pages ${fmt(pagesMs)}, prompts ${fmt(promptsMs)}; totals against a direct scan of the answers: ${same ? 'equal' : 'DIFFER'}`,
    );
    if (!same) process.exitCode = 1;
    await thread?.close();
    await w.store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(`analytics bench: ${PROMPTS} prompts x 5 models x 3 locations x ${DAYS} days`);
const only = process.env.ONLY;
if (!only || only === 'fold') await foldRate();
if (!only || only === 'import') await importYear();
if (!only || only === 'reports') await reports();
