import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RpcClient } from '@kb/rpc';
import { Timestamp, Uuid, errorResponses, OrgPagination, batchImportSchemas } from '../schemas.js';
import { callerOf } from '../auth-hook.js';

const Tier = Type.Union([Type.Literal('primary'), Type.Literal('tracked'), Type.Literal('secondary')], {
  description: 'primary (Owned), tracked (Tracked), secondary (External)',
});
const MatchType = Type.Union([Type.Literal('domain'), Type.Literal('host'), Type.Literal('path_prefix'), Type.Literal('exact_url')]);

const TrackedSource = Type.Object(
  {
    source_id: Uuid,
    match_type: MatchType,
    pattern: Type.String({
      description: 'normalised: a host for domain/host, host+path for path_prefix, the normalised URL for exact_url',
    }),
    tier: Tier,
    label: Type.Optional(Type.String()),
    source_origin: Type.Union([Type.Literal('manual'), Type.Literal('import'), Type.Literal('published')], {
      description: 'published rules (the organization websites) are read-only',
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'TrackedSource' },
);

const RuleInput = Type.Object(
  {
    match_type: MatchType,
    pattern: Type.String({ minLength: 1, maxLength: 2048 }),
    tier: Tier,
    label: Type.Optional(Type.String({ maxLength: 255 })),
  },
  { additionalProperties: false },
);
const Params = Type.Object({ source_id: Uuid });
const { body: BatchBody, result: BatchResult } = batchImportSchemas('sources', 'source', 'TrackedSource', 500);

interface SourceMessage {
  source_id: string;
}

const tags = ['Tracked Sources'];
const read = { auth: { credential: 'any', permission: 'read:analytics' } } as const;
const write = { auth: { credential: 'any', permission: 'manage:analytics' } } as const;

/** An item of a batch: the create body's fields, passed on for the service to judge one by one. */
const ruleOf = (item: unknown) => {
  const o = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  return {
    match_type: str(o.match_type),
    pattern: str(o.pattern),
    tier: str(o.tier),
    ...(typeof o.label === 'string' && { label: o.label }),
  };
};

/** Tracked sources (spec 2.8): rules that put every cited URL in one tier. */
export function trackedSourceRoutes(sources: RpcClient): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addSchema(TrackedSource);

    app.get(
      '/org/tracked-sources',
      {
        config: read,
        schema: {
          tags,
          summary: 'List tracked-source rules',
          description: 'Oldest first; the total is in the X-Total-Count header.',
          querystring: OrgPagination,
          response: { 200: Type.Array(Type.Ref('TrackedSource')), ...errorResponses(400, 401, 403) },
        },
      },
      async (req, reply) => {
        const res = await sources.call<{ items: SourceMessage[]; total_count: number }>('ListTrackedSources', req.query, callerOf(req));
        void reply.header('x-total-count', String(res.total_count));
        return res.items;
      },
    );

    app.post(
      '/org/tracked-sources',
      {
        config: write,
        schema: {
          tags,
          summary: 'Create a tracked-source rule',
          description:
            'When several rules match a URL the most specific wins: exact_url, then path_prefix (longest), then host, then domain (longest); then the higher tier, then the older rule. URLs no rule matches are secondary.',
          body: RuleInput,
          response: { 201: Type.Ref('TrackedSource'), ...errorResponses(400, 401, 403) },
        },
      },
      async (req, reply) => reply.status(201).send(await sources.call('CreateTrackedSource', req.body, callerOf(req))),
    );

    app.post(
      '/org/tracked-sources/batch',
      {
        config: write,
        schema: {
          tags,
          summary: 'Import tracked-source rules',
          description: 'Each rule is validated on its own; 200 with per-item results when at least one is created, 400 when none is.',
          body: BatchBody,
          response: { 200: BatchResult, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => sources.call('BatchImportTrackedSources', { sources: req.body.sources.map(ruleOf) }, callerOf(req)),
    );

    app.get(
      '/org/tracked-sources/:source_id',
      {
        config: read,
        schema: {
          tags,
          summary: 'Get a tracked-source rule',
          params: Params,
          response: { 200: Type.Ref('TrackedSource'), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req) => sources.call('GetTrackedSource', req.params, callerOf(req)),
    );

    app.put(
      '/org/tracked-sources/:source_id',
      {
        config: write,
        schema: {
          tags,
          summary: 'Replace a tracked-source rule',
          description: 'A published rule is read-only: 409.',
          params: Params,
          body: RuleInput,
          response: { 200: Type.Ref('TrackedSource'), ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req) => sources.call('UpdateTrackedSource', { source_id: req.params.source_id, rule: req.body }, callerOf(req)),
    );

    app.delete(
      '/org/tracked-sources/:source_id',
      {
        config: write,
        schema: {
          tags,
          summary: 'Delete a tracked-source rule',
          description: 'A published rule is read-only: 409.',
          params: Params,
          response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req, reply) => {
        await sources.call('DeleteTrackedSource', req.params, callerOf(req));
        return reply.status(204).send(null);
      },
    );
  };
}
