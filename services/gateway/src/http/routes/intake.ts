import { Type, type Static } from '@sinclair/typebox';
import { errors, isAppError, toErrorBody } from '@kb/platform';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { ServiceClients } from '../../clients.js';
import { ErrorBody, Uuid, errorResponses } from '../schemas.js';
import { callerOf } from '../auth-hook.js';
import { TagRefs } from './kb-tree.js';
import {
  ContentItem,
  ContentVersion,
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
  tagsField,
  uploadFiles,
  uploadOf,
  versionJson,
  type ItemMessage,
  type UploadBudget,
} from '../intake-support.js';

const tags = ['Knowledge Base'];
const read = { auth: { credential: 'any', permission: 'read:kb' } } as const;
const ingestAuth = { credential: 'any', permission: 'write:kb' } as const;

const RawText = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 500 }),
    text: Type.String({ minLength: 1, description: 'Plain text or Markdown (headings shape the chunks)' }),
    summary: Type.Optional(Type.String({ maxLength: 5000 })),
    parent_id: Type.Optional(Type.Union([Uuid, Type.Null()], { description: 'KB folder; absent or null: the root folder' })),
    tags: Type.Optional(TagRefs),
    category_id: Type.Optional(Uuid),
    topic_id: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);

const FileOutcome = Type.Object({
  filename: Type.String(),
  status: Type.Union([Type.Literal('accepted'), Type.Literal('skipped')]),
  content_id: Uuid,
  version_id: Type.Optional(Uuid),
  reason: Type.Optional(Type.String({ description: 'Why a file was skipped: duplicate (same bytes as content_id)' })),
  item: Type.Optional(ContentItem),
});

/**
 * A duplicate's 422 carries the existing item's id where the first answer had it (`files[n].content_id`
 * for an upload, `content_id` for raw text), so a re-run script reads the same field either time.
 */
const DuplicateUpload = Type.Intersect([ErrorBody, Type.Object({ files: Type.Array(FileOutcome) })], {
  description: 'Every file is a duplicate: the error, and each file skipped with the content_id it duplicates',
});

const UploadForm = Type.Object({
  files: Type.Array(FormFile('PDF, TXT, CSV, DOC, DOCX, XLS, XLSX, PPT, PPTX, HTML, JSON or XML'), { minItems: 1, maxItems: 10 }),
  parent_id: Type.Optional(Uuid),
  tags: Type.Optional(Type.String({ description: 'Repeat the field, or separate tags with commas' })),
  category_id: Type.Optional(Uuid),
  topic_id: Type.Optional(Uuid),
});

const ContentParams = Type.Object({ content_id: Uuid });
const ChunkQuery = Type.Object(
  {
    version_id: Type.Optional(Uuid),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
    offset: Type.Integer({ minimum: 0, default: 0 }),
  },
  { additionalProperties: false },
);
const Chunk = Type.Object({
  chunk_index: Type.Integer(),
  text: Type.String(),
  page: Type.Optional(Type.Integer()),
  sheet: Type.Optional(Type.String()),
  slide: Type.Optional(Type.Integer()),
  heading_path: Type.Array(Type.String()),
  row_range: Type.Optional(Type.Array(Type.Integer(), { minItems: 2, maxItems: 2 })),
});

/** Organization API intake: raw text, file uploads, and following an item's processing (spec 4.1, 8). */
export function intakeRoutes(clients: ServiceClients, maxUploadBytes: number, budget?: UploadBudget): FastifyPluginAsyncTypebox {
  return async (app) => {
    await registerMultipart(app as unknown as FastifyInstance, {
      maxUploadBytes,
      ingest: clients.ingest,
      ...(budget && { budget }),
      fileFields: ['files', 'file'],
      textFields: ['parent_id', 'tags', 'category_id', 'topic_id'],
    });

    app.post(
      '/org/kb/raw',
      {
        config: { auth: ingestAuth, meter: { operation: 'ingest' } },
        schema: {
          tags,
          summary: 'Send raw text',
          description:
            'Adds plain text or Markdown to the knowledge base as a content item of type raw, filed under parent_id (default: the root ' +
            'folder). Processing (chunking) is asynchronous: the answer is 202 with processing_status queued; follow it with ' +
            'GET /org/kb/content/{content_id}. Tags are applied on creation. A folder-scoped key gets 403 outside its folders. ' +
            'Text whose bytes are already live content of the organization (raw text or an uploaded file) is skipped as a ' +
            "duplicate: 422 with the existing item's content_id (and id), and no credits are charged, as for an upload " +
            'whose every file is a duplicate. The answer names the item as content_id, as an upload does; id is the same value.',
          body: RawText,
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

    app.post(
      '/org/kb/upload',
      {
        config: { auth: ingestAuth, meter: { operation: 'ingest', units: (r) => Math.max(1, r.upload?.files.length ?? 1) } },
        validatorCompiler: multipartRouteValidation(),
        schema: {
          tags,
          summary: 'Upload files',
          description:
            'multipart/form-data with up to 10 files in the field `files` (an 11th is 400) and optional parent_id, tags, category_id ' +
            'and topic_id. Accepted: PDF, TXT, CSV, DOC, DOCX, XLS, XLSX, PPT, PPTX, HTML, JSON, XML (Markdown goes through ' +
            'POST /org/kb/raw). Each file is accepted as a new content item (processing_status queued) or skipped as a duplicate ' +
            "of existing content with the same bytes (its content_id is the existing item's); when every file is skipped the answer " +
            'is 422 with the same `files` list. The type is checked from the ' +
            'bytes during processing: a file that is corrupt, encrypted, without text, not what its name says, over the size ' +
            'limit or a decompression bomb ends failed with a failure_reason. Costs one ingest unit per accepted file (a skipped duplicate costs nothing), and one more per started 100,000 characters (CREDIT_INGEST_CHARS) a file stores beyond the first.',
          consumes: ['multipart/form-data'],
          body: UploadForm,
          response: {
            202: Type.Object({ files: Type.Array(FileOutcome) }),
            ...errorResponses(400, 401, 402, 403, 404),
            422: DuplicateUpload,
          },
        },
      },
      async (req, reply) => {
        const ctx = callerOf(req);
        const upload = uploadOf(req);
        if (upload.files.length === 0)
          throw errors.validation('No file was uploaded: send files in the field `files`', { code: 'no_files' });
        const parentId = field(upload, 'parent_id', isUuid, 'must be a uuid');
        const categoryId = field(upload, 'category_id', isUuid, 'must be a uuid');
        const topicId = field(upload, 'topic_id', isUuid, 'must be a uuid');
        await checkFolder(clients.kbTree, ctx, parentId);
        await checkFiling(clients.categories, ctx, { category_id: categoryId, topic_id: topicId });
        const filing = {
          ...(parentId && { parent_id: parentId }),
          ...(categoryId && { category_id: categoryId }),
          ...(topicId && { topic_id: topicId }),
          tags: tagsField(upload),
        };
        let outcomes;
        try {
          outcomes = await uploadFiles(clients.ingest, ctx, upload.files, { filing });
        } catch (err) {
          if (!isAppError(err) || err.code !== 'all_duplicates') throw err;
          return reply.status(422).send({ ...toErrorBody(err), files: (err.details as { files: Static<typeof FileOutcome>[] }).files });
        }
        // Files skipped as duplicates cost nothing (a re-sent import is charged once).
        req.meteredUnits = outcomes.filter((o) => o.status === 'accepted').length;
        return reply.status(202).send({ files: outcomes.map(({ item, ...o }) => ({ ...o, ...(item && { item: itemJson(item) }) })) });
      },
    );

    app.get(
      '/org/kb/content/:content_id',
      {
        config: read,
        schema: {
          tags,
          summary: 'Get a content item with its processing state and versions',
          description:
            'processing_status (queued, processing, completed, failed), attempts and failure_reason of the current version, and ' +
            'every version (newest first) with its own version_id, status and chunk count; search: whether it can be found by its ' +
            'words (keyword: pending, ready) and by its meaning (semantic: pending while its vectors are computed, ready, or off ' +
            'without an embeddings model).',
          params: ContentParams,
          response: {
            200: Type.Object({
              ...ContentItem.properties,
              versions: Type.Array(ContentVersion),
              search: Type.Object({
                keyword: Type.Union([Type.Literal('pending'), Type.Literal('ready')]),
                semantic: Type.Union([Type.Literal('pending'), Type.Literal('ready'), Type.Literal('off')]),
              }),
            }),
            ...errorResponses(400, 401, 403, 404),
          },
        },
      },
      async (req) => {
        const detail = await readScoped<{ item: ItemMessage; versions: { size_bytes: string }[] }>(
          clients,
          callerOf(req),
          req.params.content_id,
        );
        const search = await clients.search.call<{ keyword: 'pending' | 'ready'; semantic: 'pending' | 'ready' | 'off' }>(
          'GetSearchReadiness',
          { content_id: req.params.content_id },
          callerOf(req),
        );
        return { ...itemJson(detail.item), versions: detail.versions.map(versionJson), search };
      },
    );

    app.get(
      '/org/kb/content/:content_id/chunks',
      {
        config: read,
        schema: {
          tags,
          summary: "List a content version's chunks",
          description:
            'The chunks search and citations point at, in order, each with where it came from (page, sheet, slide, heading path, ' +
            'table rows) so a citation can be checked. version_id defaults to the current version.',
          params: ContentParams,
          querystring: ChunkQuery,
          response: {
            200: Type.Object({ content_id: Uuid, version_id: Uuid, chunks: Type.Array(Chunk), total_count: Type.Integer() }),
            ...errorResponses(400, 401, 403, 404),
          },
        },
      },
      async (req) => {
        const ctx = callerOf(req);
        await readScoped(clients, ctx, req.params.content_id);
        type ChunkMessage = { chunk_index: number; text: string; heading_path: string[]; row_range?: number[] };
        const res = await clients.ingest.call<{ content_id: string; version_id: string; chunks: ChunkMessage[]; total_count: number }>(
          'ListChunks',
          { content_id: req.params.content_id, ...req.query },
          ctx,
        );
        return {
          ...res,
          chunks: res.chunks.map(({ row_range, ...c }) => ({ ...c, ...(row_range && row_range.length === 2 && { row_range }) })),
        };
      },
    );
  };
}
