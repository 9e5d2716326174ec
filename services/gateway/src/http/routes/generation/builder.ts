import { Type } from '@sinclair/typebox';
import { Timestamp, Uuid, errorResponses } from '../../schemas.js';
import { generate, read, write, type App, type GenerationCalls } from './support.js';

/** The builder: a piece made section by section, every step a revision. */

export function builderRoutes(app: App, { call }: GenerationCalls) {
  const builderTags = ['Builder'];
  const Piece = Type.Object({ draft_id: Uuid });
  const SectionParams = Type.Object({ draft_id: Uuid, section_id: Type.String({ minLength: 1, maxLength: 20 }) });
  app.post(
    '/org/builder/pieces',
    {
      config: write,
      schema: {
        tags: builderTags,
        summary: 'Start a piece: the outline from the content type',
        description: 'A draft with the content type’s sections, empty; fill them one by one. Every step is a revision (GET …/history).',
        body: Type.Object(
          {
            content_type_id: Uuid,
            title: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
            geo_question_id: Type.Optional(Uuid),
            product_line_id: Type.Optional(Uuid),
            folder_ids: Type.Optional(Type.Array(Uuid, { maxItems: 50, description: 'KB folders the piece draws on' })),
          },
          { additionalProperties: false },
        ),
        response: { 201: Type.Ref('Draft'), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req, reply) => reply.status(201).send(await call('CreatePiece', req.body, req)),
  );
  app.post(
    '/org/builder/pieces/:draft_id/sections/:section_id/generate',
    {
      config: generate,
      schema: {
        tags: builderTags,
        summary: 'Generate or regenerate one section',
        description:
          'Drafts the section from the knowledge base in the brand kit’s voice and fact-checks it (unsupported sentences repaired once, then removed or flagged as the content type says). ' +
          'Costs the generation credits. 422 when the knowledge base holds nothing for it.',
        params: SectionParams,
        body: Type.Optional(
          Type.Object({ instructions: Type.Optional(Type.String({ maxLength: 4000 })) }, { additionalProperties: false }),
        ),
        response: { 200: Type.Ref('Draft'), ...errorResponses(400, 401, 402, 403, 404, 422) },
      },
    },
    async (req) => call('GenerateSection', { ...(req.body ?? {}), ...req.params }, req),
  );
  app.put(
    '/org/builder/pieces/:draft_id/sections/:section_id',
    {
      config: write,
      schema: {
        tags: builderTags,
        summary: 'Edit a section by hand',
        description: 'The text replaces the section; every sentence of it is checked against the knowledge base and keeps its verdict.',
        params: SectionParams,
        body: Type.Object(
          { text: Type.String({ maxLength: 10000 }), title: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) },
          { additionalProperties: false },
        ),
        response: { 200: Type.Ref('Draft'), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => call('EditSection', { ...req.body, ...req.params }, req),
  );
  app.post(
    '/org/builder/pieces/:draft_id/reorder',
    {
      config: write,
      schema: {
        tags: builderTags,
        summary: 'Reorder the sections',
        params: Piece,
        body: Type.Object({ section_ids: Type.Array(Type.String(), { maxItems: 20 }) }, { additionalProperties: false }),
        response: { 200: Type.Ref('Draft'), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => call('ReorderSections', { ...req.body, ...req.params }, req),
  );
  app.get(
    '/org/builder/pieces/:draft_id/history',
    {
      config: read,
      schema: {
        tags: builderTags,
        summary: 'The piece’s history: every revision, oldest first',
        params: Piece,
        response: {
          200: Type.Array(
            Type.Object({
              revision: Type.Union([Type.Integer(), Type.Null()]),
              type: Type.String(),
              change: Type.Object({ kind: Type.String(), section_id: Type.Optional(Type.String()) }),
              actor: Type.Union([Type.String(), Type.Null()]),
              at: Timestamp,
              totals: Type.Optional(
                Type.Object({
                  sentences: Type.Integer(),
                  factual: Type.Integer(),
                  supported: Type.Integer(),
                  unsupported: Type.Integer(),
                }),
              ),
              verification: Type.Optional(Type.String()),
            }),
          ),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (req) => (await call<{ items: never[] }>('PieceHistory', req.params, req)).items,
  );
}
