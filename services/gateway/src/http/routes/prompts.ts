import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RpcClient } from '@kb/rpc';
import { NullableTimestamp, Pagination, Timestamp, Uuid, errorResponses, OrgPagination } from '../schemas.js';
import { callerOf } from '../auth-hook.js';
import { questionRoutes } from './questions.js';
import { Name, Text, read, write, writeOf, type ListPrompts, type PromptMessage } from './prompt-support.js';

const TagRefs = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  maxItems: 50,
  description: 'tags by id or by name; a name the organization lacks is created',
});
const PromptParams = Type.Object({ prompt_id: Uuid });

const promptFields = {
  prompt_id: Uuid,
  name: Type.String(),
  text: Type.String(),
  variables: Type.Array(Type.String(), { description: 'the {{variable}} names in text, in order of first use' }),
  created_at: Timestamp,
  updated_at: Timestamp,
  deleted_at: NullableTimestamp,
};
const Prompt = Type.Object(promptFields, { $id: 'Prompt', description: 'Prompt (spec 2.4)' });
const OrgPrompt = Type.Object(
  { ...promptFields, tags: Type.Array(Type.Object({ tag_id: Uuid, name: Type.String() })) },
  { $id: 'OrgPrompt', description: 'Prompt with its tags (Organization API)' },
);
const Suggestion = Type.Object(
  {
    name: Type.String(),
    text: Type.String(),
    source: Type.Object({
      type: Type.Union([Type.Literal('category'), Type.Literal('topic'), Type.Literal('content')]),
      id: Uuid,
      name: Type.String(),
    }),
    supporting_content_ids: Type.Array(Uuid),
    confidence: Type.Number({ minimum: 0, maximum: 1 }),
  },
  { $id: 'PromptSuggestion' },
);

const CreatePrompt = Type.Object({ name: Name, text: Text, tags: Type.Optional(TagRefs) }, { additionalProperties: false });
const ReplaceOrgPrompt = CreatePrompt;
const PatchPrompt = Type.Object(
  { name: Type.Optional(Name), text: Type.Optional(Text), tags: Type.Optional(TagRefs) },
  { additionalProperties: false, minProperties: 1 },
);
const ReplacePrompt = Type.Object({ name: Name, text: Text }, { additionalProperties: false });
/** The prompts of the caller's organization, a page at a time (shared by the prompt and question views). */
const orgPromptJson = (p: PromptMessage) => ({ ...p, variables: p.variables ?? [], tags: p.tags ?? [], deleted_at: p.deleted_at ?? null });
const promptJson = ({ tags: _tags, ...p }: PromptMessage) => ({ ...p, variables: p.variables ?? [], deleted_at: p.deleted_at ?? null });
/** Prompts on both surfaces (spec 2.4, 4.1, 4.2), the Questions view, and suggestions (spec 8). */
export function promptRoutes(prompts: RpcClient): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addSchema(Prompt);
    app.addSchema(OrgPrompt);
    app.addSchema(Suggestion);
    const list: ListPrompts = async (query, req) =>
      prompts.call<{ prompts?: PromptMessage[]; total_count: number }>('ListPrompts', query, callerOf(req));

    // --- Organization API: /org/prompts ---
    const tags = ['Prompts'];
    app.post(
      '/org/prompts',
      {
        config: write,
        schema: {
          tags,
          summary: 'Create a prompt',
          description: 'Tags (by id or name) are applied on creation; unknown names become tags. 409 when the name is taken.',
          body: CreatePrompt,
          response: { 201: Type.Ref('OrgPrompt'), ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req, reply) =>
        reply.status(201).send(orgPromptJson(await prompts.call<PromptMessage>('CreatePrompt', req.body, callerOf(req)))),
    );
    app.get(
      '/org/prompts',
      {
        config: read,
        schema: {
          tags,
          summary: 'List prompts',
          description: 'Live prompts, oldest first; limit 1 to 100 (default 50). The total is in X-Total-Count.',
          querystring: OrgPagination,
          response: { 200: Type.Array(Type.Ref('OrgPrompt')), ...errorResponses(400, 401, 403) },
        },
      },
      async (req, reply) => {
        const r = await list(req.query, req);
        void reply.header('x-total-count', String(r.total_count));
        return (r.prompts ?? []).map(orgPromptJson);
      },
    );
    app.post(
      '/org/prompts/suggestions',
      {
        config: read,
        schema: {
          tags,
          summary: 'Suggest prompts the knowledge base answers well',
          description:
            'Questions built from the categories, topics and content, each checked against the knowledge base (only well-supported ones), ' +
            'never a duplicate of an existing prompt. Own rate limit per organization (PROMPT_SUGGESTIONS_PER_MINUTE, default 10 a minute): ' +
            '429 with Retry-After beyond it.',
          body: Type.Optional(
            Type.Object({ count: Type.Optional(Type.Integer({ minimum: 1, maximum: 20, default: 5 })) }, { additionalProperties: false }),
          ),
          response: {
            200: Type.Object({ suggestions: Type.Array(Type.Ref('PromptSuggestion')) }),
            ...errorResponses(400, 401, 403, 429),
          },
        },
      },
      async (req) => {
        const r = await prompts.call<{ suggestions?: unknown[] }>('SuggestPrompts', req.body ?? {}, callerOf(req));
        return { suggestions: r.suggestions ?? [] };
      },
    );
    app.get(
      '/org/prompts/:prompt_id',
      {
        config: read,
        schema: {
          tags,
          summary: 'Get a prompt',
          params: PromptParams,
          response: { 200: Type.Ref('OrgPrompt'), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req) => orgPromptJson(await prompts.call<PromptMessage>('GetPrompt', req.params, callerOf(req))),
    );
    app.put(
      '/org/prompts/:prompt_id',
      {
        config: write,
        schema: {
          tags,
          summary: 'Replace a prompt',
          description: 'name and text required; tags replace the prompt’s tags (left out: none).',
          params: PromptParams,
          body: ReplaceOrgPrompt,
          response: { 200: Type.Ref('OrgPrompt'), ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req) =>
        orgPromptJson(
          await prompts.call<PromptMessage>(
            'ReplacePrompt',
            { prompt_id: req.params.prompt_id, ...writeOf({ ...req.body, tags: req.body.tags ?? [] }) },
            callerOf(req),
          ),
        ),
    );
    app.patch(
      '/org/prompts/:prompt_id',
      {
        config: write,
        schema: {
          tags,
          summary: 'Change a prompt',
          description: 'Only the fields sent change; tags, when sent, replace the set.',
          params: PromptParams,
          body: PatchPrompt,
          response: { 200: Type.Ref('OrgPrompt'), ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req) =>
        orgPromptJson(
          await prompts.call<PromptMessage>('UpdatePrompt', { prompt_id: req.params.prompt_id, ...writeOf(req.body) }, callerOf(req)),
        ),
    );
    app.delete(
      '/org/prompts/:prompt_id',
      {
        config: write,
        schema: {
          tags,
          summary: 'Delete a prompt',
          description: 'Sets deleted_at; the name is free again.',
          params: PromptParams,
          response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => {
        await prompts.call('DeletePrompt', req.params, callerOf(req));
        return reply.status(204).send(null);
      },
    );

    // --- Category/topic API: /prompts ---
    app.get(
      '/prompts',
      {
        config: read,
        schema: {
          tags,
          summary: 'List prompts',
          description: 'Live prompts, oldest first. The total is in the X-Total-Count header.',
          querystring: Pagination,
          response: { 200: Type.Array(Type.Ref('Prompt')), ...errorResponses(400, 401, 403) },
        },
      },
      async (req, reply) => {
        const r = await list(req.query, req);
        void reply.header('x-total-count', String(r.total_count));
        return (r.prompts ?? []).map(promptJson);
      },
    );
    app.put(
      '/prompts/:prompt_id',
      {
        config: write,
        schema: {
          tags,
          summary: 'Replace a prompt',
          description: 'name and text required; the prompt’s tags are kept.',
          params: PromptParams,
          body: ReplacePrompt,
          response: { 200: Type.Ref('Prompt'), ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req) =>
        promptJson(
          await prompts.call<PromptMessage>(
            'ReplacePrompt',
            { prompt_id: req.params.prompt_id, name: req.body.name, text: req.body.text, has_tags: false },
            callerOf(req),
          ),
        ),
    );

    questionRoutes(app, prompts, list);
  };
}
