import { Type } from '@sinclair/typebox';
import { Timestamp, errorResponses } from '../../schemas.js';
import { Text, Texts, read, write, type App, type GenerationCalls } from './support.js';

/** The brand kit: one per organization, the voice and rules generation applies to every draft. */

export const Guidelines = Type.Object(
  {
    voice: Type.Optional(Text(2000, 'how the brand sounds, e.g. "confident, plain-spoken"')),
    tone: Type.Optional(Text(2000)),
    persona: Type.Optional(Text(2000, 'who is speaking')),
    audience: Type.Optional(Text(2000, 'who is reading')),
    reading_level: Type.Optional(Text(2000, 'e.g. "grade 8" or "expert"')),
    do_rules: Type.Optional(Texts('rules to follow')),
    dont_rules: Type.Optional(Texts('rules to avoid breaking')),
    preferred_terms: Type.Optional(
      Type.Array(
        Type.Object(
          {
            term: Type.String({ minLength: 1, maxLength: 200 }),
            instead_of: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 20 }),
          },
          { additionalProperties: false },
        ),
        { maxItems: 100, description: 'generated text writes `term` wherever a source says one of `instead_of`' },
      ),
    ),
    banned_terms: Type.Optional(Texts('a sentence with one of these is never used')),
    formatting: Type.Optional(
      Type.Object(
        {
          max_sentence_words: Type.Optional(Type.Integer({ minimum: 5, maximum: 200, description: 'longer sentences are not used' })),
          heading_case: Type.Optional(Type.Union([Type.Literal('title'), Type.Literal('sentence')])),
          bullet_lists: Type.Optional(Type.Boolean({ description: 'each section as a bulleted list instead of a paragraph' })),
        },
        { additionalProperties: false },
      ),
    ),
    example_passages: Type.Optional(Texts('passages in the house style (given to the chat model)', 20, 5000)),
  },
  { additionalProperties: false, $id: 'BrandKitGuidelines', description: 'closed: an unknown key is a 400 naming it' },
);

export const BrandKit = Type.Object(
  { name: Type.String(), guidelines: Type.Ref('BrandKitGuidelines'), created_at: Timestamp, updated_at: Timestamp },
  { $id: 'BrandKit' },
);
const BrandKitPut = Type.Object(
  { name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), guidelines: Type.Ref('BrandKitGuidelines') },
  { additionalProperties: false },
);
const GuidelinesPatch = Type.Object(
  Object.fromEntries(Object.entries(Guidelines.properties).map(([k, v]) => [k, Type.Optional(Type.Union([v, Type.Null()]))])),
  { additionalProperties: false },
);
const BrandKitPatch = Type.Object(
  { name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), guidelines: Type.Optional(GuidelinesPatch) },
  { additionalProperties: false, description: 'each guideline key given replaces that key; null removes it' },
);

export function brandKitRoutes(app: App, { call }: GenerationCalls) {
  const brand = ['Brand Kit'];
  app.get(
    '/org/brand-kit',
    {
      config: read,
      schema: {
        tags: brand,
        summary: 'The brand kit',
        description: '404 until one is set.',
        response: { 200: Type.Ref('BrandKit'), ...errorResponses(401, 403, 404) },
      },
    },
    async (req) => call('GetBrandKit', {}, req),
  );
  app.put(
    '/org/brand-kit',
    {
      config: write,
      schema: {
        tags: brand,
        summary: 'Create or replace the brand kit',
        description: 'One per organization; the guidelines given are the whole set. Generation applies them to every draft.',
        body: BrandKitPut,
        response: { 200: Type.Ref('BrandKit'), ...errorResponses(400, 401, 403) },
      },
    },
    async (req) => call('PutBrandKit', req.body, req),
  );
  app.patch(
    '/org/brand-kit',
    {
      config: write,
      schema: {
        tags: brand,
        summary: 'Change some of the brand kit',
        body: BrandKitPatch,
        response: { 200: Type.Ref('BrandKit'), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => call('PatchBrandKit', req.body, req),
  );
}
