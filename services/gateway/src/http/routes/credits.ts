import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { CreditsService } from '../../app/credits.js';
import { callerOf } from '../auth-hook.js';
import { Timestamp, errorResponses, OrgPagination } from '../schemas.js';

const read = { auth: { credential: 'any', permission: 'read:org' } } as const;
const manage = { auth: { credential: 'user', permission: 'manage:credits' } } as const;
const tags = ['Credits'];

const LedgerEntry = Type.Object({
  entry_id: Type.String(),
  operation: Type.Union([Type.Literal('grant'), Type.Literal('ingest'), Type.Literal('query'), Type.Literal('generation')]),
  amount: Type.Integer({ description: 'positive for grants, negative for spending' }),
  balance_after: Type.Integer({
    description:
      'credits granted less credits spent, up to and including this entry (credits held for requests still in flight are not spent yet): the previous entry plus this amount',
  }),
  reason: Type.Union([Type.String(), Type.Null()]),
  at: Timestamp,
});

/** The organization's credits: balance, ledger, grants and the monthly spend limit. */
export function creditRoutes(credits: CreditsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/org/credits/balance',
      {
        config: read,
        schema: {
          tags,
          summary: 'Credit balance',
          description: `Metered operations reserve their cost before any work and settle after; costs per unit: ${JSON.stringify(credits.costs)}.`,
          response: { 200: Type.Ref('CreditBalance'), ...errorResponses(401, 403, 404) },
        },
      },
      async (req) => credits.balance(callerOf(req)),
    );

    app.get(
      '/org/credits/usage',
      {
        config: read,
        schema: {
          tags,
          summary: 'Credit ledger',
          description: 'Grants and settled operations, newest first (limit default 50). The total is in X-Total-Count.',
          querystring: OrgPagination,
          response: { 200: Type.Array(LedgerEntry), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => {
        const { items, total } = await credits.usage(callerOf(req), req.query);
        void reply.header('x-total-count', String(total));
        return items;
      },
    );

    app.post(
      '/org/credits/grants',
      {
        config: manage,
        schema: {
          tags,
          summary: 'Grant credits',
          body: Type.Object(
            { amount: Type.Integer({ minimum: 1, maximum: 1_000_000_000 }), reason: Type.Optional(Type.String({ maxLength: 200 })) },
            { additionalProperties: false },
          ),
          response: { 201: Type.Ref('CreditBalance'), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => reply.status(201).send(await credits.grant(callerOf(req), req.body.amount, req.body.reason ?? 'grant')),
    );

    app.put(
      '/org/credits/spend-limit',
      {
        config: manage,
        schema: {
          tags,
          summary: 'Set the monthly spend limit',
          description: 'Credits that may be spent per UTC calendar month; null removes the limit. Reaching it gives 402.',
          body: Type.Object({ monthly_limit: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]) }, { additionalProperties: false }),
          response: { 200: Type.Ref('CreditBalance'), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req) => credits.setSpendLimit(callerOf(req), req.body.monthly_limit),
    );
  };
}
