import { Type } from '@sinclair/typebox';
import { Uuid, errorResponses } from '../../schemas.js';
import { verifyMeter, type App, type GenerationCalls } from './support.js';

/** The fact checker: every sentence of a text checked against the knowledge base. */

const Support = Type.Object({ content_id: Uuid, version_id: Uuid, chunk_id: Type.String(), quote: Type.String(), score: Type.Number() });
export const VerifyResult = Type.Object(
  {
    sentences: Type.Array(
      Type.Object({
        index: Type.Integer(),
        text: Type.String(),
        start: Type.Integer({ description: 'offset in the text (UTF-16 code units)' }),
        end: Type.Integer({ description: 'end offset, exclusive' }),
        verdict: Type.Union(['supported', 'unsupported', 'contradicted', 'not_factual'].map((v) => Type.Literal(v))),
        reason: Type.Optional(Type.String({ description: 'why the sentence is not supported' })),
        support: Type.Array(Support),
      }),
    ),
    totals: Type.Object({ sentences: Type.Integer(), factual: Type.Integer(), supported: Type.Integer(), unsupported: Type.Integer() }),
    supported_ratio: Type.Object({ value: Type.Union([Type.Number(), Type.Null()]), display: Type.String() }),
  },
  { $id: 'VerifyResult' },
);
const VerifyInput = Type.Object(
  {
    text: Type.String({ minLength: 1, maxLength: 20000, pattern: '\\S' }),
    folder_ids: Type.Optional(Type.Array(Uuid, { maxItems: 50 })),
    tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50 })),
  },
  { additionalProperties: false },
);

export function verifyRoutes(app: App, { call }: GenerationCalls) {
  app.post(
    '/org/content/verify',
    {
      config: verifyMeter,
      schema: {
        tags: ['Content'],
        summary: 'Check every sentence of a text against the knowledge base',
        description:
          'Each sentence gets a verdict (supported, unsupported, contradicted, not_factual) and the chunks that back it, with the quoted span. ' +
          'Catches changed numbers and units, flipped directions, added or dropped negations and swapped entities. ' +
          'Limited to the key’s folder scope and to folder_ids / tags when given. Costs one query credit.',
        body: VerifyInput,
        response: { 200: Type.Ref('VerifyResult'), ...errorResponses(400, 401, 402, 403, 404) },
      },
    },
    async (req) => call('Verify', req.body, req),
  );
}
