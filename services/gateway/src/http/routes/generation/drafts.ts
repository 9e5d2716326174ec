import { Type } from '@sinclair/typebox';
import { DraftSection, StaleSource } from '@kb/events';
import { Timestamp, Uuid, errorResponses, OrgPagination } from '../../schemas.js';
import { read, write, type App, type GenerationCalls } from './support.js';
import { gen } from './runs.js';

/** Drafts: the latest revision of what a run or the builder made, every sentence with its verdict and citations. */

export const Draft = Type.Object(
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
    warnings: Type.Optional(
      Type.Array(Type.String(), {
        description:
          'what the draft could not cover: sections or questions the knowledge base holds nothing on, a length short of the minimum',
      }),
    ),
    verification: Type.Union([Type.Literal('verified'), Type.Literal('needs_review')]),
    totals: Type.Object({ sentences: Type.Integer(), factual: Type.Integer(), supported: Type.Integer(), unsupported: Type.Integer() }),
    stale_sources: Type.Array(StaleSource, { description: 'cited sources that changed or were deleted since' }),
    auto_publish: Type.Boolean(),
    publish_destination_ids: Type.Array(Uuid),
    change: Type.Optional(
      Type.Object(
        { kind: Type.String(), section_id: Type.Optional(Type.String()), run_id: Type.Optional(Type.String()) },
        { description: 'the builder step, or the run (regenerated), that made this revision' },
      ),
    ),
    created_at: Timestamp,
    at: Timestamp,
  },
  { $id: 'Draft' },
);

export function draftRoutes(app: App, { call, listed }: GenerationCalls) {
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
}
