import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RpcClient } from '@kb/rpc';
import { errorResponses } from '../schemas.js';
import { callerOf } from '../auth-hook.js';
import { LatestAnswersReport, Ratio, Totals, reportQuery } from './analytics-schemas.js';

const tags = ['Analytics'];
/** Up to 1000 answers per call; the body limit keeps one call inside one internal message. */
const MAX_ITEMS = 1000;
const IMPORT_BODY_LIMIT = 3 * 1024 * 1024;
const NDJSON = 'application/x-ndjson';

const ImportResult = Type.Object(
  {
    accepted: Type.Integer(),
    rejected: Type.Integer(),
    results: Type.Array(
      Type.Object({
        index: Type.Integer({ description: 'position of the item in the array, or line among the non-empty NDJSON lines' }),
        status: Type.Union([Type.Literal('accepted'), Type.Literal('rejected')]),
        answer_id: Type.Optional(Type.String({ format: 'uuid' })),
        errors: Type.Array(Type.String()),
      }),
    ),
  },
  { $id: 'AnswerImportResult' },
);

const AnswerItem = Type.Object(
  {
    answer_id: Type.Optional(Type.String({ format: 'uuid', description: 'yours, to make re-imports idempotent; generated when absent' })),
    prompt_id: Type.String({ format: 'uuid' }),
    model: Type.String({ minLength: 1, maxLength: 100, description: 'answer engine / model, e.g. gpt-4o' }),
    location: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'where it was asked from; default global' })),
    run_at: Type.String({ format: 'date-time', description: 'collection time' }),
    text: Type.String({ maxLength: 200000 }),
    citations: Type.Array(Type.String(), { maxItems: 500, description: 'cited http(s) URLs in order' }),
    brands: Type.Optional(
      Type.Array(Type.String(), { maxItems: 200, description: 'brands the answer names; absent: extracted from the text' }),
    ),
  },
  { description: 'One answer. Each item is validated on its own and reported in results.' },
);

/** Answer import (the bring-your-own-data producer of the answer stream) and the latest answers. */
export function analyticsAnswerRoutes(answers: RpcClient, reports: RpcClient): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addSchema(Ratio);
    app.addSchema(Totals);
    app.addSchema(ImportResult);
    app.addSchema(LatestAnswersReport);
    // NDJSON: one answer per line; lines are kept as text so a bad line is a per-item error.
    app.addContentTypeParser(NDJSON, { parseAs: 'string', bodyLimit: IMPORT_BODY_LIMIT }, (_req, body, done) => {
      done(
        null,
        (body as string)
          .split(/\r?\n/)
          .map((l) => l.trim())
          .filter(Boolean),
      );
    });

    app.post(
      '/org/analytics/answers/import',
      {
        config: { auth: { credential: 'any', permission: 'manage:analytics' } },
        bodyLimit: IMPORT_BODY_LIMIT,
        schema: {
          tags,
          summary: 'Import answers collected elsewhere',
          description: `A JSON array of answers (application/json) or one answer per line (${NDJSON}), 1 to ${MAX_ITEMS} per call and at most 3 MiB. Every item is validated on its own: 200 with per-item results when at least one is accepted (each accepted answer is applied whole: its counts and latest answer together); 400 when the body is malformed or every item is rejected. Item shape: see AnswerItem.`,
          body: Type.Array(Type.Union([AnswerItem, Type.Unknown()]), { minItems: 1, maxItems: MAX_ITEMS }),
          response: { 200: Type.Ref('AnswerImportResult'), ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => {
        const ndjson = (req.headers['content-type'] ?? '').startsWith(NDJSON);
        const items_json = (req.body as unknown[]).map((item) => (ndjson ? String(item) : JSON.stringify(item)));
        return answers.call('ImportAnswers', { items_json }, callerOf(req));
      },
    );

    app.get(
      '/org/analytics/answers/latest',
      {
        config: { auth: { credential: 'any', permission: 'read:analytics' } },
        schema: {
          tags,
          summary: 'Latest answer per prompt, model and location',
          description:
            'from and to (a date-time, or YYYY-MM-DD for the whole UTC day) filter each latest answer\u2019s run_at; a combination whose latest answer is outside the window is hidden, never replaced by an older answer. Default sort: run_at, descending.',
          querystring: reportQuery(['run_at', 'model', 'location', 'prompt_id'], { paged: true }),
          response: { 200: Type.Ref('LatestAnswers'), ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => JSON.parse((await reports.call<{ json: string }>('LatestAnswers', req.query, callerOf(req))).json) as unknown,
    );
  };
}
