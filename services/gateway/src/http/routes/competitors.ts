import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RpcClient } from '@kb/rpc';
import { Timestamp, Uuid, errorResponses, OrgPagination, batchImportSchemas } from '../schemas.js';
import { callerOf } from '../auth-hook.js';

const Competitor = Type.Object(
  {
    competitor_id: Uuid,
    name: Type.String(),
    aliases: Type.Array(Type.String()),
    website: Type.Optional(Type.String()),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Competitor' },
);

const CompetitorInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    aliases: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 50 })),
    website: Type.Optional(Type.String({ maxLength: 2048 })),
  },
  { additionalProperties: false },
);
const Params = Type.Object({ competitor_id: Uuid });
const { body: BatchBody, result: BatchResult } = batchImportSchemas('competitors', 'competitor', 'Competitor', 200);
const SuggestBody = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 10 })) },
  { additionalProperties: false },
);
const Suggestions = Type.Object({
  suggestions: Type.Array(Type.Object({ name: Type.String(), mention_count: Type.Integer(), answer_count: Type.Integer() })),
});

const tags = ['Tracked Competitors'];
const read = { auth: { credential: 'any', permission: 'read:analytics' } } as const;
const write = { auth: { credential: 'any', permission: 'manage:analytics' } } as const;

const entryOf = (item: unknown) => {
  const o = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
  return {
    name: typeof o.name === 'string' ? o.name : '',
    aliases: Array.isArray(o.aliases) ? o.aliases.filter((a): a is string => typeof a === 'string') : [],
    ...(typeof o.website === 'string' && { website: o.website }),
  };
};

/** Tracked competitors (spec 2.8): curated brands whose mentions analytics counts by name. */
export function competitorRoutes(competitors: RpcClient): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addSchema(Competitor);

    app.get(
      '/org/competitors',
      {
        config: read,
        schema: {
          tags,
          summary: 'List tracked competitors',
          description: 'Oldest first; the total is in the X-Total-Count header.',
          querystring: OrgPagination,
          response: { 200: Type.Array(Type.Ref('Competitor')), ...errorResponses(400, 401, 403) },
        },
      },
      async (req, reply) => {
        const res = await competitors.call<{ items: unknown[]; total_count: number }>('ListCompetitors', req.query, callerOf(req));
        void reply.header('x-total-count', String(res.total_count));
        return res.items;
      },
    );

    app.post(
      '/org/competitors',
      {
        config: write,
        schema: {
          tags,
          summary: 'Track a competitor',
          description: 'Names are unique per organization (case-insensitive): 409 on a duplicate. Mentions count from now on.',
          body: CompetitorInput,
          response: { 201: Type.Ref('Competitor'), ...errorResponses(400, 401, 403, 409) },
        },
      },
      async (req, reply) => reply.status(201).send(await competitors.call('CreateCompetitor', req.body, callerOf(req))),
    );

    app.post(
      '/org/competitors/batch',
      {
        config: write,
        schema: {
          tags,
          summary: 'Import tracked competitors',
          description:
            'Each entry is validated on its own (duplicates are rejected); 200 with per-item results when at least one is created, 400 when none is.',
          body: BatchBody,
          response: { 200: BatchResult, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => competitors.call('BatchImportCompetitors', { competitors: req.body.competitors.map(entryOf) }, callerOf(req)),
    );

    app.post(
      '/org/competitors/suggest',
      {
        config: read,
        schema: {
          tags,
          summary: 'Suggest competitors',
          description:
            'Brands the organization\u2019s answers name that are neither the organization nor tracked, ranked by mention count.',
          body: Type.Optional(SuggestBody),
          response: { 200: Suggestions, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => competitors.call('SuggestCompetitors', { limit: req.body?.limit ?? 10 }, callerOf(req)),
    );

    app.get(
      '/org/competitors/:competitor_id',
      {
        config: read,
        schema: {
          tags,
          summary: 'Get a tracked competitor',
          params: Params,
          response: { 200: Type.Ref('Competitor'), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req) => competitors.call('GetCompetitor', req.params, callerOf(req)),
    );

    app.put(
      '/org/competitors/:competitor_id',
      {
        config: write,
        schema: {
          tags,
          summary: 'Replace a tracked competitor',
          params: Params,
          body: CompetitorInput,
          response: { 200: Type.Ref('Competitor'), ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req) => competitors.call('UpdateCompetitor', { competitor_id: req.params.competitor_id, competitor: req.body }, callerOf(req)),
    );

    app.delete(
      '/org/competitors/:competitor_id',
      {
        config: write,
        schema: {
          tags,
          summary: 'Stop tracking a competitor',
          params: Params,
          response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => {
        await competitors.call('DeleteCompetitor', req.params, callerOf(req));
        return reply.status(204).send(null);
      },
    );
  };
}
