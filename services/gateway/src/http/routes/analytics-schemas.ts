import { Type, type TProperties, type TSchema } from '@sinclair/typebox';
import { Uuid } from '../schemas.js';

/** Response and query schemas shared by the analytics routes (rules 8, 9, 10). */

export const Ratio = Type.Object(
  {
    value: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], {
      description: 'unrounded fraction; null when the denominator is zero',
    }),
    display: Type.String({ description: 'percentage with one decimal, or n/a' }),
  },
  { $id: 'Ratio', description: 'A ratio (rule 9)' },
);
const R = Type.Ref('Ratio');

const TierCounts = Type.Object({ primary: Type.Integer(), tracked: Type.Integer(), secondary: Type.Integer() });

export const Totals = Type.Object(
  {
    answer_count: Type.Integer(),
    cited_run_count: Type.Integer({ description: 'D: answers with at least one citation' }),
    cited_total: Type.Integer({ description: 'S: citation instances' }),
    mentioned_run_count: Type.Integer(),
    mention_total: Type.Integer(),
    brand_mention_total: Type.Integer(),
    tracked_mention_total: Type.Integer(),
    won_count: Type.Integer(),
    lost_count: Type.Integer(),
    tier_runs: TierCounts,
    tier_citations: TierCounts,
  },
  { $id: 'AnalyticsTotals', description: 'The additive counts behind every ratio of the response' },
);

const Filters = Type.Object({
  prompt_id: Type.Optional(Type.String()),
  model: Type.Optional(Type.String()),
  location: Type.Optional(Type.String()),
  tag_id: Type.Optional(Type.String()),
});

export const ReportWindow = Type.Object(
  {
    from: Type.String({ format: 'date' }),
    to: Type.String({ format: 'date' }),
    days: Type.Integer(),
    timezone: Type.Literal('UTC'),
    filters: Filters,
  },
  { $id: 'ReportWindow', description: 'The effective window (inclusive UTC days) and filters' },
);

const LatestWindow = Type.Object({
  from: Type.Union([Type.String(), Type.Null()]),
  to: Type.Union([Type.String(), Type.Null()]),
  timezone: Type.Literal('UTC'),
  filters: Filters,
});

const envelopeFields = {
  totals: Type.Ref('AnalyticsTotals'),
  data_quality: Type.Union([Type.Literal('ok'), Type.Literal('no_data'), Type.Literal('low_sample')]),
  notes: Type.Array(Type.String()),
  definitions: Type.Record(Type.String(), Type.String()),
};

/** A report: the envelope of rule 8 plus the report's own fields. */
export const report = (id: string, fields: TProperties, description: string) =>
  Type.Object({ window: Type.Ref('ReportWindow'), ...envelopeFields, ...fields }, { $id: id, description });

const paged = { total_count: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() };

export const OverviewReport = report(
  'AnalyticsOverview',
  {
    metrics: Type.Object({
      cited_answer_rate: R,
      mention_rate: R,
      share_of_voice: R,
      owned_citation_rate: R,
      owned_citation_share: R,
      win_rate: R,
      loss_rate: R,
    }),
  },
  'Headline ratios of the window',
);

export const TierReport = report(
  'CitationTierReport',
  {
    tiers: Type.Array(
      Type.Object({
        tier: Type.Union([Type.Literal('primary'), Type.Literal('tracked'), Type.Literal('secondary')]),
        label: Type.String(),
        answers_citing: Type.Integer(),
        citations: Type.Integer(),
        citation_rate: R,
        citation_share: R,
      }),
    ),
  },
  'Citation rate (over D) and share (over S) per tier',
);

const sourceRow = (key: 'domain' | 'url') =>
  Type.Object({ [key]: Type.String(), answers_citing: Type.Integer(), citations: Type.Integer(), coverage: R, share: R });

export const DomainReport = report(
  'DomainReport',
  { ...paged, domains: Type.Array(sourceRow('domain')) },
  'Coverage and share per cited domain',
);
export const PageReport = report('PageReport', { ...paged, pages: Type.Array(sourceRow('url')) }, 'Coverage and share per cited page');

const TierName = Type.Union([Type.Literal('primary'), Type.Literal('tracked'), Type.Literal('secondary')]);
const nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

export const SourceRuleReport = report(
  'SourceRuleReport',
  {
    unmatched: Type.Object(
      { answers_citing: Type.Integer(), citations: Type.Integer(), coverage: R, share: R },
      { description: 'citations no tracked-source rule matched (External)' },
    ),
    ...paged,
    sources: Type.Array(
      Type.Object({
        source_id: Uuid,
        status: Type.Union([Type.Literal('active'), Type.Literal('deleted')], {
          description: 'deleted: the rule is gone; its rule fields are null',
        }),
        match_type: nullable(
          Type.Union([Type.Literal('domain'), Type.Literal('host'), Type.Literal('path_prefix'), Type.Literal('exact_url')]),
        ),
        pattern: nullable(Type.String()),
        tier: nullable(TierName),
        label: nullable(Type.String()),
        source_origin: nullable(Type.Union([Type.Literal('manual'), Type.Literal('import'), Type.Literal('published')])),
        answers_citing: Type.Integer(),
        citations: Type.Integer(),
        coverage: R,
        share: R,
      }),
    ),
  },
  'Coverage (over D) and share (over S) of the citations each tracked-source rule won',
);

export const RegistrableDomainReport = report(
  'RegistrableDomainReport',
  {
    ...paged,
    registrable_domains: Type.Array(
      Type.Object({
        registrable_domain: Type.String(),
        answers_citing: Type.Integer(),
        citations: Type.Integer(),
        coverage: R,
        share: R,
        hosts: Type.Array(Type.String(), { description: 'cited hosts under it in the window, most cited first' }),
      }),
    ),
  },
  'Coverage and share per registrable domain (hosts rolled up by the public suffix list)',
);

export const ShareOfVoiceReport = report(
  'ShareOfVoiceReport',
  {
    share_of_voice: R,
    other_brand_mention_total: Type.Integer({ description: 'mentions of brands that are not tracked (never named)' }),
    brands: Type.Array(
      Type.Object({
        brand_id: Type.Union([Uuid, Type.Null()], { description: 'competitor id; null for the organization' }),
        name: Type.String(),
        is_organization: Type.Boolean(),
        mentions: Type.Integer(),
        share_of_voice: R,
        tracked_share: R,
      }),
    ),
  },
  'Share of voice of the organization and each tracked competitor',
);

export const PromptReport = report(
  'PromptOutcomeReport',
  {
    prompts_won: Type.Integer(),
    prompts_lost: Type.Integer(),
    prompts_tied: Type.Integer(),
    ...paged,
    prompts: Type.Array(
      Type.Object({
        prompt_id: Uuid,
        name: Type.Union([Type.String(), Type.Null()]),
        answer_count: Type.Integer(),
        won_count: Type.Integer(),
        lost_count: Type.Integer(),
        win_rate: R,
        loss_rate: R,
        outcome: Type.Union([Type.Literal('won'), Type.Literal('lost'), Type.Literal('tied'), Type.Literal('none')]),
      }),
    ),
  },
  'Prompts won and lost over the window',
);

export const TimeseriesReport = report(
  'TimeseriesReport',
  {
    days: Type.Array(
      Type.Object({
        day: Type.String({ format: 'date' }),
        answer_count: Type.Integer(),
        cited_run_count: Type.Integer(),
        cited_total: Type.Integer(),
        mention_total: Type.Integer(),
        brand_mention_total: Type.Integer(),
        tracked_mention_total: Type.Integer(),
        won_count: Type.Integer(),
        lost_count: Type.Integer(),
        cited_answer_rate: R,
        share_of_voice: R,
        owned_citation_rate: R,
      }),
    ),
  },
  'Daily counts and ratios',
);

export const LatestAnswersReport = Type.Object(
  {
    window: LatestWindow,
    ...envelopeFields,
    ...paged,
    answers: Type.Array(
      Type.Object({
        answer_id: Uuid,
        prompt_id: Uuid,
        model: Type.String(),
        location: Type.String(),
        run_at: Type.String({ format: 'date-time' }),
        text: Type.String(),
        citations: Type.Array(
          Type.Object({
            url: Type.String(),
            normalized_url: Type.String(),
            domain: Type.String(),
            tier: Type.Union([Type.Literal('primary'), Type.Literal('tracked'), Type.Literal('secondary')]),
          }),
        ),
        mentions: Type.Array(
          Type.Object({
            brand_id: Type.Union([Uuid, Type.Null()]),
            name: Type.String(),
            is_organization: Type.Boolean(),
            count: Type.Integer(),
          }),
        ),
        other_brand_mention_count: Type.Integer(),
        won: Type.Boolean(),
        lost: Type.Boolean(),
        origin: Type.Union([Type.Literal('scheduled'), Type.Literal('import')]),
      }),
    ),
  },
  { $id: 'LatestAnswers', description: 'The latest answer per prompt, model and location whose run_at is in the window' },
);

export const Glossary = report(
  'AnalyticsGlossary',
  { terms: Type.Array(Type.Object({ term: Type.String(), definition: Type.String() })), rules: Type.Array(Type.String()) },
  'The vocabulary and the ten rules, in the envelope of rule 8: the default report window (the last 30 days, no filter) and the organization\u2019s totals over it; definitions maps each term to its definition',
);

const DateOrTime = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}(T.+)?$', description: 'YYYY-MM-DD or an ISO 8601 date-time' });
const filterQuery = {
  from: Type.Optional(DateOrTime),
  to: Type.Optional(DateOrTime),
  prompt_id: Type.Optional(Uuid),
  model: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  location: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  tag_id: Type.Optional(Uuid),
  order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
};
const pageQuery = {
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
  offset: Type.Integer({ minimum: 0, default: 0 }),
};

/** Query of a report: filters, sort (one of the report's keys; anything else is 400) and order; paged reports add limit and offset. */
export const reportQuery = (sortKeys: string[], options: { paged?: boolean } = {}) =>
  Type.Object(
    { ...filterQuery, sort: Type.Optional(Type.Union(sortKeys.map((k) => Type.Literal(k)))), ...(options.paged ? pageQuery : {}) },
    { additionalProperties: false },
  );
