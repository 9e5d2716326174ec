import { Type } from '@sinclair/typebox';
import { defineEvent, type EventData, type EventOf } from './define.js';
import { topics } from './topics.js';

const Uuid = Type.String({ format: 'uuid' });
const Timestamp = Type.String({ format: 'date-time' });
const an = topics.analytics;

/** An answer engine's model id (e.g. gpt-4o, sonar) and the location it was asked from. */
const ModelName = Type.String({ minLength: 1, maxLength: 100 });
const LocationName = Type.String({ minLength: 1, maxLength: 100 });
const Tier = Type.Union([Type.Literal('primary'), Type.Literal('tracked'), Type.Literal('secondary')]);

/**
 * One AI answer to one prompt, from one model, asked from one location, as the
 * facts analytics counts (schema 2). The answer's full text, its cited URLs as
 * spelled and in order, and the producer's brand list are not in the event: the
 * analytics service keeps them apart, keyed by answer id, only while the answer
 * is the latest of its prompt, model and location (spec rule 6), so neither the
 * event store nor the bus log holds the text of superseded answers. Schema 1
 * events (which carried text, citations and brands) are still folded on replay.
 */
export const answerCollected = defineEvent(
  topics.answers,
  'answer.collected',
  2,
  Type.Object({
    answer_id: Uuid,
    org_id: Uuid,
    prompt_id: Uuid,
    model: ModelName,
    location: LocationName,
    /** Collection time. */
    run_at: Timestamp,
    /** Distinct cited pages (normalised URLs) with their instance counts and the tier and rule that won them at collection. */
    cited: Type.Array(
      Type.Object({
        page: Type.String({ minLength: 1, maxLength: 4096 }),
        domain: Type.String({ minLength: 1, maxLength: 300 }),
        tier: Tier,
        /** The tracked-source rule that decided the tier; absent when none matched (secondary). */
        source_id: Type.Optional(Uuid),
        count: Type.Integer({ minimum: 1, maximum: 500 }),
      }),
      { maxItems: 500 },
    ),
    /** Mention instances per tracked brand ('org' or a competitor id) named, with the name it had then, in order of first mention. */
    tracked_mentions: Type.Array(
      Type.Object({
        key: Type.String({ minLength: 1, maxLength: 100 }),
        name: Type.String({ maxLength: 1000 }),
        count: Type.Integer({ minimum: 1 }),
      }),
      { maxItems: 500 },
    ),
    /** Mention instances of brands neither the organization nor tracked. */
    other_mentions: Type.Array(Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }), count: Type.Integer({ minimum: 1 }) }), {
      maxItems: 200,
    }),
    won: Type.Boolean(),
    lost: Type.Boolean(),
    origin: Type.Union([Type.Literal('scheduled'), Type.Literal('import')]),
    /** The scheduled run that collected it. */
    run_id: Type.Optional(Uuid),
  }),
);

const MatchType = Type.Union([Type.Literal('domain'), Type.Literal('host'), Type.Literal('path_prefix'), Type.Literal('exact_url')]);
const SourceOrigin = Type.Union([Type.Literal('manual'), Type.Literal('import'), Type.Literal('published')]);
const ruleFields = {
  source_id: Uuid,
  org_id: Uuid,
  match_type: MatchType,
  /** Normalised pattern (see the glossary's URL normalisation). */
  pattern: Type.String({ minLength: 1, maxLength: 2048 }),
  tier: Tier,
  label: Type.Optional(Type.String({ maxLength: 255 })),
  at: Timestamp,
};

export const trackedSourceCreated = defineEvent(
  an,
  'tracked_source.created',
  1,
  Type.Object({ ...ruleFields, source_origin: SourceOrigin }),
);
export const trackedSourceUpdated = defineEvent(an, 'tracked_source.updated', 1, Type.Object(ruleFields));
export const trackedSourceDeleted = defineEvent(
  an,
  'tracked_source.deleted',
  1,
  Type.Object({ source_id: Uuid, org_id: Uuid, at: Timestamp }),
);

const Aliases = Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 50 });
const competitorFields = {
  competitor_id: Uuid,
  org_id: Uuid,
  name: Type.String({ minLength: 1, maxLength: 200 }),
  aliases: Aliases,
  website: Type.Optional(Type.String({ maxLength: 2048 })),
  at: Timestamp,
};
export const competitorCreated = defineEvent(an, 'competitor.created', 1, Type.Object(competitorFields));
export const competitorUpdated = defineEvent(an, 'competitor.updated', 1, Type.Object(competitorFields));
export const competitorDeleted = defineEvent(
  an,
  'competitor.deleted',
  1,
  Type.Object({ competitor_id: Uuid, org_id: Uuid, at: Timestamp }),
);

/** The organization's own brand as answers name it, and its websites (owned sources). */
export const brandSettingsUpdated = defineEvent(
  an,
  'brand_settings.updated',
  1,
  Type.Object({
    org_id: Uuid,
    brand_name: Type.String({ minLength: 1, maxLength: 200 }),
    aliases: Aliases,
    websites: Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), { maxItems: 50 }),
    at: Timestamp,
  }),
);

const Cadence = Type.Union([Type.Literal('hourly'), Type.Literal('daily'), Type.Literal('weekly')]);
export const runConfigurationUpdated = defineEvent(
  an,
  'run_configuration.updated',
  1,
  Type.Object({
    org_id: Uuid,
    enabled: Type.Boolean(),
    models: Type.Array(ModelName, { maxItems: 20 }),
    locations: Type.Array(LocationName, { maxItems: 20 }),
    cadence: Cadence,
    /** Prompts to run; empty with empty tag_ids means every prompt of the organization. */
    prompt_ids: Type.Array(Uuid),
    tag_ids: Type.Array(Uuid),
    at: Timestamp,
  }),
);

/** A scheduled run of one slot: every due prompt x model x location. */
export const promptRunStarted = defineEvent(
  an,
  'prompt_run.started',
  1,
  Type.Object({
    run_id: Uuid,
    org_id: Uuid,
    slot: Timestamp,
    planned: Type.Integer({ minimum: 0 }),
    models: Type.Array(ModelName, { maxItems: 20 }),
    at: Timestamp,
  }),
);
export const promptRunItemFailed = defineEvent(
  an,
  'prompt_run.item_failed',
  1,
  Type.Object({
    run_id: Uuid,
    org_id: Uuid,
    prompt_id: Uuid,
    model: ModelName,
    location: LocationName,
    error: Type.String({ maxLength: 1000 }),
    at: Timestamp,
  }),
);
/** error: why the whole run could not proceed (e.g. no answer engine configured). */
export const promptRunFinished = defineEvent(
  an,
  'prompt_run.finished',
  1,
  Type.Object({ run_id: Uuid, org_id: Uuid, error: Type.Optional(Type.String({ maxLength: 1000 })), at: Timestamp }),
);

export const analyticsEvents = [
  answerCollected,
  trackedSourceCreated,
  trackedSourceUpdated,
  trackedSourceDeleted,
  competitorCreated,
  competitorUpdated,
  competitorDeleted,
  brandSettingsUpdated,
  runConfigurationUpdated,
  promptRunStarted,
  promptRunItemFailed,
  promptRunFinished,
];

/** Every analytics event (answers, tracked sources, competitors, settings, prompt runs). */
export type AnalyticsEvent = EventOf<(typeof analyticsEvents)[number]>;

export type AnswerCollected = EventData<typeof answerCollected>;
export type TrackedSourceCreated = EventData<typeof trackedSourceCreated>;
export type TrackedSourceUpdated = EventData<typeof trackedSourceUpdated>;
export type CompetitorCreated = EventData<typeof competitorCreated>;
export type CompetitorUpdated = EventData<typeof competitorUpdated>;
export type BrandSettingsUpdated = EventData<typeof brandSettingsUpdated>;
export type RunConfigurationUpdated = EventData<typeof runConfigurationUpdated>;
export type PromptRunStarted = EventData<typeof promptRunStarted>;
export type PromptRunItemFailed = EventData<typeof promptRunItemFailed>;
