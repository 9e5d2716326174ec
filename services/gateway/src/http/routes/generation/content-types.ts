import { Type } from '@sinclair/typebox';
import { Timestamp, Uuid, errorResponses, OrgPagination } from '../../schemas.js';
import { read, write, type App, type AutoPublish, type GenerationCalls, type Req } from './support.js';

/** Content types (what a run drafts: sections, format, length, auto-publish) and product lines (what it is about). */

const Section = Type.Object(
  { title: Type.String({ minLength: 1, maxLength: 200 }), instructions: Type.Optional(Type.String({ maxLength: 2000 })) },
  { additionalProperties: false },
);
const ConfigProps = {
  kind: Type.Union([Type.Literal('article'), Type.Literal('qa'), Type.Literal('summary'), Type.Literal('other')], {
    description: 'default article; lets a destination pick a schema.org type',
  }),
  format: Type.Union([Type.Literal('markdown'), Type.Literal('html')], { description: 'default markdown' }),
  sections: Type.Array(Section, { minItems: 1, maxItems: 20, description: 'default one "Overview" section' }),
  target_length: Type.Object(
    { min_words: Type.Integer({ minimum: 0, maximum: 20000 }), max_words: Type.Integer({ minimum: 10, maximum: 20000 }) },
    { additionalProperties: false, description: 'default 50 to 600 words' },
  ),
  citation_style: Type.Union([Type.Literal('numeric'), Type.Literal('none')], { description: '[n] markers in the body (default) or none' }),
  unsupported_sentences: Type.Union([Type.Literal('remove'), Type.Literal('block')], {
    description: 'a sentence still unsupported after one repair is removed (default), or kept and the draft marked needs_review',
  }),
  auto_publish: Type.Boolean({ description: 'publish as soon as a draft is verified (default false)' }),
  publish_destination_ids: Type.Array(Uuid, { maxItems: 20 }),
};
const ContentTypeConfigInput = Type.Object(
  {
    ...Object.fromEntries(Object.entries(ConfigProps).map(([k, v]) => [k, Type.Optional(v)])),
    target_length: Type.Optional(
      Type.Object(
        {
          min_words: Type.Optional(Type.Integer({ minimum: 0, maximum: 20000, description: 'default 0' })),
          max_words: Type.Optional(Type.Integer({ minimum: 10, maximum: 20000, description: 'default 600' })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  {
    additionalProperties: false,
    description: 'closed: an unknown key is a 400 naming it',
  },
);
export const ContentType = Type.Object(
  {
    content_type_id: Uuid,
    name: Type.String(),
    description: Type.String(),
    config: Type.Object(ConfigProps),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'ContentType' },
);
const ContentTypeInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.String({ maxLength: 5000 })),
    config: Type.Optional(ContentTypeConfigInput),
  },
  { additionalProperties: false },
);

export const ProductLine = Type.Object(
  {
    product_line_id: Uuid,
    name: Type.String(),
    details: Type.Record(Type.String(), Type.Unknown()),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'ProductLine' },
);
const ProductLineInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    details: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'any JSON object (at most 32 KB)' })),
  },
  { additionalProperties: false },
);

export function contentTypeRoutes(app: App, { call, listed, requirePublisher }: GenerationCalls) {
  const crud = (
    path: string,
    param: 'content_type_id' | 'product_line_id',
    ref: string,
    input: typeof ContentTypeInput | typeof ProductLineInput,
    noun: string,
    methods: { list: string; get: string; create: string; update: string; remove: string },
    tag: string,
    /** Checks a create or replace body before it is sent (and the error codes it may answer). */
    check?: { run: (req: Req, body: unknown) => Promise<void>; codes: readonly (404 | 422)[] },
  ) => {
    const Params = Type.Object({ [param]: Uuid });
    const checked = check?.codes ?? [];
    app.get(
      path,
      {
        config: read,
        schema: {
          tags: [tag],
          summary: `List ${noun}s`,
          description: 'Oldest first; the total is in X-Total-Count.',
          querystring: OrgPagination,
          response: { 200: Type.Array(Type.Ref(ref)), ...errorResponses(400, 401, 403) },
        },
      },
      async (req, reply) => listed(methods.list, req.query, req, reply),
    );
    app.post(
      path,
      {
        config: write,
        schema: {
          tags: [tag],
          summary: `Create a ${noun}`,
          body: input,
          response: { 201: Type.Ref(ref), ...errorResponses(400, 401, 403, ...checked) },
        },
      },
      async (req, reply) => {
        await check?.run(req, req.body);
        return reply.status(201).send(await call(methods.create, req.body, req));
      },
    );
    app.get(
      `${path}/:${param}`,
      {
        config: read,
        schema: {
          tags: [tag],
          summary: `Get a ${noun}`,
          params: Params,
          response: { 200: Type.Ref(ref), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req) => call(methods.get, req.params, req),
    );
    app.put(
      `${path}/:${param}`,
      {
        config: write,
        schema: {
          tags: [tag],
          summary: `Replace a ${noun}`,
          params: Params,
          body: input,
          response: { 200: Type.Ref(ref), ...errorResponses(400, 401, 403, 404, ...checked.filter((c) => c !== 404)) },
        },
      },
      async (req) => {
        await check?.run(req, req.body);
        return call(methods.update, { ...(req.body as object), ...(req.params as object) }, req);
      },
    );
    app.delete(
      `${path}/:${param}`,
      {
        config: write,
        schema: {
          tags: [tag],
          summary: `Delete a ${noun}`,
          params: Params,
          response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => {
        await call(methods.remove, req.params, req);
        return reply.status(204).send(null);
      },
    );
  };
  crud(
    '/org/content-types',
    'content_type_id',
    'ContentType',
    ContentTypeInput,
    'content type',
    {
      list: 'ListContentTypes',
      get: 'GetContentType',
      create: 'CreateContentType',
      update: 'UpdateContentType',
      remove: 'DeleteContentType',
    },
    'Content Types',
    { run: (req, body) => requirePublisher(req, (body as { config?: AutoPublish }).config), codes: [404, 422] },
  );
  crud(
    '/org/product-lines',
    'product_line_id',
    'ProductLine',
    ProductLineInput,
    'product line',
    {
      list: 'ListProductLines',
      get: 'GetProductLine',
      create: 'CreateProductLine',
      update: 'UpdateProductLine',
      remove: 'DeleteProductLine',
    },
    'Product Lines',
  );
}
