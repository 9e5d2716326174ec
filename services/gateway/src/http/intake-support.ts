import { randomUUID } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import multipart, { type MultipartFile, type MultipartValue } from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest, FastifySchema, FastifySchemaCompiler } from 'fastify';
import { errors, isAppError, toErrorBody } from '@kb/platform';
import type { CallContext, RpcClient } from '@kb/rpc';
import type { ServiceClients } from '../clients.js';
import { ErrorBody, Timestamp, Uuid } from './schemas.js';
import { isBadName, stripControlChars } from './hardening.js';
import { buildValidatorFactory } from './validation.js';

/** Files per upload call (spec 8). */
export const MAX_FILES = 10;
/** Files of one request go to ingest in calls below the internal 64 MB message limit. */
const CALL_BYTES = 48 * 1024 * 1024;
/** An upload streams to ingest in pieces of this size: what one request holds in memory at a time. */
export const PIECE_BYTES = 256 * 1024;

const Status = Type.Union([Type.Literal('queued'), Type.Literal('processing'), Type.Literal('completed'), Type.Literal('failed')]);

/** The content item (spec 2.1) and the facts people need to follow its processing. */
export const ContentItem = Type.Object({
  id: Uuid,
  content_id: Type.Optional(
    Type.String({
      format: 'uuid',
      description: "The same as id: every intake answer (raw text, uploads, a duplicate's 422) names the item content_id",
    }),
  ),
  org_id: Uuid,
  type: Type.Union([Type.Literal('raw'), Type.Literal('document'), Type.Literal('web')]),
  title: Type.String(),
  summary: Type.Optional(Type.String()),
  version_num: Type.Integer({ description: 'Number of the current version (1 for new content; each replacement adds one)' }),
  version_id: Uuid,
  processing_status: Status,
  failure_reason: Type.Optional(Type.String({ description: 'Why processing failed, for a person to read' })),
  attempts: Type.Integer({ description: 'Processing attempts of the current version' }),
  parent_id: Type.Union([Uuid, Type.Null()], { description: 'KB folder the content is filed under; null: the root folder' }),
  category_id: Type.Optional(Uuid),
  topic_id: Type.Optional(Uuid),
  tags: Type.Array(Type.String(), { description: 'Tags as given on intake (ids or names)' }),
  filename: Type.Optional(Type.String()),
  format: Type.Optional(
    Type.String({ description: 'pdf, docx, doc, xlsx, xls, pptx, ppt, html, csv, json, xml, txt, or md for raw text' }),
  ),
  size_bytes: Type.Integer(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const ContentVersion = Type.Object({
  version_id: Uuid,
  version_num: Type.Integer(),
  title: Type.String(),
  filename: Type.Optional(Type.String()),
  format: Type.Optional(Type.String()),
  size_bytes: Type.Integer(),
  sha256: Type.String(),
  processing_status: Status,
  failure_reason: Type.Optional(Type.String()),
  attempts: Type.Integer(),
  chunk_count: Type.Integer(),
  characters: Type.Integer(),
  created_at: Timestamp,
  completed_at: Type.Optional(Timestamp),
});

export interface ItemMessage {
  id: string;
  parent_id?: string;
  size_bytes: string | number;
  tags?: string[];
  [key: string]: unknown;
}

/** gRPC leaves unset optionals out and sends int64 as text; the JSON API says null and numbers. */
export const itemJson = (m: ItemMessage): Static<typeof ContentItem> =>
  ({
    ...m,
    content_id: m.id,
    parent_id: m.parent_id ?? null,
    size_bytes: Number(m.size_bytes),
    tags: m.tags ?? [],
  }) as unknown as Static<typeof ContentItem>;

/** A raw text duplicate's 422: the error, and the existing item as content_id (and id), where a first answer names it. */
export const DuplicateRaw = Type.Intersect([ErrorBody, Type.Object({ content_id: Type.Optional(Uuid), id: Type.Optional(Uuid) })], {
  description: 'The text is a duplicate: the error, and content_id (and id) of the existing item',
});

/** The body of DuplicateRaw for a duplicate text's error, or undefined for any other failure. */
export function duplicateRawBody(err: unknown): Static<typeof DuplicateRaw> | undefined {
  if (!isAppError(err) || err.code !== 'duplicate' || typeof err.details?.content_id !== 'string') return undefined;
  const existing = err.details.content_id;
  return { ...toErrorBody(err), content_id: existing, id: existing };
}
export const versionJson = (v: { size_bytes: string | number }): Static<typeof ContentVersion> =>
  ({ ...v, size_bytes: Number(v.size_bytes) }) as unknown as Static<typeof ContentVersion>;

/**
 * Folder scope (spec 5.2): content goes into, and is read from, folders the
 * caller may touch. The knowledge-base tree decides (403 outside a scoped key's
 * folders, 404 no such folder); an unscoped caller filing at the root needs no check.
 */
export async function checkFolder(kbTree: RpcClient, ctx: CallContext, folderId: string | null | undefined): Promise<void> {
  if (!folderId && ctx.folder_scope === null) return;
  await kbTree.call('CheckFolderAccess', folderId ? { folder_id: folderId } : {}, ctx);
}

/** Category and topic ids on intake must name live ones of the organization (404 otherwise). */
export async function checkFiling(
  categories: RpcClient,
  ctx: CallContext,
  filing: { category_id?: string | undefined; topic_id?: string | undefined },
): Promise<void> {
  if (!filing.category_id && !filing.topic_id) return;
  await categories.call(
    'CheckFiling',
    { ...(filing.category_id && { category_id: filing.category_id }), ...(filing.topic_id && { topic_id: filing.topic_id }) },
    ctx,
  );
}

/** Raw text (plain or Markdown) as a queued content item, on either surface: folder scope and filing checked first. */
export async function createRawContent(
  clients: ServiceClients,
  ctx: CallContext,
  body: {
    title: string;
    text: string;
    summary?: string | undefined;
    parent_id?: string | null | undefined;
    tags?: string[] | undefined;
    category_id?: string | undefined;
    topic_id?: string | undefined;
  },
): Promise<ItemMessage> {
  const { title, text, summary, parent_id, tags, category_id, topic_id } = body;
  await checkFolder(clients.kbTree, ctx, parent_id);
  await checkFiling(clients.categories, ctx, { category_id, topic_id });
  return clients.ingest.call<ItemMessage>(
    'CreateRaw',
    {
      title,
      text,
      ...(summary !== undefined && { summary }),
      filing: {
        ...(parent_id && { parent_id }),
        ...(category_id && { category_id }),
        ...(topic_id && { topic_id }),
        tags: tags ?? [],
      },
    },
    ctx,
  );
}

/**
 * Ingest files content by its direct folder, so a scoped key's listing needs the
 * scope's subfolders too; the tree resolves them (403 for an empty scope).
 */
export async function withSubfolders(kbTree: RpcClient, ctx: CallContext): Promise<CallContext> {
  if (ctx.folder_scope === null) return ctx;
  const { folder_ids } = await kbTree.call<{ folder_ids: string[] }>('ExpandFolderScope', {}, ctx);
  return { ...ctx, folder_scope: folder_ids };
}

/** Reads an item and applies the caller's folder scope to it. */
export async function readScoped<T extends { item: ItemMessage }>(
  clients: ServiceClients,
  ctx: CallContext,
  contentId: string,
): Promise<T> {
  const detail = await clients.ingest.call<T>('GetContent', { content_id: contentId }, ctx);
  if (ctx.folder_scope !== null) await checkFolder(clients.kbTree, ctx, detail.item.parent_id ?? null);
  return detail;
}

export interface UploadedFile {
  filename: string;
  /** The bytes of a file smaller than one piece; empty when they were streamed to ingest under stage_id. */
  data: Buffer;
  /** The pieces staged in ingest (StagePiece) that become the file; empty for a file sent inline. */
  stage_id: string;
  too_large: boolean;
  size_bytes: number;
}

/**
 * Byte budgets of uploads (issue 13): one request may send at most
 * maxRequestBytes (413 otherwise), and the uploads being received at once may
 * declare at most `capacity` bytes together (503 with Retry-After otherwise,
 * before any byte is read), so a flood queues at the clients instead of growing
 * the server. Memory per upload is a few pieces (PIECE_BYTES) whatever its size.
 */
export interface UploadBudget {
  readonly maxRequestBytes: number;
  readonly capacity: number;
  /** Bytes declared by the uploads in progress. */
  inUse: number;
}

export function createUploadBudget(options: { maxRequestBytes: number; inflightBytes: number }): UploadBudget {
  return { maxRequestBytes: options.maxRequestBytes, capacity: Math.max(options.inflightBytes, options.maxRequestBytes), inUse: 0 };
}

/** Seconds a client is asked to wait when the in-flight budget is spent. */
export const UPLOAD_RETRY_AFTER_SECONDS = 1;

export interface MultipartBody {
  files: UploadedFile[];
  fields: Map<string, string[]>;
  /** File bytes received so far. */
  bytes: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    upload?: MultipartBody;
    /** Bytes this request holds of the upload budget (released once, when it ends). */
    uploadHeld?: number;
  }
}

const emptyUpload = (): MultipartBody => ({ files: [], fields: new Map(), bytes: 0 });
const sizeText = (bytes: number) =>
  bytes >= 1048576 ? `${Math.round((bytes / 1048576) * 10) / 10} MB` : `${Math.round((bytes / 1024) * 10) / 10} KB`;

/**
 * Multipart intake for the routes of one plugin: parts are read before the
 * handler (so the credit meter knows the file count), files are streamed to
 * ingest in pieces as they arrive (never held whole), a file over the size
 * limit is kept as "too large" (its item ends failed with a reason), and an
 * eleventh file is a 400. Uploads are admitted against the byte budgets
 * (UploadBudget): 413 over the per-request one, 503 with Retry-After when the
 * in-flight one is spent.
 */
export async function registerMultipart(
  app: FastifyInstance,
  options: { maxUploadBytes: number; fileFields: string[]; textFields: string[]; ingest: RpcClient; budget?: UploadBudget },
) {
  const budget = options.budget ?? createUploadBudget({ maxRequestBytes: 104857600, inflightBytes: 268435456 });
  const release = (request: FastifyRequest) => {
    if (!request.uploadHeld) return;
    budget.inUse -= request.uploadHeld;
    request.uploadHeld = 0;
  };
  /** Staged pieces of a request that did not succeed are dropped (a 2xx consumed them). */
  const discard = (request: FastifyRequest) => {
    const caller = request.caller;
    const staged = request.upload?.files.filter((f) => f.stage_id) ?? [];
    if (!caller || staged.length === 0) return;
    for (const file of staged) {
      options.ingest
        .call('DiscardStaged', { stage_id: file.stage_id }, caller)
        .catch((err: unknown) => request.log.warn({ err, stage_id: file.stage_id }, 'could not discard staged upload pieces'));
    }
  };
  // Admission, before any byte of the body is read.
  app.addHook('onRequest', async (request) => {
    // (isMultipart() is only known once the body parser ran.)
    if (!/^multipart\/form-data\b/i.test(request.headers['content-type'] ?? '')) return;
    const length = Number(request.headers['content-length']);
    const declared = Number.isFinite(length) && length >= 0 ? length : budget.maxRequestBytes;
    const refuse = (err: Error) => {
      // The body is discarded as it arrives (never held), so the client finishes
      // sending and reads the answer instead of a reset connection.
      request.raw.resume();
      return err;
    };
    if (declared > budget.maxRequestBytes) {
      throw refuse(
        errors.payloadTooLarge(`The upload is larger than the ${sizeText(budget.maxRequestBytes)} limit per request`, {
          code: 'upload_too_large',
          details: { limit_bytes: budget.maxRequestBytes },
        }),
      );
    }
    if (budget.inUse + declared > budget.capacity) {
      throw refuse(
        errors.unavailable('Too many uploads in progress; retry after the time in Retry-After', {
          code: 'upload_capacity_reached',
          retryAfterSeconds: UPLOAD_RETRY_AFTER_SECONDS,
        }),
      );
    }
    budget.inUse += declared;
    request.uploadHeld = declared;
  });
  // A request answered before its body was read (413 or 503 at admission, ingest
  // unavailable while a file streamed) has the rest of its body discarded by
  // settleUnreadBodies (early-answer.ts); one refused past the request budget is
  // answered with Connection: close (closeAfterReply).
  app.addHook('onResponse', async (request, reply) => {
    release(request);
    if (reply.statusCode < 200 || reply.statusCode >= 300) discard(request);
  });
  app.addHook('onRequestAbort', async (request) => {
    release(request);
    discard(request);
  });
  await app.register(multipart, {
    attachFieldsToBody: true,
    throwFileSizeLimit: false,
    limits: { files: MAX_FILES + 1, fileSize: options.maxUploadBytes, fields: 40, fieldSize: 1024 * 1024, parts: 60, headerPairs: 200 },
    async onFile(this: FastifyRequest, part: MultipartFile) {
      const upload = (this.upload ??= emptyUpload());
      if (!options.fileFields.includes(part.fieldname)) {
        part.file.resume();
        throw errors.validation(`Unexpected file field ${part.fieldname}; files go in ${options.fileFields.join(' or ')}`, {
          details: { field: part.fieldname },
        });
      }
      if (upload.files.length >= MAX_FILES) {
        part.file.resume();
        throw errors.validation(`At most ${MAX_FILES} files per upload`, { code: 'too_many_files' });
      }
      const caller = this.caller;
      if (!caller) throw errors.unauthenticated();
      // Streamed to ingest in pieces as it arrives: awaiting each piece pauses the
      // socket, so the request never holds more than about one piece.
      const file: UploadedFile = {
        filename: stripControlChars(part.filename),
        data: Buffer.alloc(0),
        stage_id: randomUUID(),
        too_large: false,
        size_bytes: 0,
      };
      upload.files.push(file);
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      let seq = 0;
      const flush = async () => {
        if (pendingBytes === 0) return;
        const data = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
        pending = [];
        pendingBytes = 0;
        await options.ingest.call('StagePiece', { stage_id: file.stage_id, seq: seq++, data }, caller);
      };
      for await (const chunk of part.file as AsyncIterable<Buffer>) {
        file.size_bytes += chunk.length;
        upload.bytes += chunk.length;
        if (upload.bytes > budget.maxRequestBytes) {
          // The rest of the body is discarded as it arrives; the connection closes after the answer.
          part.file.resume();
          this.raw.resume();
          this.closeAfterReply = true;
          throw errors.payloadTooLarge(`The upload is larger than the ${sizeText(budget.maxRequestBytes)} limit per request`, {
            code: 'upload_too_large',
            details: { limit_bytes: budget.maxRequestBytes },
          });
        }
        pending.push(chunk);
        pendingBytes += chunk.length;
        if (pendingBytes >= PIECE_BYTES) await flush();
      }
      if (part.file.truncated) {
        // Over the per-file limit: the item is created failed; its pieces are dropped by ingest.
        file.too_large = true;
        file.size_bytes = Math.max(file.size_bytes, options.maxUploadBytes + 1);
      }
      if (seq === 0 && !file.too_large) {
        // Smaller than one piece: it travels inline with UploadFiles instead of
        // being staged (one gRPC call and three blob operations fewer per file).
        file.data = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
        file.stage_id = '';
        return;
      }
      await flush();
    },
  });
  // Text fields arrive on the body; gather them (and reject unknown ones) before validation.
  app.addHook('preValidation', async (request) => {
    if (!request.isMultipart()) return;
    const upload = (request.upload ??= emptyUpload());
    for (const [name, value] of Object.entries((request.body ?? {}) as Record<string, unknown>)) {
      for (const part of [value].flat() as (MultipartValue | MultipartFile)[]) {
        if (part.type === 'file') continue;
        if (!options.textFields.includes(name)) {
          throw errors.validation(`request.${name} is not an accepted field`, { code: 'validation_failed', details: { field: name } });
        }
        upload.fields.set(name, [...(upload.fields.get(name) ?? []), String(part.value)]);
      }
    }
  });
}

/** A multipart form field, for the OpenAPI description. */
export const FormFile = (description: string) => Type.String({ format: 'binary', description });

/**
 * Multipart routes describe their form as the body schema (so OpenAPI shows it)
 * but check the parts as they stream in (registerMultipart, field()); params and
 * query are validated as everywhere else.
 */
export function multipartRouteValidation(): FastifySchemaCompiler<FastifySchema> {
  const compile = buildValidatorFactory();
  return (route) => (route.httpPart === 'body' ? () => true : compile(route));
}

/** The request's multipart content (a JSON request to a multipart route is a 400). */
export function uploadOf(request: FastifyRequest): MultipartBody {
  if (!request.isMultipart() || !request.upload) throw errors.validation('Send multipart/form-data', { code: 'multipart_required' });
  return request.upload;
}

/** One text field: absent, or exactly one value that passes check. */
export function field(upload: MultipartBody, name: string, check?: (v: string) => boolean, what = 'is invalid'): string | undefined {
  const values = upload.fields.get(name);
  if (!values) return undefined;
  if (values.length > 1) throw errors.validation(`request.${name} was given more than once`, { details: { field: name } });
  const value = values[0]!;
  if (isBadName(name, value)) throw errors.validation(`request.${name} holds a control character`, { details: { field: name } });
  if (check && !check(value)) throw errors.validation(`request.${name} ${what}`, { details: { field: name } });
  return value;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (v: string) => UUID_RE.test(v);

/** Tags as repeated fields or one comma-separated field. */
export function tagsField(upload: MultipartBody): string[] {
  const tags = (upload.fields.get('tags') ?? [])
    .flatMap((v) => v.split(','))
    .map((t) => t.trim())
    .filter((t) => t);
  if (tags.length > 50 || tags.some((t) => t.length > 100)) {
    throw errors.validation('request.tags: at most 50 tags of at most 100 characters', { details: { field: 'tags' } });
  }
  return tags;
}

/** Splits files into calls under the internal message limit (one file is never split). */
export function batchesOf(files: UploadedFile[]): UploadedFile[][] {
  const batches: UploadedFile[][] = [];
  let current: UploadedFile[] = [];
  let size = 0;
  for (const file of files) {
    if (current.length > 0 && size + file.data.length > CALL_BYTES) {
      batches.push(current);
      current = [];
      size = 0;
    }
    current.push(file);
    size += file.data.length;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

export interface OutcomeMessage {
  filename: string;
  status: 'accepted' | 'skipped';
  content_id: string;
  version_id?: string;
  reason?: string;
  item?: ItemMessage;
}

/**
 * Sends one request's files to ingest: the names are validated first (so a bad
 * file changes nothing), then the files in calls under the message limit.
 * Every file skipped as a duplicate is 422 (spec 7).
 */
export async function uploadFiles(
  ingest: RpcClient,
  ctx: CallContext,
  files: UploadedFile[],
  rest: { filing: Record<string, unknown>; title?: string; summary?: string; allowed_formats?: string[] },
): Promise<OutcomeMessage[]> {
  if (files.length === 0) throw errors.validation('No file was uploaded', { code: 'no_files' });
  const batches = batchesOf(files);
  // Sent in several calls, every file's type is checked first, so a bad request
  // stores nothing; one call checks them all itself before storing any.
  if (batches.length > 1) {
    const names = files.map((f) => ({ filename: f.filename }));
    await ingest.call('UploadFiles', { ...rest, files: names, validate_only: true }, ctx);
  }
  const outcomes: OutcomeMessage[] = [];
  for (const batch of batches) {
    const res = await ingest.call<{ files: OutcomeMessage[] }>('UploadFiles', { ...rest, files: batch }, ctx, { deadlineMs: 120_000 });
    outcomes.push(...res.files);
  }
  if (outcomes.every((o) => o.status === 'skipped')) {
    throw errors.unprocessable('Every uploaded file is a duplicate of existing content', {
      code: 'all_duplicates',
      details: {
        files: outcomes.map((o) => ({
          filename: o.filename,
          status: o.status,
          content_id: o.content_id,
          ...(o.reason && { reason: o.reason }),
        })),
      },
    });
  }
  return outcomes;
}
