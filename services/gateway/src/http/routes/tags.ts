import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RpcClient } from '@kb/rpc';
import { Timestamp, Uuid, errorResponses } from '../schemas.js';
import { callerOf } from '../auth-hook.js';

const TagName = Type.String({
  minLength: 1,
  maxLength: 100,
  description: '1 to 100 characters; unique in the organization, ignoring case',
});
const Color = Type.String({ pattern: '^#[0-9a-fA-F]{6}$', description: '#rrggbb' });
const Tag = Type.Object(
  { tag_id: Uuid, name: Type.String(), color: Type.Optional(Type.String()), created_at: Timestamp, updated_at: Timestamp },
  { $id: 'Tag' },
);
const SourceKind = Type.Union([Type.Literal('raw'), Type.Literal('file'), Type.Literal('url')]);
const TagRule = Type.Object(
  {
    rule_id: Uuid,
    tag_id: Uuid,
    folder_id: Type.Optional(Uuid),
    format: Type.Optional(Type.String()),
    source_kind: Type.Optional(SourceKind),
    created_at: Timestamp,
  },
  { $id: 'TagRule' },
);

/** limit 1 to 100, default 50 (spec 8: most Organization API lists). */
const Page = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
    offset: Type.Integer({ minimum: 0, default: 0 }),
  },
  { additionalProperties: false },
);
const CreateTag = Type.Object({ name: TagName, color: Type.Optional(Color) }, { additionalProperties: false });
const TagPatch = Type.Object(
  { name: Type.Optional(TagName), color: Type.Optional(Type.Union([Color, Type.Null()], { description: 'null clears it' })) },
  { additionalProperties: false },
);
const CreateRule = Type.Object(
  {
    tag: Type.String({ minLength: 1, maxLength: 100, description: 'The tag by id or by name (an unknown name creates it)' }),
    folder_id: Type.Optional(Type.String({ format: 'uuid', description: 'Content filed in this folder or below it' })),
    format: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9]{1,20}$', description: 'File format, e.g. pdf, docx, csv' })),
    source_kind: Type.Optional(SourceKind),
  },
  { additionalProperties: false, minProperties: 2 },
);
const TagParams = Type.Object({ tag_id: Uuid });
const RuleParams = Type.Object({ rule_id: Uuid });

interface TagMessage {
  tag_id: string;
  name: string;
  color?: string;
  created_at: string;
  updated_at: string;
}

const tags = ['Tags'];
const read = { auth: { credential: 'any', permission: 'read:kb' } } as const;
const write = { auth: { credential: 'any', permission: 'write:kb' } } as const;

/** Organization API: tags and the automatic tag rules (spec 2.8). */
export function tagRoutes(tagService: RpcClient): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addSchema(Tag);
    app.addSchema(TagRule);

    app.get(
      '/org/tags',
      {
        config: read,
        schema: {
          tags,
          summary: 'List tags',
          description: 'Oldest first. The total is in the X-Total-Count header.',
          querystring: Page,
          response: { 200: Type.Array(Type.Ref('Tag')), ...errorResponses(400, 401, 403) },
        },
      },
      async (req, reply) => {
        const res = await tagService.call<{ tags?: TagMessage[]; total_count?: number }>('ListTags', req.query, callerOf(req));
        void reply.header('x-total-count', String(res.total_count ?? 0));
        return res.tags ?? [];
      },
    );

    app.post(
      '/org/tags',
      {
        config: write,
        schema: {
          tags,
          summary: 'Create a tag',
          description: '409 when the organization has a tag of that name (ignoring case).',
          body: CreateTag,
          response: { 201: Type.Ref('Tag'), ...errorResponses(400, 401, 403, 409) },
        },
      },
      async (req, reply) => reply.status(201).send(await tagService.call<TagMessage>('CreateTag', req.body, callerOf(req))),
    );

    app.patch(
      '/org/tags/:tag_id',
      {
        config: write,
        schema: {
          tags,
          summary: 'Rename or recolor a tag',
          description: 'Only the fields sent change; color null clears it. 409 when the new name is taken.',
          params: TagParams,
          body: TagPatch,
          response: { 200: Type.Ref('Tag'), ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req) => {
        const { color, ...rest } = req.body as Static<typeof TagPatch>;
        const message = { ...rest, ...req.params, ...(color === null ? { clear_color: true } : color !== undefined ? { color } : {}) };
        return tagService.call<TagMessage>('UpdateTag', message, callerOf(req));
      },
    );

    app.delete(
      '/org/tags/:tag_id',
      {
        config: write,
        schema: {
          tags,
          summary: 'Delete a tag',
          description: 'The tag disappears from everything it was attached to; its name is free again.',
          params: TagParams,
          response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => {
        await tagService.call('DeleteTag', req.params, callerOf(req));
        return reply.status(204).send(null);
      },
    );

    app.get(
      '/org/tags/rules',
      {
        config: read,
        schema: {
          tags,
          summary: 'List automatic tag rules',
          description:
            'Content matching every condition of a rule gets its tag: raw content when it is created, uploaded files when their ' +
            'ingestion finishes. The total is in the X-Total-Count header.',
          querystring: Page,
          response: { 200: Type.Array(Type.Ref('TagRule')), ...errorResponses(400, 401, 403) },
        },
      },
      async (req, reply) => {
        const res = await tagService.call<{ rules?: unknown[]; total_count?: number }>('ListTagRules', req.query, callerOf(req));
        void reply.header('x-total-count', String(res.total_count ?? 0));
        return res.rules ?? [];
      },
    );

    app.post(
      '/org/tags/rules',
      {
        config: write,
        schema: {
          tags,
          summary: 'Create an automatic tag rule',
          description:
            'tag plus at least one condition: folder_id (the folder or below it), format (file format such as pdf) and/or ' +
            'source_kind (raw, file, url). 404 when the tag id or the folder does not exist; 403 when the folder is outside the ' +
            "key's folder scope.",
          body: CreateRule,
          response: { 201: Type.Ref('TagRule'), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => reply.status(201).send(await tagService.call('CreateTagRule', req.body, callerOf(req))),
    );

    app.delete(
      '/org/tags/rules/:rule_id',
      {
        config: write,
        schema: {
          tags,
          summary: 'Delete an automatic tag rule',
          params: RuleParams,
          response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => {
        await tagService.call('DeleteTagRule', req.params, callerOf(req));
        return reply.status(204).send(null);
      },
    );
  };
}
