import { Type } from '@sinclair/typebox';
import { Timestamp, Uuid, errorResponses, OrgPagination } from '../../schemas.js';
import { callerOf } from '../../auth-hook.js';
import { generate, read, type App, type GenerationCalls } from './support.js';

/** Generation runs (asynchronous: queued to completed, with progress) and a prompt's run history. */

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
export const Run = Type.Object(
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
const RunListQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
    offset: Type.Integer({ minimum: 0, default: 0 }),
    state: Type.Optional(RunState),
    geo_question_id: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);

export const gen = ['Content Generation'];

export function runRoutes(app: App, { clients, call, listed, requirePublisherOf }: GenerationCalls) {
  const { prompts } = clients;
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
}
