import { Type, type TSchema } from '@sinclair/typebox';

export const Uuid = Type.String({ format: 'uuid' });
export const Timestamp = Type.String({ format: 'date-time' });
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ description: 'stable snake_case code (not a contract; status is)' }),
      message: Type.String(),
      details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    }),
  },
  { $id: 'ErrorBody', description: 'Error body: clients must not parse it; the status code is the contract' },
);

/** limit 1-100 default 10, offset >= 0 default 0 (spec 4.2 and 8). */
/** Organization API lists (spec 8: most default to 50 and cap at 100); offset >= 0. */
export const OrgPagination = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
    offset: Type.Integer({ minimum: 0, default: 0 }),
  },
  { additionalProperties: false },
);

export const Pagination = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
    offset: Type.Integer({ minimum: 0, default: 0 }),
  },
  { additionalProperties: false },
);

/** Error responses every authenticated route can give. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const s of statuses) out[s] = Type.Ref('ErrorBody');
  return out;
}

/**
 * Body and result of a batch import: `field` holds up to `max` entries, each validated on
 * its own; the result reports every entry (created with `item` as `ref`, or rejected with
 * its errors), so one bad entry never blocks the rest.
 */
export function batchImportSchemas<F extends string>(field: F, item: string, ref: string, max: number) {
  const entries = Type.Array(Type.Unknown(), {
    minItems: 1,
    maxItems: max,
    description: 'entries like the create body; each validated on its own',
  });
  return {
    body: Type.Object({ [field]: entries } as { [K in F]: typeof entries }, { additionalProperties: false }),
    result: Type.Object({
      created: Type.Integer(),
      rejected: Type.Integer(),
      results: Type.Array(
        Type.Object({
          index: Type.Integer(),
          status: Type.Union([Type.Literal('created'), Type.Literal('rejected')]),
          [item]: Type.Optional(Type.Ref(ref)),
          errors: Type.Array(Type.String()),
        }),
      ),
    }),
  };
}
