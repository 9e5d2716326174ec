import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import type { ServiceClients } from '../../clients.js';
import { readScoped, type ItemMessage } from '../intake-support.js';
import { DraftSection, StaleSource } from '@kb/events';
import { Timestamp, Uuid, errorResponses, OrgPagination } from '../schemas.js';
import { errors } from '@kb/platform';
import { callerOf } from '../auth-hook.js';

/**
 * Verified generation (issue 9): brand kit, content types, product lines,
 * generation runs, drafts and the fact checker, all served by the generation
 * service; the prompt's generation run history composes prompts
 * (knowledge-base) with runs (generation).
 */

const Text = (max: number, description?: string) => Type.String({ maxLength: max, ...(description && { description }) });
const Texts = (description: string, maxItems = 50, maxLength = 500) =>
  Type.Array(Type.String({ minLength: 1, maxLength }), { maxItems, description });

const Guidelines = Type.Object(
  {
    voice: Type.Optional(Text(2000, 'how the brand sounds, e.g. "confident, plain-spoken"')),
    tone: Type.Optional(Text(2000)),
    persona: Type.Optional(Text(2000, 'who is speaking')),
    audience: Type.Optional(Text(2000, 'who is reading')),
    reading_level: Type.Optional(Text(2000, 'e.g. "grade 8" or "expert"')),
    do_rules: Type.Optional(Texts('rules to follow')),
    dont_rules: Type.Optional(Texts('rules to avoid breaking')),
    preferred_terms: Type.Optional(
      Type.Array(
        Type.Object(
          {
            term: Type.String({ minLength: 1, maxLength: 200 }),
            instead_of: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 20 }),
          },
          { additionalProperties: false },
        ),
        { maxItems: 100, description: 'generated text writes `term` wherever a source says one of `instead_of`' },
      ),
    ),
    banned_terms: Type.Optional(Texts('a sentence with one of these is never used')),
    formatting: Type.Optional(
      Type.Object(
        {
          max_sentence_words: Type.Optional(Type.Integer({ minimum: 5, maximum: 200, description: 'longer sentences are not used' })),
          heading_case: Type.Optional(Type.Union([Type.Literal('title'), Type.Literal('sentence')])),
          bullet_lists: Type.Optional(Type.Boolean({ description: 'each section as a bulleted list instead of a paragraph' })),
        },
        { additionalProperties: false },
      ),
    ),
    example_passages: Type.Optional(Texts('passages in the house style (given to the chat model)', 20, 5000)),
  },
  { additionalProperties: false, $id: 'BrandKitGuidelines', description: 'closed: an unknown key is a 400 naming it' },
);

const BrandKit = Type.Object(
  { name: Type.String(), guidelines: Type.Ref('BrandKitGuidelines'), created_at: Timestamp, updated_at: Timestamp },
  { $id: 'BrandKit' },
);
const BrandKitPut = Type.Object(
  { name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), guidelines: Type.Ref('BrandKitGuidelines') },
  { additionalProperties: false },
);
const GuidelinesPatch = Type.Object(
  Object.fromEntries(Object.entries(Guidelines.properties).map(([k, v]) => [k, Type.Optional(Type.Union([v, Type.Null()]))])),
  { additionalProperties: false },
);
const BrandKitPatch = Type.Object(
  { name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), guidelines: Type.Optional(GuidelinesPatch) },
  { additionalProperties: false, description: 'each guideline key given replaces that key; null removes it' },
);

const Section = Type.Object(
  { title: Type.String({ minLength: 1, maxLength: 200 }), instructions: Type.Optional(Type.String({ maxLength: 2000 })) },
  { additionalProperties: false },
);
const ConfigProps = {
  kind: Type.Union([Type.Literal('article'), Type.Literal('qa'), Type.Literal('summary'), Type.Literal('other')], {
    description: 'default article; lets a destination pick a schema.org type',
  }),
  format: Type.Union([Type.Literal('markdown'), Type.Literal('html')], { description: 'default markdown' }),
  sections: Type.Array(Section, { minItems: 1, maxItems: 20, description: 'default one "Overview" section' }),
  target_length: Type.Object(
    { min_words: Type.Integer({ minimum: 0, maximum: 20000 }), max_words: Type.Integer({ minimum: 10, maximum: 20000 }) },
    { additionalProperties: false, description: 'default 50 to 600 words' },
  ),
  citation_style: Type.Union([Type.Literal('numeric'), Type.Literal('none')], { description: '[n] markers in the body (default) or none' }),
  unsupported_sentences: Type.Union([Type.Literal('remove'), Type.Literal('block')], {
    description: 'a sentence still unsupported after one repair is removed (default), or kept and the draft marked needs_review',
  }),
  auto_publish: Type.Boolean({ description: 'publish as soon as a draft is verified (default false)' }),
  publish_destination_ids: Type.Array(Uuid, { maxItems: 20 }),
};
const ContentTypeConfigInput = Type.Object(
  {
    ...Object.fromEntries(Object.entries(ConfigProps).map(([k, v]) => [k, Type.Optional(v)])),
    target_length: Type.Optional(
      Type.Object(
        {
          min_words: Type.Optional(Type.Integer({ minimum: 0, maximum: 20000, description: 'default 0' })),
          max_words: Type.Optional(Type.Integer({ minimum: 10, maximum: 20000, description: 'default 600' })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  {
    additionalProperties: false,
    description: 'closed: an unknown key is a 400 naming it',
  },
);
const ContentType = Type.Object(
  {
    content_type_id: Uuid,
    name: Type.String(),
    description: Type.String(),
    config: Type.Object(ConfigProps),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'ContentType' },
);
const ContentTypeInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.String({ maxLength: 5000 })),
    config: Type.Optional(ContentTypeConfigInput),
  },
  { additionalProperties: false },
);

const ProductLine = Type.Object(
  {
    product_line_id: Uuid,
    name: Type.String(),
    details: Type.Record(Type.String(), Type.Unknown()),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'ProductLine' },
);
const ProductLineInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    details: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'any JSON object (at most 32 KB)' })),
  },
  { additionalProperties: false },
);

const Scope = Type.Object(
  {
    folder_ids: Type.Optional(
      Type.Array(Uuid, { maxItems: 50, description: 'KB folders to draw on (within a folder-scoped key’s folders)' }),
    ),
    tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50, description: 'tags by id or name' })),
    category_ids: Type.Optional(Type.Array(Uuid, { maxItems: 20 })),
  },
  { additionalProperties: false },
);
const RunState = Type.Union(['queued', 'retrieving', 'drafting', 'verifying', 'completed', 'failed'].map((s) => Type.Literal(s)));
const Run = Type.Object(
  {
    run_id: Uuid,
    content_type_id: Uuid,
    geo_question_id: Type.Union([Uuid, Type.Null()]),
    product_line_id: Type.Union([Uuid, Type.Null()]),
    instructions: Type.Union([Type.String(), Type.Null()]),
    scope: Type.Object({ folder_ids: Type.Array(Uuid), tags: Type.Array(Type.String()), category_ids: Type.Array(Uuid) }),
    rule_id: Type.Union([Uuid, Type.Null()]),
    state: RunState,
    progress: Type.Number({ minimum: 0, maximum: 1 }),
    reason: Type.Union([Type.String(), Type.Null()], { description: 'why a failed run failed' }),
    draft_id: Type.Union([Uuid, Type.Null()], { description: 'the draft a completed run produced' }),
    actor: Type.Union([Type.String(), Type.Null()]),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'GenerationRun' },
);
const RunInput = Type.Object(
  {
    content_type_id: Uuid,
    geo_question_id: Type.Optional({ ...Uuid, description: 'the prompt the piece answers' }),
    product_line_id: Type.Optional(Uuid),
    instructions: Type.Optional(Type.String({ maxLength: 4000 })),
    scope: Type.Optional(Scope),
  },
  { additionalProperties: false },
);

const Draft = Type.Object(
  {
    draft_id: Uuid,
    run_id: Type.Optional(Uuid),
    revision: Type.Integer(),
    content_type_id: Uuid,
    content_kind: Type.String(),
    product_line_id: Type.Optional(Uuid),
    title: Type.String(),
    description: Type.String(),
    format: Type.String(),
    body: Type.String({ description: 'rendered in `format`, citing chunks as [n]' }),
    sections: Type.Array(DraftSection),
    target_prompt_ids: Type.Array(Uuid),
    source_folder_ids: Type.Array(Uuid),
    source_content_ids: Type.Array(Uuid),
    verification: Type.Union([Type.Literal('verified'), Type.Literal('needs_review')]),
    totals: Type.Object({ sentences: Type.Integer(), factual: Type.Integer(), supported: Type.Integer(), unsupported: Type.Integer() }),
    stale_sources: Type.Array(StaleSource, { description: 'cited sources that changed or were deleted since' }),
    auto_publish: Type.Boolean(),
    publish_destination_ids: Type.Array(Uuid),
    change: Type.Optional(
      Type.Object(
        { kind: Type.String(), section_id: Type.Optional(Type.String()) },
        { description: 'the builder step that made this revision' },
      ),
    ),
    created_at: Timestamp,
    at: Timestamp,
  },
  { $id: 'Draft' },
);

const Support = Type.Object({ content_id: Uuid, version_id: Uuid, chunk_id: Type.String(), quote: Type.String(), score: Type.Number() });
const VerifyResult = Type.Object(
  {
    sentences: Type.Array(
      Type.Object({
        index: Type.Integer(),
        text: Type.String(),
        start: Type.Integer({ description: 'offset in the text (UTF-16 code units)' }),
        end: Type.Integer({ description: 'end offset, exclusive' }),
        verdict: Type.Union(['supported', 'unsupported', 'contradicted', 'not_factual'].map((v) => Type.Literal(v))),
        reason: Type.Optional(Type.String({ description: 'why the sentence is not supported' })),
        support: Type.Array(Support),
      }),
    ),
    totals: Type.Object({ sentences: Type.Integer(), factual: Type.Integer(), supported: Type.Integer(), unsupported: Type.Integer() }),
    supported_ratio: Type.Object({ value: Type.Union([Type.Number(), Type.Null()]), display: Type.String() }),
  },
  { $id: 'VerifyResult' },
);
const VerifyInput = Type.Object(
  {
    text: Type.String({ minLength: 1, maxLength: 20000, pattern: '\\S' }),
    folder_ids: Type.Optional(Type.Array(Uuid, { maxItems: 50 })),
    tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50 })),
  },
  { additionalProperties: false },
);

const read = { auth: { credential: 'any', permission: 'read:kb' } } as const;
const write = { auth: { credential: 'any', permission: 'generate:content' } } as const;
const generate = { auth: { credential: 'any', permission: 'generate:content' }, meter: { operation: 'generation' } } as const;
const verifyMeter = { auth: { credential: 'any', permission: 'read:kb' }, meter: { operation: 'query' } } as const;

const RunListQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
    offset: Type.Integer({ minimum: 0, default: 0 }),
    state: Type.Optional(RunState),
    geo_question_id: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);

const GenerateBody = Type.Object(
  {
    type: Type.Union([Type.Literal('summary'), Type.Literal('reply')], {
      description: 'summary: of the content items in content_ids; reply: to `question`, from the knowledge base',
    }),
    content_ids: Type.Optional(Type.Array(Uuid, { minItems: 1, maxItems: 10, description: 'summary: the items to summarise' })),
    question: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, pattern: '\\S', description: 'reply: the question' })),
    category_id: Type.Optional(Uuid),
    topic_id: Type.Optional(Uuid),
    max_sentences: Type.Optional(Type.Integer({ minimum: 1, maximum: 20, default: 5 })),
  },
  { additionalProperties: false },
);
const GenerateResult = Type.Object(
  {
    type: Type.String(),
    question: Type.Optional(Type.String()),
    text: Type.String({ description: 'the summary or reply, citing chunks as [n] = citations[n - 1]' }),
    grounded: Type.Boolean({ description: 'false when the knowledge base held nothing to say it from' }),
    sentences: Type.Array(
      Type.Object({
        index: Type.Integer(),
        text: Type.String(),
        verdict: Type.String(),
        citations: Type.Array(
          Type.Object({
            content_id: Uuid,
            version_id: Uuid,
            chunk_id: Type.String(),
            quote: Type.String(),
            score: Type.Optional(Type.Number()),
          }),
        ),
      }),
    ),
    citations: Type.Array(Type.Object({ n: Type.Integer(), content_id: Uuid, version_id: Uuid, chunk_id: Type.String() })),
  },
  { $id: 'GenerateResult' },
);

export function generationRoutes(
  clients: Pick<ServiceClients, 'generation' | 'prompts' | 'ingest' | 'kbTree' | 'publishingContent'>,
): FastifyPluginAsyncTypebox {
  const { generation, prompts } = clients;
  return async (app) => {
    app.addSchema(GenerateResult);
    app.addSchema(Guidelines);
    app.addSchema(BrandKit);
    app.addSchema(ContentType);
    app.addSchema(ProductLine);
    app.addSchema(Run);
    app.addSchema(Draft);
    app.addSchema(VerifyResult);

    const call = async <T = unknown>(method: string, body: unknown, req: Parameters<typeof callerOf>[0]): Promise<T> => {
      const r = await generation.call<{ json?: string }>(method, { json: JSON.stringify(body ?? {}) }, callerOf(req));
      return (r.json ? JSON.parse(r.json) : undefined) as T;
    };
    type AutoPublish = { auto_publish?: unknown; publish_destination_ids?: unknown } | undefined;
    /**
     * Auto-publish with nobody to publish to is 422 where it is asked for (spec
     * section 7): when a content type switches it on, and when a run or an engine
     * rule will use such a content type. The publishing service says who would
     * publish (the named destinations, each enabled, or the default shared set).
     */
    const requirePublisher = async (req: Parameters<typeof callerOf>[0], config: AutoPublish) => {
      if (config?.auto_publish !== true) return;
      const ids = Array.isArray(config.publish_destination_ids) ? config.publish_destination_ids : [];
      await clients.publishingContent.call('CheckPublishers', { json: JSON.stringify({ destination_ids: ids }) }, callerOf(req));
    };
    const requirePublisherOf = async (req: Parameters<typeof callerOf>[0], contentTypeId: string) =>
      requirePublisher(req, (await call<{ config?: AutoPublish }>('GetContentType', { content_type_id: contentTypeId }, req)).config);
    const listed = async (method: string, body: unknown, req: Parameters<typeof callerOf>[0], reply: FastifyReply) => {
      const r = await call<{ items: unknown[]; total_count: number }>(method, body, req);
      void reply.header('x-total-count', String(r.total_count));
      return r.items;
    };

    // ---- Brand Kit ----
    const brand = ['Brand Kit'];
    app.get(
      '/org/brand-kit',
      {
        config: read,
        schema: {
          tags: brand,
          summary: 'The brand kit',
          description: '404 until one is set.',
          response: { 200: Type.Ref('BrandKit'), ...errorResponses(401, 403, 404) },
        },
      },
      async (req) => call('GetBrandKit', {}, req),
    );
    app.put(
      '/org/brand-kit',
      {
        config: write,
        schema: {
          tags: brand,
          summary: 'Create or replace the brand kit',
          description: 'One per organization; the guidelines given are the whole set. Generation applies them to every draft.',
          body: BrandKitPut,
          response: { 200: Type.Ref('BrandKit'), ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => call('PutBrandKit', req.body, req),
    );
    app.patch(
      '/org/brand-kit',
      {
        config: write,
        schema: {
          tags: brand,
          summary: 'Change some of the brand kit',
          body: BrandKitPatch,
          response: { 200: Type.Ref('BrandKit'), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req) => call('PatchBrandKit', req.body, req),
    );

    // ---- Content Types and Product Lines ----
    const crud = (
      path: string,
      param: 'content_type_id' | 'product_line_id',
      ref: string,
      input: typeof ContentTypeInput | typeof ProductLineInput,
      noun: string,
      methods: { list: string; get: string; create: string; update: string; remove: string },
      tag: string,
      /** Checks a create or replace body before it is sent (and the error codes it may answer). */
      check?: { run: (req: Parameters<typeof callerOf>[0], body: unknown) => Promise<void>; codes: readonly (404 | 422)[] },
    ) => {
      const Params = Type.Object({ [param]: Uuid });
      const checked = check?.codes ?? [];
      app.get(
        path,
        {
          config: read,
          schema: {
            tags: [tag],
            summary: `List ${noun}s`,
            description: 'Oldest first; the total is in X-Total-Count.',
            querystring: OrgPagination,
            response: { 200: Type.Array(Type.Ref(ref)), ...errorResponses(400, 401, 403) },
          },
        },
        async (req, reply) => listed(methods.list, req.query, req, reply),
      );
      app.post(
        path,
        {
          config: write,
          schema: {
            tags: [tag],
            summary: `Create a ${noun}`,
            body: input,
            response: { 201: Type.Ref(ref), ...errorResponses(400, 401, 403, ...checked) },
          },
        },
        async (req, reply) => {
          await check?.run(req, req.body);
          return reply.status(201).send(await call(methods.create, req.body, req));
        },
      );
      app.get(
        `${path}/:${param}`,
        {
          config: read,
          schema: {
            tags: [tag],
            summary: `Get a ${noun}`,
            params: Params,
            response: { 200: Type.Ref(ref), ...errorResponses(400, 401, 403, 404) },
          },
        },
        async (req) => call(methods.get, req.params, req),
      );
      app.put(
        `${path}/:${param}`,
        {
          config: write,
          schema: {
            tags: [tag],
            summary: `Replace a ${noun}`,
            params: Params,
            body: input,
            response: { 200: Type.Ref(ref), ...errorResponses(400, 401, 403, 404, ...checked.filter((c) => c !== 404)) },
          },
        },
        async (req) => {
          await check?.run(req, req.body);
          return call(methods.update, { ...(req.body as object), ...(req.params as object) }, req);
        },
      );
      app.delete(
        `${path}/:${param}`,
        {
          config: write,
          schema: {
            tags: [tag],
            summary: `Delete a ${noun}`,
            params: Params,
            response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
          },
        },
        async (req, reply) => {
          await call(methods.remove, req.params, req);
          return reply.status(204).send(null);
        },
      );
    };
    crud(
      '/org/content-types',
      'content_type_id',
      'ContentType',
      ContentTypeInput,
      'content type',
      {
        list: 'ListContentTypes',
        get: 'GetContentType',
        create: 'CreateContentType',
        update: 'UpdateContentType',
        remove: 'DeleteContentType',
      },
      'Content Types',
      { run: (req, body) => requirePublisher(req, (body as { config?: AutoPublish }).config), codes: [404, 422] },
    );
    crud(
      '/org/product-lines',
      'product_line_id',
      'ProductLine',
      ProductLineInput,
      'product line',
      {
        list: 'ListProductLines',
        get: 'GetProductLine',
        create: 'CreateProductLine',
        update: 'UpdateProductLine',
        remove: 'DeleteProductLine',
      },
      'Product Lines',
    );

    // ---- Content Generation ----
    const gen = ['Content Generation'];
    app.post(
      '/org/generation/runs',
      {
        config: generate,
        schema: {
          tags: gen,
          summary: 'Start a generation run',
          description:
            'Asynchronous: 202 with the queued run; poll GET /org/generation/runs/{run_id} for its state (queued, retrieving, drafting, verifying, completed, failed) and progress. ' +
            'Costs the generation credits up front (402 and no run when they are not there). 422 while the organization’s runs switch is off, ' +
            'and 422 no_publisher when the content type auto-publishes and nobody would publish (no destination named and enabled, no default shared one). ' +
            'A folder-scoped key draws only on its folders (403 on another folder).',
          body: RunInput,
          response: { 202: Type.Ref('GenerationRun'), ...errorResponses(400, 401, 402, 403, 404, 422) },
        },
      },
      async (req, reply) => {
        await requirePublisherOf(req, (req.body as { content_type_id: string }).content_type_id);
        return reply.status(202).send(await call('StartRun', req.body, req));
      },
    );
    app.get(
      '/org/generation/runs',
      {
        config: read,
        schema: {
          tags: gen,
          summary: 'List generation runs',
          description: 'Newest first; filter by state or prompt. The total is in X-Total-Count.',
          querystring: RunListQuery,
          response: { 200: Type.Array(Type.Ref('GenerationRun')), ...errorResponses(400, 401, 403) },
        },
      },
      async (req, reply) => listed('ListRuns', req.query, req, reply),
    );
    app.get(
      '/org/generation/runs/:run_id',
      {
        config: read,
        schema: {
          tags: gen,
          summary: 'A generation run: state, progress, reason, draft',
          params: Type.Object({ run_id: Uuid }),
          response: { 200: Type.Ref('GenerationRun'), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req) => call('GetRun', req.params, req),
    );
    app.get(
      '/org/prompts/:prompt_id/generation-runs',
      {
        config: read,
        schema: {
          tags: ['Prompts'],
          summary: 'The prompt’s generation run history',
          description: 'Runs started for this prompt (geo_question_id), newest first. The total is in X-Total-Count.',
          params: Type.Object({ prompt_id: Uuid }),
          querystring: OrgPagination,
          response: { 200: Type.Array(Type.Ref('GenerationRun')), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => {
        await prompts.call('GetPrompt', { prompt_id: req.params.prompt_id }, callerOf(req));
        return listed('ListRuns', { ...req.query, geo_question_id: req.params.prompt_id }, req, reply);
      },
    );

    // ---- Generated content (drafts) ----
    app.get(
      '/org/generation/drafts',
      {
        config: read,
        schema: {
          tags: gen,
          summary: 'List drafts',
          description: 'Latest revision of each draft, newest first. The total is in X-Total-Count.',
          querystring: OrgPagination,
          response: { 200: Type.Array(Type.Ref('Draft')), ...errorResponses(400, 401, 403) },
        },
      },
      async (req, reply) => listed('ListDrafts', req.query, req, reply),
    );
    app.get(
      '/org/generation/drafts/:draft_id',
      {
        config: read,
        schema: {
          tags: gen,
          summary: 'A draft: sections, sentences with verdicts and citations, stale sources',
          description:
            'Every sentence carries its verdict and its citations (content id, version id, chunk id and the quoted span). `stale_sources` lists cited sources that got a new version or were deleted since.',
          params: Type.Object({ draft_id: Uuid }),
          response: { 200: Type.Ref('Draft'), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req) => call('GetDraft', req.params, req),
    );
    app.delete(
      '/org/generation/drafts/:draft_id',
      {
        config: write,
        schema: {
          tags: gen,
          summary: 'Delete a draft',
          params: Type.Object({ draft_id: Uuid }),
          response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => {
        await call('DeleteDraft', req.params, req);
        return reply.status(204).send(null);
      },
    );

    // ---- the fact checker ----
    app.post(
      '/org/content/verify',
      {
        config: verifyMeter,
        schema: {
          tags: ['Content'],
          summary: 'Check every sentence of a text against the knowledge base',
          description:
            'Each sentence gets a verdict (supported, unsupported, contradicted, not_factual) and the chunks that back it, with the quoted span. ' +
            'Catches changed numbers and units, flipped directions, added or dropped negations and swapped entities. ' +
            'Limited to the key’s folder scope and to folder_ids / tags when given. Costs one query credit.',
          body: VerifyInput,
          response: { 200: Type.Ref('VerifyResult'), ...errorResponses(400, 401, 402, 403, 404) },
        },
      },
      async (req) => call('Verify', req.body, req),
    );

    // ---- the category/topic API: /generate ----
    app.post(
      '/generate',
      {
        config: generate,
        schema: {
          tags: ['Generate'],
          summary: 'Generate a grounded summary or reply, with citations',
          description:
            'summary: the lead sentences of the content items in content_ids; reply: an answer to `question` from the knowledge base ' +
            '(optionally one category or topic). Every sentence is checked by the fact checker and cites the chunks it comes from; ' +
            'unsupported sentences are left out. Limited to the key’s folder scope. Costs the generation credits (402 when out).',
          body: GenerateBody,
          response: { 200: Type.Ref('GenerateResult'), ...errorResponses(400, 401, 402, 403, 404) },
        },
      },
      async (req) => {
        const body = req.body;
        if (body.type === 'reply') {
          if (!body.question) throw errors.validation('question is required for a reply', { details: { field: 'question' } });
          const { content_ids: _c, ...rest } = body;
          return call('Generate', rest, req);
        }
        if (!body.content_ids?.length)
          throw errors.validation('content_ids is required for a summary', { details: { field: 'content_ids' } });
        const ctx = callerOf(req);
        const passages = [];
        for (const contentId of body.content_ids) {
          const detail = await readScoped<{ item: ItemMessage }>(clients as ServiceClients, ctx, contentId);
          type ChunkMessage = { chunk_index: number; text: string };
          const res = await clients.ingest.call<{ version_id: string; chunks: ChunkMessage[] }>(
            'ListChunks',
            { content_id: contentId, limit: 100, offset: 0 },
            ctx,
          );
          for (const c of res.chunks)
            passages.push({
              content_id: contentId,
              version_id: res.version_id,
              chunk_id: `${res.version_id}:${c.chunk_index}`,
              text: c.text,
              title: detail.item.title,
            });
        }
        return call('Generate', { type: 'summary', passages, max_sentences: body.max_sentences }, req);
      },
    );

    // ---- Builder ----
    const builderTags = ['Builder'];
    const Piece = Type.Object({ draft_id: Uuid });
    const SectionParams = Type.Object({ draft_id: Uuid, section_id: Type.String({ minLength: 1, maxLength: 20 }) });
    app.post(
      '/org/builder/pieces',
      {
        config: write,
        schema: {
          tags: builderTags,
          summary: 'Start a piece: the outline from the content type',
          description: 'A draft with the content type’s sections, empty; fill them one by one. Every step is a revision (GET …/history).',
          body: Type.Object(
            {
              content_type_id: Uuid,
              title: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
              geo_question_id: Type.Optional(Uuid),
              product_line_id: Type.Optional(Uuid),
              folder_ids: Type.Optional(Type.Array(Uuid, { maxItems: 50, description: 'KB folders the piece draws on' })),
            },
            { additionalProperties: false },
          ),
          response: { 201: Type.Ref('Draft'), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => reply.status(201).send(await call('CreatePiece', req.body, req)),
    );
    app.post(
      '/org/builder/pieces/:draft_id/sections/:section_id/generate',
      {
        config: generate,
        schema: {
          tags: builderTags,
          summary: 'Generate or regenerate one section',
          description:
            'Drafts the section from the knowledge base in the brand kit’s voice and fact-checks it (unsupported sentences repaired once, then removed or flagged as the content type says). ' +
            'Costs the generation credits. 422 when the knowledge base holds nothing for it.',
          params: SectionParams,
          body: Type.Optional(
            Type.Object({ instructions: Type.Optional(Type.String({ maxLength: 4000 })) }, { additionalProperties: false }),
          ),
          response: { 200: Type.Ref('Draft'), ...errorResponses(400, 401, 402, 403, 404, 422) },
        },
      },
      async (req) => call('GenerateSection', { ...(req.body ?? {}), ...req.params }, req),
    );
    app.put(
      '/org/builder/pieces/:draft_id/sections/:section_id',
      {
        config: write,
        schema: {
          tags: builderTags,
          summary: 'Edit a section by hand',
          description: 'The text replaces the section; every sentence of it is checked against the knowledge base and keeps its verdict.',
          params: SectionParams,
          body: Type.Object(
            { text: Type.String({ maxLength: 10000 }), title: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) },
            { additionalProperties: false },
          ),
          response: { 200: Type.Ref('Draft'), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req) => call('EditSection', { ...req.body, ...req.params }, req),
    );
    app.post(
      '/org/builder/pieces/:draft_id/reorder',
      {
        config: write,
        schema: {
          tags: builderTags,
          summary: 'Reorder the sections',
          params: Piece,
          body: Type.Object({ section_ids: Type.Array(Type.String(), { maxItems: 20 }) }, { additionalProperties: false }),
          response: { 200: Type.Ref('Draft'), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req) => call('ReorderSections', { ...req.body, ...req.params }, req),
    );
    app.get(
      '/org/builder/pieces/:draft_id/history',
      {
        config: read,
        schema: {
          tags: builderTags,
          summary: 'The piece’s history: every revision, oldest first',
          params: Piece,
          response: {
            200: Type.Array(
              Type.Object({
                revision: Type.Union([Type.Integer(), Type.Null()]),
                type: Type.String(),
                change: Type.Object({ kind: Type.String(), section_id: Type.Optional(Type.String()) }),
                actor: Type.Union([Type.String(), Type.Null()]),
                at: Timestamp,
                totals: Type.Optional(
                  Type.Object({
                    sentences: Type.Integer(),
                    factual: Type.Integer(),
                    supported: Type.Integer(),
                    unsupported: Type.Integer(),
                  }),
                ),
                verification: Type.Optional(Type.String()),
              }),
            ),
            ...errorResponses(400, 401, 403, 404),
          },
        },
      },
      async (req) => (await call<{ items: never[] }>('PieceHistory', req.params, req)).items,
    );

    // ---- Content Engine ----
    const engineTags = ['Content Engine'];
    const Rule = Type.Object(
      {
        rule_id: Uuid,
        name: Type.String(),
        content_type_id: Uuid,
        prompt_tag_id: Type.Union([Uuid, Type.Null()], { description: 'prompts carrying this tag; null: every prompt' }),
        product_line_id: Type.Union([Uuid, Type.Null()]),
        cadence: Type.Union([Type.Literal('hourly'), Type.Literal('daily'), Type.Literal('weekly')]),
        enabled: Type.Boolean(),
        last_slot: Type.Union([Timestamp, Type.Null()], { description: 'the last cadence slot the rule fired for' }),
        last_run_ids: Type.Array(Uuid, { description: 'the runs it started then' }),
        last_skipped: Type.Union([Type.String(), Type.Null()], { description: 'why it started nothing then (e.g. runs switched off)' }),
        created_at: Timestamp,
        updated_at: Timestamp,
      },
      { $id: 'ContentEngineRule' },
    );
    app.addSchema(Rule);
    const RuleInput = Type.Object(
      {
        name: Type.String({ minLength: 1, maxLength: 200 }),
        content_type_id: Uuid,
        prompt_tag_id: Type.Optional(Type.Union([Uuid, Type.Null()])),
        product_line_id: Type.Optional(Type.Union([Uuid, Type.Null()])),
        cadence: Type.Optional(Type.Union([Type.Literal('hourly'), Type.Literal('daily'), Type.Literal('weekly')], { default: 'daily' })),
        enabled: Type.Optional(Type.Boolean({ default: true })),
      },
      { additionalProperties: false },
    );
    const RuleParams = Type.Object({ rule_id: Uuid });
    const ruleDescription =
      'Once per cadence slot (UTC hour, day or week starting Monday) the rule starts one generation run per matching prompt ' +
      '(geo_question_id = the prompt, rule_id = the rule), never twice for the same slot even with several replicas. ' +
      'While the organization’s runs switch is off the slot passes with nothing started. A new rule fires for the current slot at once.';
    app.get(
      '/org/content-engine/rules',
      {
        config: read,
        schema: {
          tags: engineTags,
          summary: 'List content engine rules',
          querystring: OrgPagination,
          response: { 200: Type.Array(Type.Ref('ContentEngineRule')), ...errorResponses(400, 401, 403) },
        },
      },
      async (req, reply) => listed('ListRules', req.query, req, reply),
    );
    app.post(
      '/org/content-engine/rules',
      {
        config: write,
        schema: {
          tags: engineTags,
          summary: 'Create a rule that starts runs by itself',
          description: ruleDescription,
          body: RuleInput,
          response: { 201: Type.Ref('ContentEngineRule'), ...errorResponses(400, 401, 403, 404, 422) },
        },
      },
      async (req, reply) => {
        await requirePublisherOf(req, req.body.content_type_id);
        return reply.status(201).send(await call('CreateRule', req.body, req));
      },
    );
    app.get(
      '/org/content-engine/rules/:rule_id',
      {
        config: read,
        schema: {
          tags: engineTags,
          summary: 'Get a rule',
          params: RuleParams,
          response: { 200: Type.Ref('ContentEngineRule'), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req) => call('GetRule', req.params, req),
    );
    app.put(
      '/org/content-engine/rules/:rule_id',
      {
        config: write,
        schema: {
          tags: engineTags,
          summary: 'Replace a rule',
          params: RuleParams,
          body: RuleInput,
          response: { 200: Type.Ref('ContentEngineRule'), ...errorResponses(400, 401, 403, 404, 422) },
        },
      },
      async (req) => {
        await requirePublisherOf(req, req.body.content_type_id);
        return call('UpdateRule', { ...req.body, ...req.params }, req);
      },
    );
    app.delete(
      '/org/content-engine/rules/:rule_id',
      {
        config: write,
        schema: {
          tags: engineTags,
          summary: 'Delete a rule',
          params: RuleParams,
          response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => {
        await call('DeleteRule', req.params, req);
        return reply.status(204).send(null);
      },
    );
  };
}
