import { errors, type Clock } from '@kb/platform';
import type { Store, Where } from '@kb/store';
import type { CallContext } from '@kb/rpc';
import { emptyCounts, mergeCounts, type Counts, type SourceMap } from '../domain/counts.js';
import { glossaryReport } from '../domain/glossary.js';
import {
  envelope,
  overviewReport,
  promptsReport,
  registrableDomainReport,
  ruleReport,
  shareOfVoiceReport,
  sortRows,
  sourceReport,
  tierReport,
  timeseriesReport,
  type Order,
  type LatestWindow,
  type ReportWindow,
} from '../domain/reports.js';
import { loadFoldContext, sourceRules } from '../projections/fold-context.js';
import {
  ALL,
  COUNT_EXTENTS,
  DAILY_COUNTS,
  DAILY_SOURCES,
  LATEST_ANSWERS,
  PROMPTS,
  PROMPT_COUNTS,
  PROMPT_OUTCOMES,
  countRowId,
  countsFromDayTotals,
  countsFromFigures,
  keepsDays,
  keepsMonthSources,
  monthOf,
  type PromptOutcomeDoc,
  type CountDoc,
  type CountExtentDoc,
  type CountRowKey,
  type PromptCountsDoc,
  type LatestAnswerDoc,
  type PromptDoc,
  type SourceDoc,
} from '../projections/collections.js';
import { tagRowPrompt } from '../projections/tag-rows.js';
import { cellRow, cellsDocId, inCells } from '../projections/prompt-cells.js';
import { sumSourceRows } from '../projections/source-rows.js';
import { sumOutcomeRows } from '../projections/outcome-rows.js';
import { withOpenDay } from '../projections/open-day.js';
import type { Page } from './context.js';
import { daysBetween, periodsOf } from '../domain/periods.js';

export interface ReportQuery {
  from?: string;
  to?: string;
  prompt_id?: string;
  model?: string;
  location?: string;
  tag_id?: string;
  sort?: string;
  order?: Order;
  limit?: number;
  offset?: number;
}

/** Longest window a report sums over. */
export const MAX_WINDOW_DAYS = 731;
export const DEFAULT_WINDOW_DAYS = 30;
const DAY_MS = 86_400_000;

const DATE = /^\d{4}-\d{2}-\d{2}$/;
function parseDay(value: string, field: string): string {
  const t = Date.parse(DATE.test(value) ? `${value}T00:00:00Z` : value);
  const day = Number.isNaN(t) ? '' : new Date(t).toISOString().slice(0, 10);
  // Years past 9999 format as +YYYYYY: not a day the counts can be keyed by.
  if (!DATE.test(day)) throw errors.validation(`${field} must be a date (YYYY-MM-DD) or date-time`, { details: { field } });
  return day;
}

/** The totals of rule 8 over the latest answers themselves. */
function latestTotals(docs: LatestAnswerDoc[]): Counts {
  const c = emptyCounts();
  for (const d of docs) {
    c.answer_count += 1;
    if (d.citations.length) c.cited_run_count += 1;
    c.cited_total += d.citations.length;
    for (const t of new Set(d.citations.map((x) => x.tier))) c.tier_runs[t] += 1;
    for (const x of d.citations) c.tier_citations[x.tier] += 1;
    let tracked = 0;
    for (const m of d.mentions) {
      tracked += m.count;
      const key = m.brand_id ?? 'org';
      c.brand_mentions[key] = (c.brand_mentions[key] ?? 0) + m.count;
      if (m.is_organization) {
        c.mention_total += m.count;
        c.mentioned_run_count += 1;
      }
    }
    c.tracked_mention_total += tracked;
    c.brand_mention_total += tracked + d.other_brand_mention_count;
    if (d.won) c.won_count += 1;
    if (d.lost) c.lost_count += 1;
  }
  return c;
}

/** Analytics reports, summed from the daily counts (rule 6). */
export function createReportsService(deps: { store: Store; clock: Clock }) {
  const { store, clock } = deps;

  function windowOf(q: ReportQuery): ReportWindow {
    const to = q.to ? parseDay(q.to, 'to') : clock.now().toISOString().slice(0, 10);
    const from = q.from
      ? parseDay(q.from, 'from')
      : new Date(Date.parse(`${to}T00:00:00Z`) - (DEFAULT_WINDOW_DAYS - 1) * DAY_MS).toISOString().slice(0, 10);
    if (from > to) throw errors.validation('from must not be after to', { details: { field: 'from' } });
    const days = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS + 1;
    if (days > MAX_WINDOW_DAYS) throw errors.validation(`the window spans at most ${MAX_WINDOW_DAYS} days`, { details: { field: 'from' } });
    const filters: ReportWindow['filters'] = {
      ...(q.prompt_id && { prompt_id: q.prompt_id }),
      ...(q.model && { model: q.model }),
      ...(q.location && { location: q.location }),
      ...(q.tag_id && { tag_id: q.tag_id }),
    };
    return { from, to, days, timezone: 'UTC', filters };
  }

  /** Prompt ids a filter selects, or null for "every prompt" (the roll-up rows). */
  async function promptScope(orgId: string, w: ReportWindow): Promise<string[] | null> {
    if (!w.filters.tag_id) return w.filters.prompt_id ? [w.filters.prompt_id] : null;
    const prompts = await store.find<PromptDoc>(PROMPTS, { where: { org_id: orgId, deleted: false } });
    const tagged = prompts.filter((p) => p.tags.includes(w.filters.tag_id!)).map((p) => p.id);
    return w.filters.prompt_id ? tagged.filter((id) => id === w.filters.prompt_id) : tagged;
  }

  /**
   * The prompt_id of the rows a report sums: the tag's own roll-up rows for a
   * tag filter (one row per period, whatever the tag's size) when the
   * organization's tag rows are complete; else each prompt of the filter, or
   * the roll-up over every prompt.
   */
  async function rowPrompts(orgId: string, w: ReportWindow): Promise<string[]> {
    if (w.filters.tag_id && !w.filters.prompt_id) {
      const extent = await store.get<CountExtentDoc>(COUNT_EXTENTS, orgId);
      if (extent?.tag_rows) return [tagRowPrompt(w.filters.tag_id)];
    }
    return (await promptScope(orgId, w)) ?? [ALL];
  }

  /** store.get memoised for one report: rows read by two of its parts are parsed once. */
  type Get = <T extends { id: string }>(collection: string, id: string) => Promise<T | undefined>;
  function memoGet(): Get {
    const seen = new Map<string, Promise<unknown>>();
    return <T extends { id: string }>(collection: string, id: string) => {
      const key = `${collection}\u0000${id}`;
      let p = seen.get(key);
      if (!p) seen.set(key, (p = store.get<T>(collection, id)));
      return p as Promise<T | undefined>;
    };
  }

  /**
   * One report's reads: documents by id (memoised) and count rows by key,
   * from a prompt's cells document where the organization keeps them there
   * (prompt-cells.ts; its extent says so, read once).
   */
  interface Reads {
    get: Get;
    count(key: CountRowKey): Promise<CountDoc | undefined>;
  }
  function memoReads(orgId: string): Reads {
    const get = memoGet();
    let cells: Promise<boolean> | undefined;
    const usesCells = () => (cells ??= get<CountExtentDoc>(COUNT_EXTENTS, orgId).then((e) => e?.prompt_cells === true));
    return {
      get,
      async count(key) {
        if (inCells(key) && (await usesCells())) return cellRow(await get<PromptCountsDoc>(PROMPT_COUNTS, cellsDocId(key)), key);
        return get<CountDoc>(DAILY_COUNTS, countRowId(key));
      },
    };
  }

  /**
   * The count rows a report sums: one per whole month of the window and one
   * per day left over at its ends, per prompt of a prompt or tag filter, read
   * by id, since each row's id is its key. With `scalar` (reports that need no
   * per-brand mentions), the edge days come from their month row's day_totals
   * when it keeps them (keepsDays: the roll-ups over every prompt and the tag
   * rows): one read per edge month instead of one per edge day. A prompt's own
   * source rows by model or location have no month twin: their day rows.
   */
  async function rows<T extends CountDoc | SourceDoc>(
    collection: string,
    orgId: string,
    w: ReportWindow,
    options: { reads?: Reads; scalar?: boolean } = {},
  ): Promise<T[]> {
    const reads = options.reads ?? memoReads(orgId);
    const { get } = reads;
    const prompts = await rowPrompts(orgId, w);
    if (prompts.length === 0) return [];
    const model = w.filters.model ?? ALL;
    const location = w.filters.location ?? ALL;
    const periods = periodsOf(w.from, w.to);
    const key = (prompt_id: string, day: string) => ({ org_id: orgId, day, prompt_id, model, location });
    const id = (prompt_id: string, day: string) => countRowId(key(prompt_id, day));
    if (collection === DAILY_COUNTS && !options.scalar) {
      const found = await Promise.all(prompts.flatMap((p) => periods.map((day) => reads.count(key(p, day)))));
      return found.filter((r): r is CountDoc => r !== undefined) as T[];
    }
    if (!(options.scalar && collection === DAILY_COUNTS)) {
      // The roll-up source month rows leave out the open day (open-day.ts): its row is read beside them.
      const rollUpPeriods = collection === DAILY_SOURCES ? withOpenDay(periods, await get<CountExtentDoc>(COUNT_EXTENTS, orgId)) : periods;
      // A prompt's source rows by model or location have no month twin: their day rows, every day of the window.
      const periodsFor = (prompt_id: string) =>
        collection !== DAILY_SOURCES
          ? periods
          : keepsDays({ prompt_id })
            ? rollUpPeriods
            : keepsMonthSources({ prompt_id, model, location })
              ? periods
              : daysBetween(w.from, w.to);
      const found = await Promise.all(prompts.flatMap((p) => periodsFor(p).map((day) => get<T>(collection, id(p, day)))));
      return found.filter((r): r is Awaited<T> => r !== undefined) as T[];
    }
    const months = periods.filter((p) => p.length === 7);
    const edgeDays = periods.filter((p) => p.length === 10);
    const edgeMonths = [...new Set(edgeDays.map(monthOf))];
    const out: CountDoc[] = [];
    await Promise.all(
      prompts.map(async (p) => {
        const [whole, edges] = await Promise.all([
          Promise.all(months.map((m) => reads.count(key(p, m)))),
          Promise.all(edgeMonths.map((m) => reads.count(key(p, m)))),
        ]);
        for (const doc of whole) if (doc) out.push(doc);
        const fallback: string[] = [];
        edgeMonths.forEach((month, i) => {
          const doc = edges[i];
          if (!doc) return;
          const days = edgeDays.filter((d) => d.startsWith(month));
          if (!doc.day_totals) return void fallback.push(...days);
          const c = emptyCounts();
          for (const d of days) {
            const figures = doc.day_totals[d];
            if (figures) countsFromDayTotals(figures, c);
          }
          out.push(c as CountDoc);
        });
        for (const doc of await Promise.all(fallback.map((d) => reads.count(key(p, d))))) if (doc) out.push(doc);
      }),
    );
    return out as T[];
  }

  /**
   * The time series' figures per day of the window, from the month rows' per-day
   * series: one read per month per prompt of the filter. A month row without one
   * (a prompt's own rows, see keepsDays, and rows folded before series existed)
   * falls back to that month's day rows (same sums, more reads).
   */
  async function dailySeries(orgId: string, w: ReportWindow, reads: Reads = memoReads(orgId)): Promise<Map<string, Counts>> {
    const days = daysBetween(w.from, w.to);
    const byDay = new Map(days.map((d) => [d, emptyCounts()]));
    const prompts = await rowPrompts(orgId, w);
    if (prompts.length === 0) return byDay;
    const model = w.filters.model ?? ALL;
    const location = w.filters.location ?? ALL;
    const months = [...new Set(days.map(monthOf))];
    const keys = prompts.flatMap((prompt_id) => months.map((month) => ({ prompt_id, month })));
    const docs = await Promise.all(keys.map((k) => reads.count({ org_id: orgId, day: k.month, prompt_id: k.prompt_id, model, location })));
    const legacy: CountRowKey[] = [];
    docs.forEach((doc, i) => {
      if (!doc) return;
      if (!doc.series) {
        const { prompt_id, month } = keys[i]!;
        for (const day of days) if (day.startsWith(month)) legacy.push({ org_id: orgId, day, prompt_id, model, location });
        return;
      }
      for (const [day, figures] of Object.entries(doc.series)) {
        const into = byDay.get(day);
        if (into) countsFromFigures(figures, into);
      }
    });
    for (const row of await Promise.all(legacy.map((key) => reads.count(key)))) {
      if (row) mergeCounts(byDay.get(row.day)!, row);
    }
    return byDay;
  }

  /** The count rows of a report's totals (every scalar count; no per-brand mentions). */
  const totalsRows = (orgId: string, w: ReportWindow, reads?: Reads) =>
    rows<CountDoc>(DAILY_COUNTS, orgId, w, { scalar: true, ...(reads && { reads }) });

  /** answers, won and lost per prompt over the window, from the per-organization outcome maps. */
  async function outcomesByPrompt(orgId: string, w: ReportWindow): Promise<Map<string, [number, number, number]>> {
    const model = w.filters.model ?? ALL;
    const location = w.filters.location ?? ALL;
    // Outcome month rows leave out the open day (open-day.ts): its row is read beside them.
    const periods = withOpenDay(periodsOf(w.from, w.to), await store.get<CountExtentDoc>(COUNT_EXTENTS, orgId));
    const docs = await Promise.all(
      periods.map((day) =>
        store.get<PromptOutcomeDoc>(PROMPT_OUTCOMES, countRowId({ org_id: orgId, day, prompt_id: ALL, model, location })),
      ),
    );
    return sumOutcomeRows(docs.filter((d): d is PromptOutcomeDoc => d !== undefined));
  }

  /** The source maps a report reads summed (the others stay empty); legacy when a row predates per-rule and registrable-domain counts. */
  const mergeSources = (docs: SourceDoc[], maps: readonly SourceMap[]) => sumSourceRows(docs, maps);
  const sum = (docs: CountDoc[]) => docs.reduce((acc, d) => mergeCounts(acc, d), emptyCounts());
  const order = (q: ReportQuery, fallback: Order): Order => q.order ?? fallback;
  const page = (q: ReportQuery): Page => ({ limit: q.limit ?? 50, offset: q.offset ?? 0 });

  return {
    async overview(ctx: CallContext, q: ReportQuery) {
      const w = windowOf(q);
      return overviewReport(w, sum(await totalsRows(ctx.org_id, w)));
    },

    async tiers(ctx: CallContext, q: ReportQuery) {
      const w = windowOf(q);
      return tierReport(w, sum(await totalsRows(ctx.org_id, w)), q.sort ?? 'tier', order(q, 'asc'));
    },

    async sources(ctx: CallContext, kind: 'domain' | 'page', q: ReportQuery) {
      const w = windowOf(q);
      const [counts, sources] = await Promise.all([totalsRows(ctx.org_id, w), rows<SourceDoc>(DAILY_SOURCES, ctx.org_id, w)]);
      const maps: SourceMap[] = kind === 'domain' ? ['domain_runs', 'domain_citations'] : ['page_runs', 'page_citations'];
      return sourceReport(kind, w, sum(counts), mergeSources(sources, maps).merged, q.sort ?? 'citations', order(q, 'desc'), page(q));
    },

    /** Rule 4 per tracked-source rule: coverage over D and share over S of the citations each rule won. */
    async sourceRules(ctx: CallContext, q: ReportQuery) {
      const w = windowOf(q);
      const [counts, sources, rules] = await Promise.all([
        totalsRows(ctx.org_id, w),
        rows<SourceDoc>(DAILY_SOURCES, ctx.org_id, w),
        sourceRules(store, ctx.org_id),
      ]);
      const { merged, legacy } = mergeSources(sources, ['rule_runs', 'rule_citations']);
      return ruleReport(w, sum(counts), merged, rules, legacy, q.sort ?? 'citations', order(q, 'desc'), page(q));
    },

    /** Coverage and share per registrable domain (hosts rolled up by the public suffix list). */
    async registrableDomains(ctx: CallContext, q: ReportQuery) {
      const w = windowOf(q);
      const [counts, sources] = await Promise.all([totalsRows(ctx.org_id, w), rows<SourceDoc>(DAILY_SOURCES, ctx.org_id, w)]);
      const { merged, legacy } = mergeSources(sources, ['site_runs', 'site_citations', 'domain_citations']);
      return registrableDomainReport(w, sum(counts), merged, legacy, q.sort ?? 'citations', order(q, 'desc'), page(q));
    },

    async shareOfVoice(ctx: CallContext, q: ReportQuery) {
      const w = windowOf(q);
      const [counts, context] = await Promise.all([rows<CountDoc>(DAILY_COUNTS, ctx.org_id, w), loadFoldContext(store, ctx.org_id)]);
      return shareOfVoiceReport(w, sum(counts), context.names, q.sort ?? 'mentions', order(q, 'desc'));
    },

    async prompts(ctx: CallContext, q: ReportQuery) {
      const w = windowOf(q);
      const sortKey = q.sort ?? 'answer_count';
      // Names are read for the page's prompts only, unless the list is sorted by them.
      const byName = sortKey === 'name';
      const [scope, totals, known, byPrompt] = await Promise.all([
        promptScope(ctx.org_id, w),
        totalsRows(ctx.org_id, w),
        byName ? store.find<PromptDoc>(PROMPTS, { where: { org_id: ctx.org_id } }) : [],
        outcomesByPrompt(ctx.org_id, w),
      ]);
      const names = new Map(known.map((p) => [p.id, p.name]));
      const inScope = scope && new Set(scope);
      const list = [...byPrompt]
        .filter(([prompt_id]) => !inScope || inScope.has(prompt_id))
        .map(([prompt_id, [answer_count, won_count, lost_count]]) => ({
          prompt_id,
          name: names.get(prompt_id) ?? null,
          counts: { answer_count, won_count, lost_count },
        }));
      const report = promptsReport(w, sum(totals), list, sortKey, order(q, 'desc'), page(q));
      if (!byName) {
        const docs = await Promise.all(report.prompts.map((r) => store.get<PromptDoc>(PROMPTS, r.prompt_id)));
        report.prompts.forEach((r, i) => {
          const doc = docs[i];
          r.name = doc && doc.org_id === ctx.org_id ? doc.name : null;
        });
      }
      return report;
    },

    async timeseries(ctx: CallContext, q: ReportQuery) {
      const w = windowOf(q);
      const reads = memoReads(ctx.org_id);
      const [totals, byDay] = await Promise.all([totalsRows(ctx.org_id, w, reads), dailySeries(ctx.org_id, w, reads)]);
      return timeseriesReport(
        w,
        sum(totals),
        [...byDay].map(([day, counts]) => ({ day, counts })),
        q.sort ?? 'day',
        order(q, 'asc'),
      );
    },

    /**
     * Rule 7: from and to filter each latest answer's run_at; a combination
     * whose latest answer is outside the window is hidden, never replaced by an
     * older answer (older ones are not kept).
     */
    async latestAnswers(ctx: CallContext, q: ReportQuery) {
      const from = q.from ? Date.parse(DATE.test(q.from) ? `${q.from}T00:00:00Z` : q.from) : Number.NEGATIVE_INFINITY;
      const to = q.to ? (DATE.test(q.to) ? Date.parse(`${q.to}T00:00:00Z`) + DAY_MS - 1 : Date.parse(q.to)) : Number.POSITIVE_INFINITY;
      if (Number.isNaN(from)) throw errors.validation('from must be a date or date-time', { details: { field: 'from' } });
      if (Number.isNaN(to)) throw errors.validation('to must be a date or date-time', { details: { field: 'to' } });
      if (from > to) throw errors.validation('from must not be after to', { details: { field: 'from' } });
      const where: Where = { org_id: ctx.org_id };
      if (q.prompt_id) where.prompt_id = q.prompt_id;
      if (q.model) where.model = q.model;
      if (q.location) where.location = q.location;
      const scope = q.tag_id
        ? await promptScope(ctx.org_id, { from: '', to: '', days: 0, timezone: 'UTC', filters: { tag_id: q.tag_id } })
        : null;
      let docs = await store.find<LatestAnswerDoc>(LATEST_ANSWERS, { where });
      docs = docs.filter((d) => {
        const t = Date.parse(d.run_at);
        return t >= from && t <= to && (!scope || scope.includes(d.prompt_id));
      });
      const sorted = sortRows(
        docs,
        { run_at: (d) => Date.parse(d.run_at), model: (d) => d.model, location: (d) => d.location, prompt_id: (d) => d.prompt_id },
        q.sort ?? 'run_at',
        order(q, 'desc'),
        (d) => d.id,
      );
      const p = page(q);
      const items = sorted.slice(p.offset, p.offset + p.limit).map(({ id: _id, org_id: _org, ...rest }) => rest);
      const counts = latestTotals(docs);
      const window: LatestWindow = {
        from: Number.isFinite(from) ? new Date(from).toISOString() : null,
        to: Number.isFinite(to) ? new Date(to).toISOString() : null,
        timezone: 'UTC',
        filters: {
          ...(q.prompt_id && { prompt_id: q.prompt_id }),
          ...(q.model && { model: q.model }),
          ...(q.location && { location: q.location }),
          ...(q.tag_id && { tag_id: q.tag_id }),
        },
      };
      return envelope(
        window,
        counts,
        [
          'Only the latest answer per prompt, model and location is kept; when it falls outside the window the combination is hidden.',
          'Brands that are not tracked are counted in other_brand_mention_count but not named.',
        ],
        {
          answer_count: 'Latest answers (one per prompt, model and location) whose run_at is inside the window.',
          totals: 'The same counts as the other reports, over the latest answers listed (all pages).',
        },
        { total_count: docs.length, limit: p.limit, offset: p.offset, answers: items },
      );
    },

    /** The vocabulary in the envelope of rule 8: the default window and the organization's totals over it. */
    async glossary(ctx: CallContext) {
      const w = windowOf({});
      return glossaryReport(w, sum(await totalsRows(ctx.org_id, w)));
    },
  };
}

export type ReportsService = ReturnType<typeof createReportsService>;
