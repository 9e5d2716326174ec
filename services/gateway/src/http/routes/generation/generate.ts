import { Type } from '@sinclair/typebox';
import { errors } from '@kb/platform';
import type { ServiceClients } from '../../../clients.js';
import { readScoped, type ItemMessage } from '../../intake-support.js';
import { Uuid, errorResponses } from '../../schemas.js';
import { callerOf } from '../../auth-hook.js';
import { generate, type App, type GenerationCalls } from './support.js';

/** The category/topic API's /generate: a grounded summary of content items, or a reply to a question. */

const GenerateBody = Type.Object(
  {
    type: Type.Union([Type.Literal('summary'), Type.Literal('reply')], {
      description: 'summary: of the content items in content_ids; reply: to `question`, from the knowledge base',
    }),
    content_ids: Type.Optional(Type.Array(Uuid, { minItems: 1, maxItems: 10, description: 'summary: the items to summarise' })),
    question: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, pattern: '\\S', description: 'reply: the question' })),
    category_id: Type.Optional(Uuid),
    topic_id: Type.Optional(Uuid),
    max_sentences: Type.Optional(Type.Integer({ minimum: 1, maximum: 20, default: 5 })),
  },
  { additionalProperties: false },
);
export const GenerateResult = Type.Object(
  {
    type: Type.String(),
    question: Type.Optional(Type.String()),
    text: Type.String({ description: 'the summary or reply, citing chunks as [n] = citations[n - 1]' }),
    grounded: Type.Boolean({ description: 'false when the knowledge base held nothing to say it from' }),
    sentences: Type.Array(
      Type.Object({
        index: Type.Integer(),
        text: Type.String(),
        verdict: Type.String(),
        citations: Type.Array(
          Type.Object({
            content_id: Uuid,
            version_id: Uuid,
            chunk_id: Type.String(),
            quote: Type.String(),
            score: Type.Optional(Type.Number()),
          }),
        ),
      }),
    ),
    citations: Type.Array(Type.Object({ n: Type.Integer(), content_id: Uuid, version_id: Uuid, chunk_id: Type.String() })),
  },
  { $id: 'GenerateResult' },
);

export function generateRoutes(app: App, { clients, call }: GenerationCalls) {
  app.post(
    '/generate',
    {
      config: generate,
      schema: {
        tags: ['Generate'],
        summary: 'Generate a grounded summary or reply, with citations',
        description:
          'summary: the lead sentences of the content items in content_ids; reply: an answer to `question` from the knowledge base ' +
          '(optionally one category or topic). Every sentence is checked by the fact checker and cites the chunks it comes from; ' +
          'unsupported sentences are left out. Limited to the key’s folder scope. Costs the generation credits (402 when out).',
        body: GenerateBody,
        response: { 200: Type.Ref('GenerateResult'), ...errorResponses(400, 401, 402, 403, 404) },
      },
    },
    async (req) => {
      const body = req.body;
      if (body.type === 'reply') {
        if (!body.question) throw errors.validation('question is required for a reply', { details: { field: 'question' } });
        const { content_ids: _c, ...rest } = body;
        return call('Generate', rest, req);
      }
      if (!body.content_ids?.length)
        throw errors.validation('content_ids is required for a summary', { details: { field: 'content_ids' } });
      const ctx = callerOf(req);
      const passages = [];
      for (const contentId of body.content_ids) {
        const detail = await readScoped<{ item: ItemMessage }>(clients as ServiceClients, ctx, contentId);
        type ChunkMessage = { chunk_index: number; text: string };
        const res = await clients.ingest.call<{ version_id: string; chunks: ChunkMessage[] }>(
          'ListChunks',
          { content_id: contentId, limit: 100, offset: 0 },
          ctx,
        );
        for (const c of res.chunks)
          passages.push({
            content_id: contentId,
            version_id: res.version_id,
            chunk_id: `${res.version_id}:${c.chunk_index}`,
            text: c.text,
            title: detail.item.title,
          });
      }
      return call('Generate', { type: 'summary', passages, max_sentences: body.max_sentences }, req);
    },
  );
}
