import type { UnaryHandler } from '@kb/rpc';
import type { Filing } from '../domain/content.js';
import type { Format } from '../extract/types.js';
import type { FileInput, FileOutcome, Intake } from '../app/intake.js';
import type { ContentQueries } from '../app/queries.js';
import type { ChunkDoc, ContentDoc, VersionDoc } from '../projections/content.js';

interface FilingMessage {
  parent_id?: string;
  category_id?: string;
  topic_id?: string;
  tags?: string[];
}
interface FileMessage {
  filename?: string;
  data?: Buffer;
  too_large?: boolean;
  size_bytes?: string | number;
  stage_id?: string;
}

const filingOf = (f: FilingMessage | undefined): Filing => ({
  parent_id: f?.parent_id ?? null,
  tags: f?.tags ?? [],
  ...(f?.category_id !== undefined && { category_id: f.category_id }),
  ...(f?.topic_id !== undefined && { topic_id: f.topic_id }),
});

const fileOf = (f: FileMessage | undefined): FileInput => ({
  filename: f?.filename ?? '',
  data: f?.data ?? Buffer.alloc(0),
  too_large: f?.too_large ?? false,
  size_bytes: Number(f?.size_bytes ?? 0),
  ...(f?.stage_id && { stage_id: f.stage_id }),
});

/** The content item message: the JSON shape plus where it came from. */
export const itemMessage = (d: ContentDoc) => ({
  id: d.id,
  org_id: d.org_id,
  type: d.type,
  title: d.title,
  summary: d.summary,
  version_num: d.version_num,
  version_id: d.version_id,
  processing_status: d.processing_status,
  failure_reason: d.failure_reason,
  attempts: d.attempts,
  parent_id: d.parent_id ?? undefined,
  category_id: d.category_id,
  topic_id: d.topic_id,
  tags: d.tags,
  filename: d.source.filename,
  format: d.source.format,
  size_bytes: d.source.size_bytes,
  created_at: d.created_at,
  updated_at: d.updated_at,
});

const versionMessage = (v: VersionDoc) => ({
  version_id: v.id,
  version_num: v.version_num,
  title: v.title,
  filename: v.source.filename,
  format: v.source.format,
  size_bytes: v.source.size_bytes,
  sha256: v.source.sha256,
  processing_status: v.processing_status,
  failure_reason: v.failure_reason,
  attempts: v.attempts,
  chunk_count: v.chunk_count,
  characters: v.characters,
  created_at: v.created_at,
  completed_at: v.completed_at,
});

const chunkMessage = (c: ChunkDoc) => ({
  chunk_index: c.chunk_index,
  text: c.text,
  page: c.page,
  sheet: c.sheet,
  slide: c.slide,
  heading_path: c.heading_path ?? [],
  row_range: c.row_range ?? [],
});

const outcomeMessage = (o: FileOutcome) =>
  o.status === 'accepted'
    ? { filename: o.filename, status: o.status, content_id: o.content_id, version_id: o.version_id, item: itemMessage(o.item) }
    : { filename: o.filename, status: o.status, content_id: o.content_id, reason: o.reason };

const page = (r: { limit?: number; offset?: number }) => ({ limit: r.limit || 10, offset: r.offset ?? 0 });

/** Thin mapping from IngestService RPCs to the use cases. */
export function ingestHandlers(intake: Intake, queries: ContentQueries): Record<string, UnaryHandler> {
  return {
    CreateRaw: async (r: { title?: string; text?: string; summary?: string; filing?: FilingMessage }, ctx) =>
      itemMessage(
        await intake.createRaw(ctx, {
          title: r.title ?? '',
          text: r.text ?? '',
          filing: filingOf(r.filing),
          ...(r.summary !== undefined && { summary: r.summary }),
        }),
      ),
    StagePiece: async (r: { stage_id?: string; seq?: number; data?: Buffer }, ctx) => {
      await intake.stagePiece(ctx, r.stage_id ?? '', r.seq ?? 0, r.data ?? Buffer.alloc(0));
      return {};
    },
    DiscardStaged: async (r: { stage_id?: string }, ctx) => {
      await intake.discardStaged(ctx, r.stage_id ?? '');
      return {};
    },
    UploadFiles: async (
      r: {
        files?: FileMessage[];
        filing?: FilingMessage;
        title?: string;
        summary?: string;
        allowed_formats?: string[];
        validate_only?: boolean;
      },
      ctx,
    ) => ({
      files: (
        await intake.uploadFiles(ctx, {
          files: (r.files ?? []).map(fileOf),
          filing: filingOf(r.filing),
          allowedFormats: (r.allowed_formats ?? []) as Format[],
          validateOnly: r.validate_only ?? false,
          ...(r.title !== undefined && { title: r.title }),
          ...(r.summary !== undefined && { summary: r.summary }),
        })
      ).map(outcomeMessage),
    }),
    ReplaceFile: async (r: { content_id: string; file?: FileMessage; title?: string; summary?: string; allowed_formats?: string[] }, ctx) =>
      itemMessage(
        await intake.replaceFile(ctx, r.content_id, {
          file: fileOf(r.file),
          allowedFormats: (r.allowed_formats ?? []) as Format[],
          ...(r.title !== undefined && { title: r.title }),
          ...(r.summary !== undefined && { summary: r.summary }),
        }),
      ),
    UpdateContent: async (
      r: { content_id: string; title?: string; summary?: string; clear_summary?: boolean; category_id?: string; topic_id?: string },
      ctx,
    ) =>
      itemMessage(
        await intake.update(ctx, r.content_id, {
          ...(r.title !== undefined && { title: r.title }),
          ...(r.clear_summary ? { summary: null } : r.summary !== undefined ? { summary: r.summary } : {}),
          ...(r.category_id !== undefined && { category_id: r.category_id }),
          ...(r.topic_id !== undefined && { topic_id: r.topic_id }),
        }),
      ),
    DeleteContent: async (r: { content_id: string }, ctx) => {
      await intake.remove(ctx, r.content_id);
      return {};
    },
    GetContent: async (r: { content_id: string }, ctx) => {
      const { item, versions } = await queries.detail(ctx, r.content_id);
      return { item: itemMessage(item), versions: versions.map(versionMessage) };
    },
    ListContent: async (r: { limit?: number; offset?: number; category_id?: string; topic_id?: string }, ctx) => {
      const { items, total_count } = await queries.list(ctx, page(r), {
        ...(r.category_id !== undefined && { category_id: r.category_id }),
        ...(r.topic_id !== undefined && { topic_id: r.topic_id }),
      });
      return { items: items.map(itemMessage), total_count };
    },
    ListChunks: async (r: { content_id: string; version_id?: string; limit?: number; offset?: number }, ctx) => {
      const res = await queries.chunks(ctx, r.content_id, r.version_id, page(r));
      return { ...res, chunks: res.chunks.map(chunkMessage) };
    },
  };
}
