import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RpcClient } from '@kb/rpc';
import { NullableTimestamp, Timestamp, Uuid, errorResponses, OrgPagination } from '../schemas.js';
import { callerOf } from '../auth-hook.js';

const Cadence = Type.Union([Type.Literal('hourly'), Type.Literal('daily'), Type.Literal('weekly')]);
const Name = Type.String({ minLength: 1, maxLength: 100 });

const RunConfiguration = Type.Object(
  {
    enabled: Type.Boolean(),
    models: Type.Array(Type.String(), { description: 'answer engine models asked, e.g. gpt-4o, sonar' }),
    locations: Type.Array(Type.String()),
    cadence: Cadence,
    prompt_ids: Type.Array(Uuid, { description: 'prompts to run; with tag_ids empty too, every prompt' }),
    tag_ids: Type.Array(Uuid, { description: 'run the prompts carrying any of these tags' }),
    updated_at: NullableTimestamp,
    engine_configured: Type.Boolean({ description: 'false: runs fail with "no answer engine configured"' }),
    runs_enabled: Type.Boolean({
      description: 'the organization master switch (PATCH /org/me/runs-enabled) as analytics last learned it; false: no run starts',
    }),
  },
  { $id: 'RunConfiguration' },
);

const RunConfigurationInput = Type.Object(
  {
    enabled: Type.Boolean(),
    models: Type.Array(Name, { maxItems: 20 }),
    locations: Type.Optional(Type.Array(Name, { maxItems: 20 })),
    cadence: Cadence,
    prompt_ids: Type.Optional(Type.Array(Uuid, { maxItems: 1000 })),
    tag_ids: Type.Optional(Type.Array(Uuid, { maxItems: 100 })),
  },
  { additionalProperties: false },
);

const PromptRun = Type.Object(
  {
    run_id: Uuid,
    slot: Timestamp,
    status: Type.Union([Type.Literal('running'), Type.Literal('completed'), Type.Literal('failed')]),
    planned: Type.Integer(),
    collected: Type.Integer(),
    failed: Type.Integer(),
    engines: Type.Record(
      Type.String(),
      Type.Object({ collected: Type.Integer(), failed: Type.Integer(), last_error: Type.Union([Type.String(), Type.Null()]) }),
      { description: 'progress and last failure per model' },
    ),
    error: Type.Union([Type.String(), Type.Null()]),
    started_at: Timestamp,
    finished_at: NullableTimestamp,
  },
  { $id: 'PromptRun' },
);

interface RunMessage {
  engines?: Record<string, { collected?: number; failed?: number; last_error?: string }>;
  error?: string;
  finished_at?: string;
  collected?: number;
  failed?: number;
  planned?: number;
}
const runJson = (r: RunMessage) => ({
  ...r,
  planned: r.planned ?? 0,
  collected: r.collected ?? 0,
  failed: r.failed ?? 0,
  error: r.error ?? null,
  finished_at: r.finished_at ?? null,
  engines: Object.fromEntries(
    Object.entries(r.engines ?? {}).map(([m, e]) => [
      m,
      { collected: e.collected ?? 0, failed: e.failed ?? 0, last_error: e.last_error ?? null },
    ]),
  ),
});
const configJson = (c: { updated_at?: string; enabled?: boolean; engine_configured?: boolean; runs_enabled?: boolean }) => ({
  ...c,
  enabled: c.enabled ?? false,
  engine_configured: c.engine_configured ?? false,
  runs_enabled: c.runs_enabled ?? false,
  updated_at: c.updated_at ?? null,
});

const tags = ['Run Configuration'];
const read = { auth: { credential: 'any', permission: 'read:analytics' } } as const;
const write = { auth: { credential: 'any', permission: 'manage:analytics' } } as const;

/** Run configuration (scheduled prompt runs): which models and locations, which prompts, how often. */
export function runConfigurationRoutes(runs: RpcClient): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addSchema(RunConfiguration);
    app.addSchema(PromptRun);

    app.get(
      '/org/run-configuration',
      {
        config: read,
        schema: {
          tags,
          summary: 'Get the run configuration',
          response: { 200: Type.Ref('RunConfiguration'), ...errorResponses(401, 403) },
        },
      },
      async (req) => configJson(await runs.call('GetRunConfiguration', {}, callerOf(req))),
    );

    app.put(
      '/org/run-configuration',
      {
        config: write,
        schema: {
          tags,
          summary: 'Replace the run configuration',
          description:
            'Each due prompt x model x location runs once per cadence slot (UTC hour, day, or week from Monday), also with several replicas; the organization runs switch still applies.',
          body: RunConfigurationInput,
          response: { 200: Type.Ref('RunConfiguration'), ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => configJson(await runs.call('UpdateRunConfiguration', req.body, callerOf(req))),
    );

    app.get(
      '/org/run-configuration/runs',
      {
        config: read,
        schema: {
          tags,
          summary: 'List scheduled runs with their progress',
          description: 'Newest slot first; the total is in the X-Total-Count header.',
          querystring: OrgPagination,
          response: { 200: Type.Array(Type.Ref('PromptRun')), ...errorResponses(400, 401, 403) },
        },
      },
      async (req, reply) => {
        const res = await runs.call<{ items?: RunMessage[]; total_count?: number }>('ListRuns', req.query, callerOf(req));
        void reply.header('x-total-count', String(res.total_count ?? 0));
        return (res.items ?? []).map(runJson);
      },
    );

    app.post(
      '/org/run-configuration/runs',
      {
        config: write,
        schema: {
          tags,
          summary: 'Run the current slot now',
          description:
            'Starts the current cadence slot unless it already ran (then that run is returned); answers are collected in the background (see the runs list). 422 when the configuration is disabled, names no model, or runs are switched off.',
          response: { 202: Type.Ref('PromptRun'), ...errorResponses(401, 403, 422) },
        },
      },
      async (req, reply) => {
        const res = await runs.call<{ run?: RunMessage }>('TriggerRun', {}, callerOf(req));
        return reply.status(202).send(runJson(res.run ?? {}));
      },
    );
  };
}
