import { errors } from '@kb/platform';
import type { UnaryHandler } from '@kb/rpc';
import type { AnswersService } from '../app/answers.js';
import { UNPARSEABLE } from '../domain/answer-input.js';
import type { ReportQuery, ReportsService } from '../app/reports.js';
import type { TrackedSourcesService, SourceRuleInput } from '../app/tracked-sources.js';
import type { CompetitorsService, CompetitorInput } from '../app/competitors.js';
import type { SettingsService, RunConfigurationInput } from '../app/settings.js';
import type { Scheduler } from '../scheduler/scheduler.js';

const page = (r: { limit?: number; offset?: number }, fallback = 50) => ({ limit: r.limit || fallback, offset: r.offset ?? 0 });

export function answerHandlers(answers: AnswersService): Record<string, UnaryHandler> {
  return {
    ImportAnswers: (r: { items_json?: string[] }, ctx) =>
      answers.importAnswers(
        ctx,
        (r.items_json ?? []).map((text) => {
          try {
            return JSON.parse(text) as unknown;
          } catch {
            // The item is reported as invalid, like any other bad item.
            return UNPARSEABLE;
          }
        }),
      ),
  };
}

export function reportHandlers(reports: ReportsService): Record<string, UnaryHandler> {
  const json = (value: unknown) => ({ json: JSON.stringify(value) });
  const q = (r: ReportQuery) => r;
  return {
    Overview: async (r: ReportQuery, ctx) => json(await reports.overview(ctx, q(r))),
    CitationTiers: async (r: ReportQuery, ctx) => json(await reports.tiers(ctx, q(r))),
    Domains: async (r: ReportQuery, ctx) => json(await reports.sources(ctx, 'domain', q(r))),
    Pages: async (r: ReportQuery, ctx) => json(await reports.sources(ctx, 'page', q(r))),
    ShareOfVoice: async (r: ReportQuery, ctx) => json(await reports.shareOfVoice(ctx, q(r))),
    Prompts: async (r: ReportQuery, ctx) => json(await reports.prompts(ctx, q(r))),
    Timeseries: async (r: ReportQuery, ctx) => json(await reports.timeseries(ctx, q(r))),
    LatestAnswers: async (r: ReportQuery, ctx) => json(await reports.latestAnswers(ctx, q(r))),
    SourceRules: async (r: ReportQuery, ctx) => json(await reports.sourceRules(ctx, q(r))),
    RegistrableDomains: async (r: ReportQuery, ctx) => json(await reports.registrableDomains(ctx, q(r))),
    Glossary: async (_r: unknown, ctx) => json(await reports.glossary(ctx)),
  };
}

const ruleInput = (r: Partial<SourceRuleInput> | undefined): SourceRuleInput => {
  if (!r) throw errors.validation('rule is required');
  return { match_type: r.match_type ?? '', pattern: r.pattern ?? '', tier: r.tier ?? '', ...(r.label !== undefined && { label: r.label }) };
};

export function trackedSourceHandlers(sources: TrackedSourcesService): Record<string, UnaryHandler> {
  return {
    ListTrackedSources: (r: { limit?: number; offset?: number }, ctx) => sources.list(ctx, page(r)),
    GetTrackedSource: (r: { source_id: string }, ctx) => sources.get(ctx, r.source_id),
    CreateTrackedSource: (r: SourceRuleInput, ctx) => sources.create(ctx, ruleInput(r)),
    UpdateTrackedSource: (r: { source_id: string; rule?: SourceRuleInput }, ctx) => sources.update(ctx, r.source_id, ruleInput(r.rule)),
    DeleteTrackedSource: async (r: { source_id: string }, ctx) => {
      await sources.remove(ctx, r.source_id);
      return {};
    },
    BatchImportTrackedSources: (r: { sources?: SourceRuleInput[] }, ctx) => sources.batchImport(ctx, (r.sources ?? []).map(ruleInput)),
  };
}

const competitorInput = (c: Partial<CompetitorInput> | undefined): CompetitorInput => {
  if (!c) throw errors.validation('competitor is required');
  return { name: c.name ?? '', aliases: c.aliases ?? [], ...(c.website !== undefined && { website: c.website }) };
};

export function competitorHandlers(competitors: CompetitorsService): Record<string, UnaryHandler> {
  return {
    ListCompetitors: (r: { limit?: number; offset?: number }, ctx) => competitors.list(ctx, page(r)),
    GetCompetitor: (r: { competitor_id: string }, ctx) => competitors.get(ctx, r.competitor_id),
    CreateCompetitor: (r: CompetitorInput, ctx) => competitors.create(ctx, competitorInput(r)),
    UpdateCompetitor: (r: { competitor_id: string; competitor?: CompetitorInput }, ctx) =>
      competitors.update(ctx, r.competitor_id, competitorInput(r.competitor)),
    DeleteCompetitor: async (r: { competitor_id: string }, ctx) => {
      await competitors.remove(ctx, r.competitor_id);
      return {};
    },
    BatchImportCompetitors: (r: { competitors?: CompetitorInput[] }, ctx) =>
      competitors.batchImport(ctx, (r.competitors ?? []).map(competitorInput)),
    SuggestCompetitors: (r: { limit?: number }, ctx) => competitors.suggest(ctx, r.limit || 10),
  };
}

export function runConfigurationHandlers(settings: SettingsService, scheduler: Scheduler): Record<string, UnaryHandler> {
  return {
    GetBrandSettings: (_r, ctx) => settings.brand(ctx),
    UpdateBrandSettings: (r: { brand_name?: string; aliases?: string[]; websites?: string[] }, ctx) =>
      settings.setBrand(ctx, { brand_name: r.brand_name ?? '', aliases: r.aliases ?? [], websites: r.websites ?? [] }),
    GetRunConfiguration: async (_r, ctx) => ({ ...(await settings.runConfiguration(ctx)), engine_configured: scheduler.engineConfigured }),
    UpdateRunConfiguration: async (r: RunConfigurationInput, ctx) => ({
      ...(await settings.setRunConfiguration(ctx, r)),
      engine_configured: scheduler.engineConfigured,
    }),
    ListRuns: (r: { limit?: number; offset?: number }, ctx) => settings.listRuns(ctx, page(r)),
    TriggerRun: async (_r, ctx) => {
      const run = await scheduler.runNow(ctx.org_id);
      return run ? { run } : {};
    },
  };
}
