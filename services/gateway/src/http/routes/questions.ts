import { Type, type Static } from '@sinclair/typebox';
import type { RpcClient } from '@kb/rpc';
import { Timestamp, Uuid, errorResponses, OrgPagination } from '../schemas.js';
import { callerOf } from '../auth-hook.js';
import { Name, Text, read, write, writeOf, type ListPrompts, type PromptMessage } from './prompt-support.js';

/** Questions: the organization's prompts seen as questions (a lighter view of the same data). */

export const Question = Type.Object(
  {
    question_id: Uuid,
    name: Type.String(),
    question: Type.String({ description: 'the prompt text' }),
    variables: Type.Array(Type.String()),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Question', description: 'A prompt seen as a question (lighter view of the same data)' },
);
const QuestionParams = Type.Object({ question_id: Uuid });
const CreateQuestion = Type.Object(
  { question: Text, name: Type.Optional({ ...Name, description: 'defaults to the question text (cut to 255 characters)' }) },
  { additionalProperties: false },
);
const PatchQuestion = Type.Object(
  { question: Type.Optional(Text), name: Type.Optional(Name) },
  { additionalProperties: false, minProperties: 1 },
);

const questionJson = (p: PromptMessage) => ({
  question_id: p.prompt_id,
  name: p.name,
  question: p.text,
  variables: p.variables ?? [],
  created_at: p.created_at,
  updated_at: p.updated_at,
});
/** A question's name when none is given: its text on one line, cut to 255 characters. */
const nameFromQuestion = (q: string) => {
  const line = q.replace(/\s+/g, ' ').trim();
  return line.length <= 255 ? line : `${line.slice(0, 254).trimEnd()}…`;
};

export function questionRoutes(
  app: Parameters<import('@fastify/type-provider-typebox').FastifyPluginAsyncTypebox>[0],
  prompts: RpcClient,
  list: ListPrompts,
) {
  app.addSchema(Question);
  const qtags = ['Questions'];
  app.get(
    '/org/questions',
    {
      config: read,
      schema: {
        tags: qtags,
        summary: 'List questions',
        description: 'The organization’s prompts as questions, oldest first; limit 1 to 100 (default 50). Total in X-Total-Count.',
        querystring: OrgPagination,
        response: { 200: Type.Array(Type.Ref('Question')), ...errorResponses(400, 401, 403) },
      },
    },
    async (req, reply) => {
      const r = await list(req.query, req);
      void reply.header('x-total-count', String(r.total_count));
      return (r.prompts ?? []).map(questionJson);
    },
  );
  app.post(
    '/org/questions',
    {
      config: write,
      schema: {
        tags: qtags,
        summary: 'Add a question',
        description: 'Creates a prompt whose text is the question; name defaults to the question. 409 when the name is taken.',
        body: CreateQuestion,
        response: { 201: Type.Ref('Question'), ...errorResponses(400, 401, 403, 409) },
      },
    },
    async (req, reply) => {
      const body: Static<typeof CreateQuestion> = req.body;
      const created = await prompts.call<PromptMessage>(
        'CreatePrompt',
        { name: body.name ?? nameFromQuestion(body.question), text: body.question, tags: [] },
        callerOf(req),
      );
      return reply.status(201).send(questionJson(created));
    },
  );
  app.get(
    '/org/questions/:question_id',
    {
      config: read,
      schema: {
        tags: qtags,
        summary: 'Get a question',
        params: QuestionParams,
        response: { 200: Type.Ref('Question'), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => questionJson(await prompts.call<PromptMessage>('GetPrompt', { prompt_id: req.params.question_id }, callerOf(req))),
  );
  app.patch(
    '/org/questions/:question_id',
    {
      config: write,
      schema: {
        tags: qtags,
        summary: 'Change a question',
        params: QuestionParams,
        body: PatchQuestion,
        response: { 200: Type.Ref('Question'), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req) =>
      questionJson(
        await prompts.call<PromptMessage>(
          'UpdatePrompt',
          { prompt_id: req.params.question_id, ...writeOf({ name: req.body.name, text: req.body.question }), has_tags: false },
          callerOf(req),
        ),
      ),
  );
  app.delete(
    '/org/questions/:question_id',
    {
      config: write,
      schema: {
        tags: qtags,
        summary: 'Delete a question',
        params: QuestionParams,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      await prompts.call('DeletePrompt', { prompt_id: req.params.question_id }, callerOf(req));
      return reply.status(204).send(null);
    },
  );
}
