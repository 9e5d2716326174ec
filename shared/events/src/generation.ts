import { Type } from '@sinclair/typebox';
import { defineEvent, type EventData, type EventOf } from './define.js';
import { topics } from './topics.js';

/**
 * The published facts of the generation service: the contract publishing (review,
 * destinations, auto-publish), lifecycle webhooks and analytics' closed loop build
 * on. Generation may keep finer internal events of its own (builder steps,
 * brand-kit edits); these are the ones other services consume.
 *
 * A draft travels whole in every revision event, so a consumer never needs to ask
 * generation for it: publishing keeps its own copy of the latest revision. A draft
 * is capped well under Kafka's 1 MB message limit by the generation service.
 */
const Uuid = Type.String({ format: 'uuid' });
const Timestamp = Type.String({ format: 'date-time' });
const generation = topics.generation;

/** Where a sentence's claim comes from: a chunk of a content version, and the span quoted. */
export const Citation = Type.Object({
  content_id: Uuid,
  version_id: Uuid,
  /** `<version_id>:<chunk_index>`, as search results name chunks. */
  chunk_id: Type.String({ minLength: 1 }),
  quote: Type.String(),
  score: Type.Optional(Type.Number()),
});

export const Verdict = Type.Union([
  Type.Literal('supported'),
  Type.Literal('unsupported'),
  Type.Literal('contradicted'),
  Type.Literal('not_factual'),
]);

export const DraftSentence = Type.Object({
  index: Type.Integer({ minimum: 0 }),
  text: Type.String(),
  verdict: Verdict,
  citations: Type.Array(Citation),
  /** Why a sentence is not supported, in the fact checker's words (e.g. "number 12% differs from the source's 21%"). */
  reason: Type.Optional(Type.String()),
  /** The paragraph of its section the sentence stands in (0-based); absent: the section is one paragraph. */
  paragraph: Type.Optional(Type.Integer({ minimum: 0 })),
});

export const DraftSection = Type.Object({
  section_id: Type.String({ minLength: 1 }),
  title: Type.String(),
  sentences: Type.Array(DraftSentence),
});

export const StaleSource = Type.Object({
  content_id: Uuid,
  /** The version the draft cites. */
  version_id: Uuid,
  reason: Type.Union([Type.Literal('new_version'), Type.Literal('deleted')]),
  at: Timestamp,
});

/** The whole draft as of one revision. */
const draftFields = {
  draft_id: Uuid,
  org_id: Uuid,
  /** The run that produced it; absent for a draft assembled in the builder. */
  run_id: Type.Optional(Uuid),
  revision: Type.Integer({ minimum: 1 }),
  content_type_id: Uuid,
  /** The content type's kind, so a destination can pick a schema.org type (e.g. FAQPage for qa). */
  content_kind: Type.Union([Type.Literal('article'), Type.Literal('qa'), Type.Literal('summary'), Type.Literal('other')]),
  product_line_id: Type.Optional(Uuid),
  title: Type.String({ minLength: 1 }),
  description: Type.String(),
  format: Type.Union([Type.Literal('markdown'), Type.Literal('html')]),
  /** The rendered body in `format`, with [n] markers for citations. */
  body: Type.String(),
  sections: Type.Array(DraftSection),
  /** Prompt ids the piece targets (the run's geo_question_id and any others). */
  target_prompt_ids: Type.Array(Uuid),
  /** KB folders the draft drew on (for folder-scoped publishing); empty: the whole KB. */
  source_folder_ids: Type.Array(Uuid),
  /** Every content item cited, for drift detection and scope checks. */
  source_content_ids: Type.Array(Uuid),
  /** What the draft could not cover: a section or question the knowledge base holds nothing on, a length short of the minimum. */
  warnings: Type.Optional(Type.Array(Type.String())),
  /** verified: every factual sentence supported and nothing to warn of; needs_review: otherwise. */
  verification: Type.Union([Type.Literal('verified'), Type.Literal('needs_review')]),
  totals: Type.Object({
    sentences: Type.Integer({ minimum: 0 }),
    factual: Type.Integer({ minimum: 0 }),
    supported: Type.Integer({ minimum: 0 }),
    unsupported: Type.Integer({ minimum: 0 }),
  }),
  stale_sources: Type.Array(StaleSource),
  /** The content type asks for publishing as soon as the draft is verified. */
  auto_publish: Type.Boolean(),
  /** Destination ids chosen for auto-publish; empty: the organization's default set. */
  publish_destination_ids: Type.Array(Uuid),
  actor: Type.Optional(Type.String()),
  /** What produced this revision (builder steps, repairs); absent on a run's draft. */
  change: Type.Optional(
    Type.Object({
      kind: Type.Union([
        Type.Literal('outlined'),
        Type.Literal('section_generated'),
        Type.Literal('section_edited'),
        Type.Literal('sections_reordered'),
        Type.Literal('regenerated'),
      ]),
      section_id: Type.Optional(Type.String()),
      /** The run that regenerated the piece (kind regenerated). */
      run_id: Type.Optional(Type.String()),
    }),
  ),
  at: Timestamp,
};

export const draftCreated = defineEvent(generation, 'draft.created', 1, Type.Object(draftFields));
/** A builder step (section regenerated, edited, reordered) or a repair produced a new revision. */
export const draftRevised = defineEvent(generation, 'draft.revised', 1, Type.Object(draftFields));
/** A cited source got a new version or was deleted; carries the draft's whole stale list after the change. */
export const draftSourcesStale = defineEvent(
  generation,
  'draft.sources_stale',
  1,
  Type.Object({
    draft_id: Uuid,
    org_id: Uuid,
    revision: Type.Integer({ minimum: 1 }),
    stale_sources: Type.Array(StaleSource),
    at: Timestamp,
  }),
);
export const draftDeleted = defineEvent(generation, 'draft.deleted', 1, Type.Object({ draft_id: Uuid, org_id: Uuid, at: Timestamp }));

const RunState = Type.Union([
  Type.Literal('queued'),
  Type.Literal('retrieving'),
  Type.Literal('drafting'),
  Type.Literal('verifying'),
  Type.Literal('completed'),
  Type.Literal('failed'),
]);

export const generationRunRequested = defineEvent(
  generation,
  'generation_run.requested',
  1,
  Type.Object({
    run_id: Uuid,
    org_id: Uuid,
    content_type_id: Uuid,
    geo_question_id: Type.Optional(Uuid),
    product_line_id: Type.Optional(Uuid),
    instructions: Type.Optional(Type.String()),
    scope: Type.Object({
      folder_ids: Type.Array(Uuid),
      tags: Type.Array(Type.String()),
      category_ids: Type.Array(Uuid),
    }),
    /** Set when a content-engine rule started the run. */
    rule_id: Type.Optional(Uuid),
    /** The requesting key's KB folder scope (null or absent: the whole KB), kept so the run retrieves within it. */
    caller_folder_scope: Type.Optional(Type.Union([Type.Array(Uuid), Type.Null()])),
    actor: Type.Optional(Type.String()),
    at: Timestamp,
  }),
);
export const generationRunProgressed = defineEvent(
  generation,
  'generation_run.progressed',
  1,
  Type.Object({ run_id: Uuid, org_id: Uuid, state: RunState, progress: Type.Number({ minimum: 0, maximum: 1 }), at: Timestamp }),
);
export const generationRunCompleted = defineEvent(
  generation,
  'generation_run.completed',
  1,
  Type.Object({ run_id: Uuid, org_id: Uuid, draft_id: Uuid, geo_question_id: Type.Optional(Uuid), at: Timestamp }),
);
export const generationRunFailed = defineEvent(
  generation,
  'generation_run.failed',
  1,
  Type.Object({ run_id: Uuid, org_id: Uuid, reason: Type.String(), geo_question_id: Type.Optional(Uuid), at: Timestamp }),
);

/**
 * Generation's own configuration facts (internal: they stay in its store).
 * Each carries the whole state after the change.
 */
const Json = Type.Record(Type.String(), Type.Unknown());
export const brandKitSet = defineEvent(
  generation,
  'brand_kit.set',
  1,
  Type.Object({ org_id: Uuid, name: Type.String(), guidelines: Json, created: Type.Boolean(), at: Timestamp }),
  { internal: true },
);
const contentTypeFields = {
  content_type_id: Uuid,
  org_id: Uuid,
  name: Type.String({ minLength: 1 }),
  description: Type.String(),
  config: Json,
  at: Timestamp,
};
export const contentTypeCreated = defineEvent(generation, 'content_type.created', 1, Type.Object(contentTypeFields), { internal: true });
export const contentTypeUpdated = defineEvent(generation, 'content_type.updated', 1, Type.Object(contentTypeFields), { internal: true });
export const contentTypeDeleted = defineEvent(
  generation,
  'content_type.deleted',
  1,
  Type.Object({ content_type_id: Uuid, org_id: Uuid, at: Timestamp }),
  { internal: true },
);
const productLineFields = { product_line_id: Uuid, org_id: Uuid, name: Type.String({ minLength: 1 }), details: Json, at: Timestamp };
export const productLineCreated = defineEvent(generation, 'product_line.created', 1, Type.Object(productLineFields), { internal: true });
export const productLineUpdated = defineEvent(generation, 'product_line.updated', 1, Type.Object(productLineFields), { internal: true });
export const productLineDeleted = defineEvent(
  generation,
  'product_line.deleted',
  1,
  Type.Object({ product_line_id: Uuid, org_id: Uuid, at: Timestamp }),
  { internal: true },
);

/** Content engine rules: which prompts get a run, for which content type, on what cadence. */
const contentRuleFields = {
  rule_id: Uuid,
  org_id: Uuid,
  name: Type.String({ minLength: 1 }),
  content_type_id: Uuid,
  /** Prompts carrying this tag; absent: every prompt. */
  prompt_tag_id: Type.Optional(Uuid),
  product_line_id: Type.Optional(Uuid),
  cadence: Type.Union([Type.Literal('hourly'), Type.Literal('daily'), Type.Literal('weekly')]),
  enabled: Type.Boolean(),
  at: Timestamp,
};
export const contentRuleCreated = defineEvent(generation, 'content_rule.created', 1, Type.Object(contentRuleFields), { internal: true });
export const contentRuleUpdated = defineEvent(generation, 'content_rule.updated', 1, Type.Object(contentRuleFields), { internal: true });
export const contentRuleDeleted = defineEvent(
  generation,
  'content_rule.deleted',
  1,
  Type.Object({ rule_id: Uuid, org_id: Uuid, at: Timestamp }),
  { internal: true },
);
/** The rule started its runs for one cadence slot (at most once per slot, whatever the replicas). */
export const contentRuleFired = defineEvent(
  generation,
  'content_rule.fired',
  1,
  Type.Object({
    rule_id: Uuid,
    org_id: Uuid,
    slot: Timestamp,
    run_ids: Type.Array(Uuid),
    skipped: Type.Optional(Type.String()),
    at: Timestamp,
  }),
  { internal: true },
);

export const generationEvents = [
  contentRuleCreated,
  contentRuleUpdated,
  contentRuleDeleted,
  contentRuleFired,
  brandKitSet,
  contentTypeCreated,
  contentTypeUpdated,
  contentTypeDeleted,
  productLineCreated,
  productLineUpdated,
  productLineDeleted,
  draftCreated,
  draftRevised,
  draftSourcesStale,
  draftDeleted,
  generationRunRequested,
  generationRunProgressed,
  generationRunCompleted,
  generationRunFailed,
];

/** Every generation event (rules, brand kit, content types, product lines, drafts, runs). */
export type GenerationEvent = EventOf<(typeof generationEvents)[number]>;

export type DraftRevision = EventData<typeof draftCreated>;
export type DraftSourcesStale = EventData<typeof draftSourcesStale>;
export type DraftDeleted = EventData<typeof draftDeleted>;
export type GenerationRunRequested = EventData<typeof generationRunRequested>;
export type GenerationRunProgressed = EventData<typeof generationRunProgressed>;
export type GenerationRunCompleted = EventData<typeof generationRunCompleted>;
export type GenerationRunFailed = EventData<typeof generationRunFailed>;
export type BrandKitSet = EventData<typeof brandKitSet>;
export type ContentTypeCreated = EventData<typeof contentTypeCreated>;
export type ProductLineCreated = EventData<typeof productLineCreated>;
export type ContentRuleCreated = EventData<typeof contentRuleCreated>;
export type ContentRuleFired = EventData<typeof contentRuleFired>;
