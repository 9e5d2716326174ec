import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RpcClient } from '@kb/rpc';
import { errorResponses } from '../schemas.js';
import { callerOf } from '../auth-hook.js';
import {
  DomainReport,
  Glossary,
  OverviewReport,
  PageReport,
  PromptReport,
  Ratio,
  RegistrableDomainReport,
  SourceRuleReport,
  ReportWindow,
  ShareOfVoiceReport,
  TierReport,
  TimeseriesReport,
  Totals,
  reportQuery,
} from './analytics-schemas.js';

const tags = ['Analytics'];
const read = { auth: { credential: 'any', permission: 'read:analytics' } } as const;

/** The report RPCs answer a JSON document whose schema is the route's response schema. */
const parsed = async (reports: RpcClient, method: string, request: object, req: Parameters<typeof callerOf>[0]) =>
  JSON.parse((await reports.call<{ json: string }>(method, request, callerOf(req))).json) as Record<string, unknown>;

/** Analytics reports (spec 1, 2.9): every one carries window, totals, data_quality, notes and definitions. */
export function analyticsReportRoutes(reports: RpcClient): FastifyPluginAsyncTypebox {
  return async (app) => {
    for (const schema of [
      Ratio,
      Totals,
      ReportWindow,
      OverviewReport,
      TierReport,
      DomainReport,
      PageReport,
      SourceRuleReport,
      RegistrableDomainReport,
      ShareOfVoiceReport,
      PromptReport,
      TimeseriesReport,
      Glossary,
    ])
      app.addSchema(schema);

    const route = (
      path: string,
      method: string,
      query: ReturnType<typeof reportQuery>,
      responseId: string,
      summary: string,
      description: string,
    ) =>
      app.get(
        path,
        {
          config: read,
          schema: {
            tags,
            summary,
            description,
            querystring: query,
            response: { 200: Type.Ref(responseId), ...errorResponses(400, 401, 403) },
          },
        },
        async (req) => parsed(reports, method, req.query as object, req),
      );

    const windowDoc =
      'from and to are inclusive UTC days (YYYY-MM-DD, or a date-time whose day is taken); default: the 30 days ending today; at most 731 days. Filters: prompt_id, model, location, tag_id (the prompts carrying the tag).';

    route(
      '/org/analytics/overview',
      'Overview',
      reportQuery([]),
      'AnalyticsOverview',
      'Analytics overview',
      `Headline ratios. ${windowDoc}`,
    );
    route(
      '/org/analytics/citations',
      'CitationTiers',
      reportQuery(['tier', 'answers_citing', 'citations', 'citation_rate', 'citation_share']),
      'CitationTierReport',
      'Citation rate and share per tier',
      `Rate: answers citing the tier / D. Share: citations in the tier / S; shares sum to exactly 100%. ${windowDoc}`,
    );
    route(
      '/org/analytics/domains',
      'Domains',
      reportQuery(['domain', 'answers_citing', 'citations', 'coverage', 'share'], { paged: true }),
      'DomainReport',
      'Coverage and share per cited domain',
      `Default sort: citations, descending. ${windowDoc}`,
    );
    route(
      '/org/analytics/pages',
      'Pages',
      reportQuery(['url', 'answers_citing', 'citations', 'coverage', 'share'], { paged: true }),
      'PageReport',
      'Coverage and share per cited page',
      `Default sort: citations, descending. ${windowDoc}`,
    );
    route(
      '/org/analytics/sources',
      'SourceRules',
      reportQuery(['answers_citing', 'citations', 'coverage', 'share', 'pattern', 'tier'], { paged: true }),
      'SourceRuleReport',
      'Coverage and share per tracked-source rule',
      `Per tracked-source rule (the rule that won each citation by rule precedence): coverage = answers citing a URL it won / D, share = citations it won / S; unmatched holds the citations no rule matched. Rules in force are listed even when uncited. Default sort: citations, descending. ${windowDoc}`,
    );
    route(
      '/org/analytics/registrable-domains',
      'RegistrableDomains',
      reportQuery(['registrable_domain', 'answers_citing', 'citations', 'coverage', 'share'], { paged: true }),
      'RegistrableDomainReport',
      'Coverage and share per registrable domain',
      `Cited hosts rolled up to their registrable domain by the public suffix list (docs.example.com under example.com, news.example.co.uk under example.co.uk); an answer counts once per registrable domain. Default sort: citations, descending. ${windowDoc}`,
    );
    route(
      '/org/analytics/share-of-voice',
      'ShareOfVoice',
      reportQuery(['mentions', 'share_of_voice', 'tracked_share', 'name']),
      'ShareOfVoiceReport',
      'Share of voice per tracked brand',
      `mention instances / brand_mention_total; brands that are not tracked are counted but never named. ${windowDoc}`,
    );
    route(
      '/org/analytics/prompts',
      'Prompts',
      reportQuery(['answer_count', 'won_count', 'lost_count', 'win_rate', 'loss_rate', 'name'], { paged: true }),
      'PromptOutcomeReport',
      'Prompts won and lost',
      `Won and lost as the glossary defines them. Default sort: answer_count, descending. ${windowDoc}`,
    );
    route(
      '/org/analytics/timeseries',
      'Timeseries',
      reportQuery(['day', 'answer_count']),
      'TimeseriesReport',
      'Daily time series',
      `One row per day of the window. ${windowDoc}`,
    );

    app.get(
      '/org/analytics/glossary',
      {
        config: read,
        schema: {
          tags,
          summary: 'Analytics vocabulary',
          description:
            'Terms and rules, with window, totals, data_quality, notes and definitions like every analytics response (rule 8): the window is the default one reports use (the last 30 UTC days), the totals the organization\u2019s over it.',
          response: { 200: Type.Ref('AnalyticsGlossary'), ...errorResponses(401, 403) },
        },
      },
      async (req) => parsed(reports, 'Glossary', {}, req),
    );
  };
}
