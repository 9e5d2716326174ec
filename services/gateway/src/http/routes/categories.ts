import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RpcClient } from '@kb/rpc';
import { NullableTimestamp, Pagination, Timestamp, Uuid, errorResponses } from '../schemas.js';
import { callerOf } from '../auth-hook.js';

const Name = Type.String({ minLength: 2, maxLength: 255 });
const Description = Type.String({ maxLength: 1000 });

const Topic = Type.Object(
  {
    topic_id: Uuid,
    category_id: Uuid,
    name: Type.String(),
    description: Type.Optional(Type.String()),
    created_at: Timestamp,
    updated_at: Timestamp,
    deleted_at: NullableTimestamp,
  },
  { $id: 'Topic' },
);

const categoryFields = {
  category_id: Uuid,
  name: Type.String(),
  description: Type.Optional(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
  deleted_at: NullableTimestamp,
};
const Category = Type.Object(categoryFields, { $id: 'Category' });
const CategoryWithTopics = Type.Object({ ...categoryFields, topics: Type.Array(Type.Ref('Topic')) }, { $id: 'CategoryWithTopics' });

const TopicInput = Type.Object({ name: Name, description: Type.Optional(Description) }, { additionalProperties: false });
const CategoryPatch = Type.Object(
  { name: Type.Optional(Name), description: Type.Optional(Type.Union([Description, Type.Null()])) },
  { additionalProperties: false },
);
const CategoryParams = Type.Object({ category_id: Uuid });
const TopicParams = Type.Object({ category_id: Uuid, topic_id: Uuid });
const BatchCategories = Type.Object(
  {
    categories: Type.Array(
      Type.Object(
        { name: Name, description: Type.Optional(Description), topics: Type.Optional(Type.Array(TopicInput, { maxItems: 500 })) },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 100 },
    ),
  },
  { additionalProperties: false },
);
const BatchTopics = Type.Object({ topics: Type.Array(TopicInput, { minItems: 1, maxItems: 500 }) }, { additionalProperties: false });

interface TopicMessage {
  topic_id: string;
  category_id: string;
  name: string;
  description?: string;
  created_at: string;
  updated_at: string;
  deleted_at?: string;
}
interface CategoryMessage extends Omit<TopicMessage, 'topic_id' | 'category_id'> {
  category_id: string;
  topics?: TopicMessage[];
}

/** gRPC leaves an unset optional field out; the JSON API says null. */
const topicJson = (t: TopicMessage) => ({ ...t, deleted_at: t.deleted_at ?? null });
const categoryJson = ({ topics: _topics, ...c }: CategoryMessage) => ({ ...c, deleted_at: c.deleted_at ?? null });
const categoryWithTopicsJson = (c: CategoryMessage) => ({ ...categoryJson(c), topics: (c.topics ?? []).map(topicJson) });

/** PATCH: only present keys change; description null clears it. */
const patchMessage = (body: Static<typeof CategoryPatch>) => ({
  ...(body.name !== undefined && { name: body.name }),
  ...(body.description === null ? { clear_description: true } : body.description !== undefined ? { description: body.description } : {}),
});

const tags = ['Categories'];
const read = { auth: { credential: 'any', permission: 'read:kb' } } as const;
const write = { auth: { credential: 'any', permission: 'write:kb' } } as const;

/** Category/topic API: categories and topics (spec 2.2, 2.3, 4.2). */
export function categoryRoutes(kb: RpcClient): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addSchema(Topic);
    app.addSchema(Category);
    app.addSchema(CategoryWithTopics);

    app.get(
      '/categories',
      {
        config: read,
        schema: {
          tags,
          summary: 'List categories',
          description: 'Live (not deleted) categories, oldest first. The total is in the X-Total-Count header.',
          querystring: Pagination,
          response: { 200: Type.Array(Type.Ref('Category')), ...errorResponses(400, 401, 403) },
        },
      },
      async (req, reply) => {
        const res = await kb.call<{ categories: CategoryMessage[]; total_count: number }>('ListCategories', req.query, callerOf(req));
        void reply.header('x-total-count', String(res.total_count));
        return res.categories.map(categoryJson);
      },
    );

    app.post(
      '/categories',
      {
        config: write,
        schema: {
          tags,
          summary: 'Create a category',
          body: TopicInput,
          response: { 201: Type.Ref('Category'), ...errorResponses(400, 401, 403, 409) },
        },
      },
      async (req, reply) => reply.status(201).send(categoryJson(await kb.call<CategoryMessage>('CreateCategory', req.body, callerOf(req)))),
    );

    app.get(
      '/categories/all',
      {
        config: read,
        schema: {
          tags,
          summary: 'Every live category with its live topics',
          response: { 200: Type.Array(Type.Ref('CategoryWithTopics')), ...errorResponses(401, 403) },
        },
      },
      async (req) => {
        const res = await kb.call<{ categories: CategoryMessage[] }>('ListAllCategories', {}, callerOf(req));
        return res.categories.map(categoryWithTopicsJson);
      },
    );

    app.post(
      '/categories/batch-create',
      {
        config: write,
        schema: {
          tags,
          summary: 'Create categories with nested topics, all or nothing',
          body: BatchCategories,
          response: { 201: Type.Array(Type.Ref('CategoryWithTopics')), ...errorResponses(400, 401, 403, 409) },
        },
      },
      async (req, reply) => {
        const res = await kb.call<{ categories: CategoryMessage[] }>('BatchCreateCategories', req.body, callerOf(req));
        return reply.status(201).send(res.categories.map(categoryWithTopicsJson));
      },
    );

    app.get(
      '/categories/:category_id',
      {
        config: read,
        schema: {
          tags,
          summary: 'Get a category',
          params: CategoryParams,
          response: { 200: Type.Ref('Category'), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req) => categoryJson(await kb.call<CategoryMessage>('GetCategory', req.params, callerOf(req))),
    );

    app.put(
      '/categories/:category_id',
      {
        config: write,
        schema: {
          tags,
          summary: 'Replace a category (a description left out is cleared)',
          params: CategoryParams,
          body: TopicInput,
          response: { 200: Type.Ref('Category'), ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req) => categoryJson(await kb.call<CategoryMessage>('ReplaceCategory', { ...req.body, ...req.params }, callerOf(req))),
    );

    app.patch(
      '/categories/:category_id',
      {
        config: write,
        schema: {
          tags,
          summary: 'Change a category (only the fields sent; description null clears it)',
          params: CategoryParams,
          body: CategoryPatch,
          response: { 200: Type.Ref('Category'), ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req) =>
        categoryJson(await kb.call<CategoryMessage>('UpdateCategory', { ...patchMessage(req.body), ...req.params }, callerOf(req))),
    );

    app.delete(
      '/categories/:category_id',
      {
        config: write,
        schema: {
          tags,
          summary: 'Delete a category and its topics (sets deleted_at; the name can be reused)',
          params: CategoryParams,
          response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => {
        await kb.call('DeleteCategory', req.params, callerOf(req));
        return reply.status(204).send(null);
      },
    );

    app.post(
      '/categories/:category_id/topics',
      {
        config: write,
        schema: {
          tags,
          summary: 'Create a topic',
          params: CategoryParams,
          body: TopicInput,
          response: { 201: Type.Ref('Topic'), ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req, reply) =>
        reply.status(201).send(topicJson(await kb.call<TopicMessage>('CreateTopic', { ...req.body, ...req.params }, callerOf(req)))),
    );

    app.post(
      '/categories/:category_id/topics/batch-create',
      {
        config: write,
        schema: {
          tags,
          summary: 'Create topics, all or nothing',
          params: CategoryParams,
          body: BatchTopics,
          response: { 201: Type.Array(Type.Ref('Topic')), ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req, reply) => {
        const res = await kb.call<{ topics: TopicMessage[] }>('BatchCreateTopics', { ...req.body, ...req.params }, callerOf(req));
        return reply.status(201).send(res.topics.map(topicJson));
      },
    );

    app.patch(
      '/categories/:category_id/topics/:topic_id',
      {
        config: write,
        schema: {
          tags,
          summary: 'Change a topic (only the fields sent; description null clears it)',
          params: TopicParams,
          body: CategoryPatch,
          response: { 200: Type.Ref('Topic'), ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req) => topicJson(await kb.call<TopicMessage>('UpdateTopic', { ...patchMessage(req.body), ...req.params }, callerOf(req))),
    );

    app.delete(
      '/categories/:category_id/topics/:topic_id',
      {
        config: write,
        schema: {
          tags,
          summary: 'Delete a topic (sets deleted_at; the name can be reused)',
          params: TopicParams,
          response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => {
        await kb.call('DeleteTopic', req.params, callerOf(req));
        return reply.status(204).send(null);
      },
    );
  };
}
