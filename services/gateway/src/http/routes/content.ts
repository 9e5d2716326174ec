import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { errors } from '@kb/platform';
import type { ServiceClients } from '../../clients.js';
import { Pagination, Uuid, errorResponses } from '../schemas.js';
import { callerOf } from '../auth-hook.js';
import { TagRefs } from './kb-tree.js';
import {
  ContentItem,
  FormFile,
  checkFiling,
  createRawContent,
  DuplicateRaw,
  duplicateRawBody,
  checkFolder,
  field,
  multipartRouteValidation,
  isUuid,
  itemJson,
  readScoped,
  registerMultipart,
  uploadFiles,
  uploadOf,
  withSubfolders,
  type ItemMessage,
  type MultipartBody,
  type UploadBudget,
} from '../intake-support.js';

const tags = ['Content'];
const read = { auth: { credential: 'any', permission: 'read:kb' } } as const;
const write = { auth: { credential: 'any', permission: 'write:kb' } } as const;
const ingest = { auth: { credential: 'any', permission: 'write:kb' }, meter: { operation: 'ingest' } } as const;

/** Spec 8: this surface takes PDF, DOCX and DOC files only. */
const FILE_FORMATS = ['pdf', 'docx', 'doc'];
const UNTITLED = 'Untitled Content';

const ContentParams = Type.Object({ content_id: Uuid });
const ListQuery = Type.Object(
  { ...Pagination.properties, category_id: Type.Optional(Uuid), topic_id: Type.Optional(Uuid) },
  { additionalProperties: false },
);
const RawContent = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 500 }),
    text: Type.String({ minLength: 1, description: 'Plain text or Markdown' }),
    summary: Type.Optional(Type.String({ maxLength: 5000 })),
    category_id: Type.Optional(Uuid),
    topic_id: Type.Optional(Uuid),
    parent_id: Type.Optional(Type.Union([Uuid, Type.Null()])),
    tags: Type.Optional(TagRefs),
  },
  { additionalProperties: false },
);
const Title = (v: string) => v.trim().length > 0 && v.length <= 500;
const Summary = (v: string) => v.length <= 5000;

const fileDescription = 'PDF, DOCX or DOC (checked from the bytes during processing; a mismatch ends failed)';
const FormTitle = Type.String({ minLength: 1, maxLength: 500 });
const FormSummary = Type.String({ maxLength: 5000 });
const CreateForm = Type.Object({
  file: FormFile(fileDescription),
  title: Type.Optional(FormTitle),
  summary: Type.Optional(FormSummary),
  category_id: Type.Optional(Uuid),
  topic_id: Type.Optional(Uuid),
});
const ReplaceForm = Type.Object({ title: FormTitle, file: FormFile(fileDescription), summary: Type.Optional(FormSummary) });
const PatchForm = Type.Object({
  title: Type.Optional(FormTitle),
  summary: Type.Optional(Type.String({ maxLength: 5000, description: 'An empty value clears the summary' })),
  file: Type.Optional(FormFile(fileDescription)),
  category_id: Type.Optional(Uuid),
  topic_id: Type.Optional(Uuid),
});

/** The one file of a /content/file request (required or not). */
function singleFile(upload: MultipartBody, required: boolean) {
  if (upload.files.length > 1) throw errors.validation('Send one file in the field `file`', { details: { field: 'file' } });
  const file = upload.files[0];
  if (required && !file) throw errors.validation('request.file is required', { details: { field: 'file' } });
  return file;
}

/** Category/topic API content (spec 2.1, 4.2): the listing, raw text, and PDF/DOCX/DOC files with versions. */
export function contentRoutes(clients: ServiceClients, maxUploadBytes: number, budget?: UploadBudget): FastifyPluginAsyncTypebox {
  return async (app) => {
    await registerMultipart(app as unknown as FastifyInstance, {
      maxUploadBytes,
      ingest: clients.ingest,
      ...(budget && { budget }),
      fileFields: ['file'],
      textFields: ['title', 'summary', 'category_id', 'topic_id'],
    });

    app.get(
      '/content',
      {
        config: read,
        schema: {
          tags,
          summary: 'List content',
          description: 'Content items of the organization, oldest first; optionally only those filed under a category or topic.',
          querystring: ListQuery,
          response: {
            200: Type.Object({
              items: Type.Array(ContentItem),
              total_count: Type.Integer(),
              limit: Type.Integer(),
              offset: Type.Integer(),
            }),
            ...errorResponses(400, 401, 403),
          },
        },
      },
      async (req) => {
        const res = await clients.ingest.call<{ items: ItemMessage[]; total_count: number }>(
          'ListContent',
          req.query,
          await withSubfolders(clients.kbTree, callerOf(req)),
        );
        return { items: res.items.map(itemJson), total_count: res.total_count, limit: req.query.limit, offset: req.query.offset };
      },
    );

    app.post(
      '/content',
      {
        config: ingest,
        schema: {
          tags,
          summary: 'Upload raw text',
          description:
            'Plain text or Markdown as a content item of type raw; processed asynchronously (202, processing_status queued). ' +
            'Text whose bytes are already live content of the organization is skipped as a duplicate (422 with the existing ' +
            "item's content_id, the field this answer names a new item by).",
          body: RawContent,
          response: { 202: ContentItem, ...errorResponses(400, 401, 402, 403, 404), 422: DuplicateRaw },
        },
      },
      async (req, reply) => {
        try {
          return await reply.status(202).send(itemJson(await createRawContent(clients, callerOf(req), req.body)));
        } catch (err) {
          const duplicate = duplicateRawBody(err);
          if (!duplicate) throw err;
          return reply.status(422).send(duplicate);
        }
      },
    );

    app.get(
      '/content/:content_id',
      {
        config: read,
        schema: {
          tags,
          summary: 'Get a content item',
          params: ContentParams,
          response: { 200: ContentItem, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req) => itemJson((await readScoped<{ item: ItemMessage }>(clients, callerOf(req), req.params.content_id)).item),
    );

    app.post(
      '/content/file',
      {
        config: ingest,
        validatorCompiler: multipartRouteValidation(),
        schema: {
          tags,
          summary: 'Upload a file',
          description:
            `multipart/form-data: file (required; ${fileDescription}), title (optional, default "${UNTITLED}"), summary, ` +
            'category_id, topic_id (optional). 202 with the content item, processing_status queued. The same bytes already ' +
            'in the organization are a duplicate: 422.',
          consumes: ['multipart/form-data'],
          body: CreateForm,
          response: { 202: ContentItem, ...errorResponses(400, 401, 402, 403, 404, 422) },
        },
      },
      async (req, reply) => {
        const ctx = callerOf(req);
        const upload = uploadOf(req);
        const file = singleFile(upload, true)!;
        const title = field(upload, 'title', Title, 'must be 1 to 500 characters') ?? UNTITLED;
        const summary = field(upload, 'summary', Summary, 'must be at most 5000 characters');
        const categoryId = field(upload, 'category_id', isUuid, 'must be a uuid');
        const topicId = field(upload, 'topic_id', isUuid, 'must be a uuid');
        await checkFolder(clients.kbTree, ctx, undefined);
        await checkFiling(clients.categories, ctx, { category_id: categoryId, topic_id: topicId });
        const [outcome] = await uploadFiles(clients.ingest, ctx, [file], {
          filing: { ...(categoryId && { category_id: categoryId }), ...(topicId && { topic_id: topicId }), tags: [] },
          title,
          ...(summary !== undefined && { summary }),
          allowed_formats: FILE_FORMATS,
        });
        return reply.status(202).send(itemJson(outcome!.item!));
      },
    );

    app.put(
      '/content/file/:content_id',
      {
        config: ingest,
        validatorCompiler: multipartRouteValidation(),
        schema: {
          tags,
          summary: 'Replace the file (new version)',
          description:
            `multipart/form-data: title and file (${fileDescription}) required, summary optional. The file becomes a new version ` +
            '(version_num goes up by one; earlier versions stay listed); 202 with processing_status queued.',
          consumes: ['multipart/form-data'],
          body: ReplaceForm,
          params: ContentParams,
          response: { 202: ContentItem, ...errorResponses(400, 401, 402, 403, 404) },
        },
      },
      async (req, reply) => {
        const ctx = callerOf(req);
        const upload = uploadOf(req);
        const file = singleFile(upload, true)!;
        const title = field(upload, 'title', Title, 'must be 1 to 500 characters');
        if (title === undefined) throw errors.validation('request.title is required', { details: { field: 'title' } });
        const summary = field(upload, 'summary', Summary, 'must be at most 5000 characters');
        if (upload.fields.has('category_id') || upload.fields.has('topic_id')) {
          throw errors.validation('request.category_id and topic_id are not accepted here', { details: { field: 'category_id' } });
        }
        await readScoped(clients, ctx, req.params.content_id);
        const item = await clients.ingest.call<ItemMessage>(
          'ReplaceFile',
          { content_id: req.params.content_id, file, title, ...(summary !== undefined && { summary }), allowed_formats: FILE_FORMATS },
          ctx,
          { deadlineMs: 120_000 },
        );
        return reply.status(202).send(itemJson(item));
      },
    );

    app.patch(
      '/content/file/:content_id',
      {
        config: { ...write, meter: { operation: 'ingest', units: (r) => r.upload?.files.length ?? 0 } },
        validatorCompiler: multipartRouteValidation(),
        schema: {
          tags,
          summary: 'Update title, summary or file',
          description:
            `multipart/form-data: title, summary, file (${fileDescription}), category_id, topic_id, all optional. With a file: a new ` +
            'version, 202 with processing_status queued; without: 200 with the updated item. An empty summary clears it.',
          consumes: ['multipart/form-data'],
          body: PatchForm,
          params: ContentParams,
          response: { 200: ContentItem, 202: ContentItem, ...errorResponses(400, 401, 402, 403, 404) },
        },
      },
      async (req, reply) => {
        const ctx = callerOf(req);
        const upload = uploadOf(req);
        const file = singleFile(upload, false);
        const title = field(upload, 'title', Title, 'must be 1 to 500 characters');
        const summary = field(upload, 'summary', Summary, 'must be at most 5000 characters');
        const categoryId = field(upload, 'category_id', isUuid, 'must be a uuid');
        const topicId = field(upload, 'topic_id', isUuid, 'must be a uuid');
        await readScoped(clients, ctx, req.params.content_id);
        await checkFiling(clients.categories, ctx, { category_id: categoryId, topic_id: topicId });
        const contentId = req.params.content_id;
        let item: ItemMessage | undefined;
        if (categoryId || topicId || (!file && (title !== undefined || summary !== undefined))) {
          item = await clients.ingest.call<ItemMessage>(
            'UpdateContent',
            {
              content_id: contentId,
              ...(!file && title !== undefined && { title }),
              ...(!file && summary !== undefined && (summary === '' ? { clear_summary: true } : { summary })),
              ...(categoryId && { category_id: categoryId }),
              ...(topicId && { topic_id: topicId }),
            },
            ctx,
          );
        }
        if (file) {
          item = await clients.ingest.call<ItemMessage>(
            'ReplaceFile',
            {
              content_id: contentId,
              file,
              ...(title !== undefined && { title }),
              ...(summary && { summary }),
              allowed_formats: FILE_FORMATS,
            },
            ctx,
            { deadlineMs: 120_000 },
          );
          return reply.status(202).send(itemJson(item));
        }
        item ??= (await readScoped<{ item: ItemMessage }>(clients, ctx, contentId)).item;
        return reply.status(200).send(itemJson(item));
      },
    );

    app.delete(
      '/content/:content_id',
      {
        config: write,
        schema: {
          tags,
          summary: 'Delete a content item',
          description: 'Removes the item (all versions) from listings and the knowledge base. Its bytes may be uploaded again afterwards.',
          params: ContentParams,
          response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => {
        const ctx = callerOf(req);
        await readScoped(clients, ctx, req.params.content_id);
        await clients.ingest.call('DeleteContent', { content_id: req.params.content_id }, ctx);
        return reply.status(204).send(null);
      },
    );
  };
}
