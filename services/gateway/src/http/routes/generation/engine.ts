import { Type } from '@sinclair/typebox';
import { Timestamp, Uuid, errorResponses, OrgPagination } from '../../schemas.js';
import { read, write, type App, type GenerationCalls } from './support.js';

/** The content engine: rules that start generation runs by themselves, once per cadence slot. */

export function engineRoutes(app: App, { call, listed, requirePublisherOf }: GenerationCalls) {
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
}
