import { createHash } from 'node:crypto';
import { errors, type Clock, type IdGenerator } from '@kb/platform';
import type { Store } from '@kb/store';
import type { BlobStore } from '@kb/blob';
import type { CommandBus } from '@kb/eventsourcing';
import type { CallContext } from '@kb/rpc';
import { contentDecider, contentStream, type ContentCommand, type Filing, type Source } from '../domain/content.js';
import { FORMAT_NAMES, MEDIA_TYPES, formatOfName, type Format } from '../extract/types.js';
import { CONTENT, HASHES, VERSIONS, hashId, type ContentDoc, type VersionDoc } from '../projections/content.js';
import { enqueueJob } from './jobs.js';

/** Formats the Organization API takes as files (spec 8): no Markdown, which goes through raw text. */
export const UPLOAD_FORMATS: Format[] = ['pdf', 'txt', 'csv', 'doc', 'docx', 'xls', 'xlsx', 'ppt', 'pptx', 'html', 'json', 'xml'];
export const MAX_FILES_PER_CALL = 10;

export interface FileInput {
  filename: string;
  /** The bytes, unless they were streamed in pieces under stage_id. */
  data: Buffer;
  /** The bytes were staged in pieces (stagePiece) under this id. */
  stage_id?: string;
  /** The gateway stopped reading at the size limit. */
  too_large?: boolean;
  size_bytes?: number;
}

export type FileOutcome =
  | { filename: string; status: 'accepted'; content_id: string; version_id: string; item: ContentDoc }
  | { filename: string; status: 'skipped'; content_id: string; reason: string };

export interface IntakeDeps {
  store: Store;
  commands: CommandBus;
  blobs: BlobStore;
  ids: IdGenerator;
  clock: Clock;
  maxUploadBytes: number;
  /** Wakes the processor after a commit that queued work. */
  onQueued: () => void;
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const blobKey = (orgId: string, versionId: string) => `${orgId}/${versionId}`;
/** Where the pieces of an upload in progress wait: per organization, so one never completes another's. */
const stageKey = (orgId: string, stageId: string, seq: number) => `staging/${orgId}/${stageId}/${seq}`;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Largest piece of a staged upload (the gateway sends 256 KB). */
export const MAX_PIECE_BYTES = 4 * 1024 * 1024;
const MAX_PIECES = 1_000_000;

/** A stored file: what the version records about its bytes. */
interface Stored {
  size_bytes: number;
  sha256: string;
  too_large: boolean;
}
/**
 * Raw text whose bytes are already live content: 422, as an upload whose every file
 * is skipped as a duplicate (spec 7), naming the content it duplicates.
 */
const duplicateText = (contentId: string) =>
  errors.unprocessable('The text is a duplicate of existing content', {
    code: 'duplicate',
    details: { status: 'skipped', reason: 'duplicate', content_id: contentId },
  });
const metadataOf = (ctx: CallContext) => ({
  metadata: { org_id: ctx.org_id, actor: `${ctx.principal.type}:${ctx.principal.id}`, request_id: ctx.request_id },
});
const megabytes = (bytes: number) =>
  bytes >= 1048576 ? `${Math.round((bytes / 1048576) * 10) / 10} MB` : `${Math.round((bytes / 1024) * 10) / 10} KB`;

/** Intake use cases: raw text and files in, content items (queued) out; also updates and deletes. */
export function createIntake(deps: IntakeDeps) {
  const { store, commands, blobs, ids, clock } = deps;
  const now = () => clock.now();

  /** The format a name claims; a name without any extension claims none and the bytes alone decide. */
  function claimedFormat(filename: string, allowed: Format[]): Format | undefined {
    if (filename.trim() === '') throw errors.validation('Every file needs a name', { code: 'missing_filename' });
    if (!/\.[^./\\]+$/.test(filename)) return undefined;
    const format = formatOfName(filename);
    const list = allowed.map((f) => FORMAT_NAMES[f]).join(', ');
    if (format === 'md' || (format === 'txt' && !allowed.includes('txt'))) {
      throw errors.validation(`${filename}: ${FORMAT_NAMES[format]} is not accepted as a file; send it as raw text instead`, {
        code: 'unsupported_format',
        details: { filename, accepted: allowed },
      });
    }
    if (!format || !allowed.includes(format)) {
      throw errors.validation(`${filename}: unsupported file type; accepted: ${list}`, {
        code: 'unsupported_format',
        details: { filename, accepted: allowed },
      });
    }
    return format;
  }

  function sourceOf(file: FileInput, format: Format | undefined, stored: Stored): Source {
    return {
      kind: 'file',
      filename: file.filename,
      ...(format && { format, media_type: MEDIA_TYPES[format] }),
      size_bytes: stored.size_bytes,
      sha256: stored.sha256,
    };
  }

  const tooLargeReason = (stored: Stored) =>
    `The file is larger than the ${megabytes(deps.maxUploadBytes)} limit` +
    (stored.size_bytes ? ` (at least ${megabytes(stored.size_bytes)})` : '');

  function checkStageId(stageId: string): void {
    if (!UUID_RE.test(stageId)) throw errors.validation('stage_id must be a uuid', { details: { field: 'stage_id' } });
  }

  /** Drops an upload's staged pieces. */
  async function discardStaged(orgId: string, stageId: string): Promise<void> {
    checkStageId(stageId);
    for (let seq = 0; seq < MAX_PIECES; seq++) if (!(await blobs.delete(stageKey(orgId, stageId, seq)))) return;
  }

  /**
   * Stores a file's bytes under key: staged pieces are streamed into the blob one
   * at a time (hashed on the way) and then dropped, so no whole file is held in
   * memory; a file over the size limit stores nothing.
   */
  async function storeFile(ctx: CallContext, file: FileInput, key: string): Promise<Stored> {
    const tooLarge = (size: number): Stored => ({
      size_bytes: Math.max(size, deps.maxUploadBytes + 1),
      sha256: sha256(Buffer.alloc(0)),
      too_large: true,
    });
    if (file.too_large) {
      if (file.stage_id) await discardStaged(ctx.org_id, file.stage_id);
      return tooLarge(file.size_bytes ?? 0);
    }
    if (!file.stage_id) {
      await blobs.put(key, file.data);
      return { size_bytes: file.data.length, sha256: sha256(file.data), too_large: false };
    }
    const stageId = file.stage_id;
    checkStageId(stageId);
    const hash = createHash('sha256');
    let size = 0;
    async function* pieces() {
      for (let seq = 0; seq < MAX_PIECES; seq++) {
        const piece = await blobs.get(stageKey(ctx.org_id, stageId, seq));
        if (!piece) return;
        hash.update(piece);
        size += piece.length;
        yield piece;
      }
    }
    await blobs.putStream(key, pieces());
    await discardStaged(ctx.org_id, stageId);
    if (size > deps.maxUploadBytes) {
      await blobs.delete(key);
      return tooLarge(size);
    }
    return { size_bytes: size, sha256: hash.digest('hex'), too_large: false };
  }

  const readItem = async (contentId: string) => (await store.get<ContentDoc>(CONTENT, contentId))!;

  /**
   * Commits the version's event and its job (or, for a file over the limit, the
   * event and its failure) in one transaction. The blob is already stored, so a
   * crash at any point after the commit still finds it.
   */
  async function commitVersion(
    ctx: CallContext,
    contentId: string,
    command: ContentCommand & { version_id: string },
    job: { blob_key: string; filename: string; claimed_format?: Format; allowed_formats: Format[] } | { failure: string },
  ): Promise<string | undefined> {
    const at = now();
    const stream = contentStream(contentId);
    return commands.transaction(metadataOf(ctx), async (session) => {
      // Two intakes of the same bytes at once (files or raw text): the second to commit is the duplicate.
      if (command.type === 'create' && !('failure' in job)) {
        const duplicate = await session.tx.get<{ id: string; content_id: string }>(HASHES, hashId(ctx.org_id, command.source.sha256));
        if (duplicate) return duplicate.content_id;
      }
      const { state } = await session.execute(contentDecider, stream, command);
      if ('failure' in job) {
        const fail: ContentCommand = {
          type: 'fail',
          version_id: command.version_id,
          reason: job.failure,
          attempts: 1,
          at: at.toISOString(),
        };
        await session.execute(contentDecider, stream, fail);
      } else {
        await enqueueJob(session.tx, { content_id: contentId, version_id: command.version_id, org_id: state.org_id, ...job }, at.getTime());
      }
      return undefined;
    });
  }

  /** Stores a file's bytes under a new version's blob key (the slow, I/O-bound half of accepting it). */
  async function storeVersion(ctx: CallContext, file: FileInput): Promise<{ versionId: string; key: string; stored: Stored }> {
    const versionId = ids.uuid();
    const key = blobKey(ctx.org_id, versionId);
    return { versionId, key, stored: await storeFile(ctx, file, key) };
  }

  /** Commits a stored file as a new content item, or skips it as a duplicate. */
  async function acceptFile(
    ctx: CallContext,
    file: FileInput,
    format: Format | undefined,
    allowed: Format[],
    options: { filing: Filing; title?: string; summary?: string },
    { versionId, key, stored }: Awaited<ReturnType<typeof storeVersion>>,
  ): Promise<FileOutcome> {
    const contentId = ids.uuid();
    const source = sourceOf(file, format, stored);
    const existing = stored.too_large
      ? undefined
      : await store.get<{ id: string; content_id: string }>(HASHES, hashId(ctx.org_id, source.sha256));
    if (existing) {
      await blobs.delete(key).catch(() => undefined);
      return { filename: file.filename, status: 'skipped', content_id: existing.content_id, reason: 'duplicate' };
    }
    const command: ContentCommand = {
      type: 'create',
      content_id: contentId,
      version_id: versionId,
      org_id: ctx.org_id,
      kind: 'document',
      title: options.title ?? file.filename,
      source,
      filing: options.filing,
      at: now().toISOString(),
      ...(options.summary !== undefined && { summary: options.summary }),
    };
    let duplicateOf: string | undefined;
    try {
      const job = stored.too_large
        ? { failure: tooLargeReason(stored) }
        : { blob_key: key, filename: file.filename, ...(format && { claimed_format: format }), allowed_formats: allowed };
      duplicateOf = await commitVersion(ctx, contentId, command, job);
    } catch (err) {
      await blobs.delete(key).catch(() => undefined);
      throw err;
    }
    if (duplicateOf) {
      await blobs.delete(key).catch(() => undefined);
      return { filename: file.filename, status: 'skipped', content_id: duplicateOf, reason: 'duplicate' };
    }
    return { filename: file.filename, status: 'accepted', content_id: contentId, version_id: versionId, item: await readItem(contentId) };
  }

  return {
    /** Raw text or Markdown (POST /org/kb/raw, POST /content): processed like a file, queued. */
    async createRaw(ctx: CallContext, input: { title: string; text: string; summary?: string; filing: Filing }): Promise<ContentDoc> {
      if (input.text.trim().length === 0) throw errors.validation('text must not be empty', { details: { field: 'text' } });
      const data = Buffer.from(input.text, 'utf8');
      if (data.length > deps.maxUploadBytes) {
        throw errors.validation(`text is larger than the ${megabytes(deps.maxUploadBytes)} limit`, { details: { field: 'text' } });
      }
      const source: Source = { kind: 'raw', format: 'md', media_type: 'text/markdown', size_bytes: data.length, sha256: sha256(data) };
      // The same bytes as live content of the organization (raw text or a file) are skipped,
      // so re-sending an import after a failure never creates content twice.
      const existing = await store.get<{ id: string; content_id: string }>(HASHES, hashId(ctx.org_id, source.sha256));
      if (existing) throw duplicateText(existing.content_id);
      const contentId = ids.uuid();
      const versionId = ids.uuid();
      const key = blobKey(ctx.org_id, versionId);
      await blobs.put(key, data);
      let duplicateOf: string | undefined;
      try {
        duplicateOf = await commitVersion(
          ctx,
          contentId,
          {
            type: 'create',
            content_id: contentId,
            version_id: versionId,
            org_id: ctx.org_id,
            kind: 'raw',
            title: input.title,
            source,
            filing: input.filing,
            at: now().toISOString(),
            ...(input.summary !== undefined && { summary: input.summary }),
          },
          { blob_key: key, filename: 'raw.md', claimed_format: 'md', allowed_formats: ['md'] },
        );
      } catch (err) {
        await blobs.delete(key).catch(() => undefined);
        throw err;
      }
      if (duplicateOf) {
        await blobs.delete(key).catch(() => undefined);
        throw duplicateText(duplicateOf);
      }
      deps.onQueued();
      return readItem(contentId);
    },

    /**
     * Files in (1 to 10): each is accepted as a new content item or skipped as a
     * duplicate (same bytes already in the organization). The caller answers 422
     * when every file of its request was skipped (it may send one request's files
     * in several calls, each under the gRPC message limit, after a validateOnly call).
     */
    async uploadFiles(
      ctx: CallContext,
      input: { files: FileInput[]; filing: Filing; title?: string; summary?: string; allowedFormats?: Format[]; validateOnly?: boolean },
    ): Promise<FileOutcome[]> {
      if (input.files.length === 0) throw errors.validation('No file was uploaded', { code: 'no_files' });
      if (input.files.length > MAX_FILES_PER_CALL) {
        throw errors.validation(`At most ${MAX_FILES_PER_CALL} files per call`, { code: 'too_many_files' });
      }
      const allowed = input.allowedFormats?.length ? input.allowedFormats : UPLOAD_FORMATS;
      // Every file's type is checked before any is stored: a bad request changes nothing.
      const formats = input.files.map((f) => claimedFormat(f.filename, allowed));
      if (input.validateOnly) return [];
      const single = input.files.length === 1;
      // The files' bytes are written side by side (each write waits on the disk),
      // then committed one after another in their order, so which of two equal
      // files is the duplicate stays the later one.
      const stored = await Promise.allSettled(input.files.map((file) => storeVersion(ctx, file)));
      const failed = stored.find((r) => r.status === 'rejected');
      if (failed) {
        for (const r of stored) if (r.status === 'fulfilled') await blobs.delete(r.value.key).catch(() => undefined);
        throw (failed as PromiseRejectedResult).reason;
      }
      const outcomes: FileOutcome[] = [];
      for (const [i, file] of input.files.entries()) {
        const options = {
          filing: input.filing,
          ...(single && input.title !== undefined && { title: input.title }),
          ...(single && input.summary !== undefined && { summary: input.summary }),
        };
        const version = (stored[i] as PromiseFulfilledResult<Awaited<ReturnType<typeof storeVersion>>>).value;
        outcomes.push(await acceptFile(ctx, file, formats[i], allowed, options, version));
      }
      deps.onQueued();
      return outcomes;
    },

    /** One piece of an upload in progress (in order from seq 0); uploadFiles or replaceFile then name its stage_id. */
    async stagePiece(ctx: CallContext, stageId: string, seq: number, data: Buffer): Promise<void> {
      checkStageId(stageId);
      if (!Number.isInteger(seq) || seq < 0 || seq >= MAX_PIECES)
        throw errors.validation('seq is out of range', { details: { field: 'seq' } });
      if (data.length === 0 || data.length > MAX_PIECE_BYTES) {
        throw errors.validation(`A piece holds 1 byte to ${megabytes(MAX_PIECE_BYTES)}`, { details: { field: 'data' } });
      }
      await blobs.put(stageKey(ctx.org_id, stageId, seq), data);
    },

    /** Drops the pieces of an upload that will not be completed. */
    discardStaged: (ctx: CallContext, stageId: string) => discardStaged(ctx.org_id, stageId),

    /** A new version from a new file (PUT, or PATCH with a file): version_num goes up, processing is queued. */
    async replaceFile(
      ctx: CallContext,
      contentId: string,
      input: { file: FileInput; title?: string; summary?: string; allowedFormats?: Format[] },
    ): Promise<ContentDoc> {
      const current = await store.get<ContentDoc>(CONTENT, contentId);
      if (!current || current.org_id !== ctx.org_id || current.deleted) throw errors.notFound('Content');
      const allowed = input.allowedFormats?.length ? input.allowedFormats : UPLOAD_FORMATS;
      const format = claimedFormat(input.file.filename, allowed);
      const versionId = ids.uuid();
      const key = blobKey(ctx.org_id, versionId);
      const stored = await storeFile(ctx, input.file, key);
      const command: ContentCommand = {
        type: 'add_version',
        org_id: ctx.org_id,
        version_id: versionId,
        source: sourceOf(input.file, format, stored),
        at: now().toISOString(),
        ...(input.title !== undefined && { title: input.title }),
        ...(input.summary !== undefined && { summary: input.summary }),
      };
      try {
        const job = stored.too_large
          ? { failure: tooLargeReason(stored) }
          : { blob_key: key, filename: input.file.filename, ...(format && { claimed_format: format }), allowed_formats: allowed };
        await commitVersion(ctx, contentId, command, job);
      } catch (err) {
        await blobs.delete(key).catch(() => undefined);
        throw err;
      }
      deps.onQueued();
      return readItem(contentId);
    },

    async update(
      ctx: CallContext,
      contentId: string,
      patch: { title?: string; summary?: string | null; category_id?: string | null; topic_id?: string | null },
    ): Promise<ContentDoc> {
      await commands.transaction(metadataOf(ctx), (session) =>
        session.execute(contentDecider, contentStream(contentId), {
          type: 'update',
          org_id: ctx.org_id,
          ...patch,
          at: now().toISOString(),
        }),
      );
      return readItem(contentId);
    },

    /** Deletes the item and then its original files (a crash in between leaves only unreachable blobs). */
    async remove(ctx: CallContext, contentId: string): Promise<void> {
      await commands.transaction(metadataOf(ctx), (session) =>
        session.execute(contentDecider, contentStream(contentId), { type: 'delete', org_id: ctx.org_id, at: now().toISOString() }),
      );
      const versions = await store.find<VersionDoc>(VERSIONS, { where: { content_id: contentId } });
      for (const v of versions) await blobs.delete(blobKey(ctx.org_id, v.id)).catch(() => undefined);
    },
  };
}

export type Intake = ReturnType<typeof createIntake>;
