import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RpcClient } from '@kb/rpc';
import { NullableTimestamp, errorResponses } from '../schemas.js';
import { callerOf } from '../auth-hook.js';

const BrandSettings = Type.Object(
  {
    brand_name: Type.Union([Type.String(), Type.Null()], {
      description: 'the name answers are searched for; default: the organization name',
    }),
    aliases: Type.Array(Type.String()),
    websites: Type.Array(Type.String(), { description: 'hosts; each acts as a read-only primary (Owned) domain rule' }),
    source: Type.Union([Type.Literal('settings'), Type.Literal('organization')]),
    updated_at: NullableTimestamp,
  },
  { $id: 'BrandSettings' },
);
const BrandSettingsInput = Type.Object(
  {
    brand_name: Type.String({ minLength: 1, maxLength: 200 }),
    aliases: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 50 })),
    websites: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), { maxItems: 50 })),
  },
  { additionalProperties: false },
);

const tags = ['Analytics'];
const settingsJson = (s: { brand_name?: string; updated_at?: string }) => ({
  ...s,
  brand_name: s.brand_name ?? null,
  updated_at: s.updated_at ?? null,
});

/** The organization's brand as answers name it, and its websites (owned sources). */
export function analyticsSettingsRoutes(runs: RpcClient): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addSchema(BrandSettings);

    app.get(
      '/org/analytics/settings',
      {
        config: { auth: { credential: 'any', permission: 'read:analytics' } },
        schema: { tags, summary: 'Get the brand settings', response: { 200: Type.Ref('BrandSettings'), ...errorResponses(401, 403) } },
      },
      async (req) => settingsJson(await runs.call('GetBrandSettings', {}, callerOf(req))),
    );

    app.put(
      '/org/analytics/settings',
      {
        config: { auth: { credential: 'any', permission: 'manage:analytics' } },
        schema: {
          tags,
          summary: 'Replace the brand settings',
          description: 'Applies to answers folded from now on; earlier counts keep the brands and rules in force when they were folded.',
          body: BrandSettingsInput,
          response: { 200: Type.Ref('BrandSettings'), ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => settingsJson(await runs.call('UpdateBrandSettings', req.body, callerOf(req))),
    );
  };
}
