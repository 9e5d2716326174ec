import { errors } from '@kb/platform';
import type { Decider, DecidedEvent, Stored } from '@kb/eventsourcing';
import type { ContentChunksAdded, ContentEvent, ContentVersionAccepted } from '@kb/events';

/**
 * The content aggregate: one stream per content item, holding its versions and
 * each version's processing lifecycle (queued -> processing -> completed | failed).
 * Extraction itself is I/O and happens outside; this decides which facts follow.
 */
export type ProcessingStatus = 'queued' | 'processing' | 'completed' | 'failed';
export type Source = ContentVersionAccepted['source'];
export type ChunkData = ContentChunksAdded['chunks'][number];

export interface VersionState {
  version_id: string;
  version_num: number;
  status: ProcessingStatus;
  attempts: number;
}

export interface ContentState {
  status: 'new' | 'active' | 'deleted';
  content_id: string;
  org_id: string;
  type: ContentVersionAccepted['type'];
  title: string;
  summary?: string;
  parent_id: string | null;
  category_id?: string;
  topic_id?: string;
  tags: string[];
  versions: VersionState[];
}

export interface Filing {
  parent_id: string | null;
  category_id?: string;
  topic_id?: string;
  tags: string[];
}

export type ContentCommand =
  | {
      type: 'create';
      content_id: string;
      version_id: string;
      org_id: string;
      kind: ContentVersionAccepted['type'];
      title: string;
      summary?: string;
      source: Source;
      filing: Filing;
      at: string;
    }
  | { type: 'add_version'; org_id: string; version_id: string; title?: string; summary?: string; source: Source; at: string }
  | { type: 'start_processing'; version_id: string; attempt: number; at: string }
  | { type: 'complete'; version_id: string; chunks: ChunkData[]; characters: number; max_event_bytes: number; format?: string; at: string }
  | { type: 'fail'; version_id: string; reason: string; attempts: number; at: string }
  | {
      type: 'update';
      org_id: string;
      title?: string;
      summary?: string | null;
      category_id?: string | null;
      topic_id?: string | null;
      at: string;
    }
  | { type: 'delete'; org_id: string; at: string }
  /** The knowledge-base tree moved the content's node (null: to the root folder). */
  | { type: 'move'; org_id: string; parent_id: string | null; at: string };

export const contentStream = (contentId: string): string => `content-${contentId}`;

const initialState = (): ContentState => ({
  status: 'new',
  content_id: '',
  org_id: '',
  type: 'raw',
  title: '',
  parent_id: null,
  tags: [],
  versions: [],
});

const withVersion = (state: ContentState, versionId: string, change: (v: VersionState) => VersionState): ContentState => ({
  ...state,
  versions: state.versions.map((v) => (v.version_id === versionId ? change(v) : v)),
});

function evolve(state: ContentState, event: Stored<ContentEvent>): ContentState {
  switch (event.type) {
    case 'content.created':
    case 'content.version_added': {
      const d = event.data;
      const version: VersionState = { version_id: d.version_id, version_num: d.version_num, status: 'queued', attempts: 0 };
      const base = event.type === 'content.created' ? initialState() : state;
      return {
        ...base,
        status: 'active',
        content_id: d.content_id,
        org_id: d.org_id,
        type: d.type,
        title: d.title,
        ...(d.summary !== undefined ? { summary: d.summary } : {}),
        parent_id: d.parent_id,
        ...(d.category_id !== undefined && { category_id: d.category_id }),
        ...(d.topic_id !== undefined && { topic_id: d.topic_id }),
        tags: d.tags,
        versions: [...base.versions, version],
      };
    }
    case 'content.processing_started': {
      const d = event.data;
      return withVersion(state, d.version_id, (v) => ({ ...v, status: 'processing', attempts: d.attempt }));
    }
    case 'content.extracted': {
      const d = event.data;
      return withVersion(state, d.version_id, (v) => ({ ...v, status: 'completed' }));
    }
    case 'content.failed': {
      const d = event.data;
      return withVersion(state, d.version_id, (v) => ({ ...v, status: 'failed', attempts: d.attempts }));
    }
    case 'content.updated': {
      const d = event.data;
      const next = { ...state };
      if (d.title !== undefined) next.title = d.title;
      if (d.summary === null) delete next.summary;
      else if (d.summary !== undefined) next.summary = d.summary;
      if (d.category_id === null) delete next.category_id;
      else if (d.category_id !== undefined) next.category_id = d.category_id;
      if (d.topic_id === null) delete next.topic_id;
      else if (d.topic_id !== undefined) next.topic_id = d.topic_id;
      return next;
    }
    case 'content.moved':
      return { ...state, parent_id: event.data.parent_id };
    case 'content.deleted':
      return { ...state, status: 'deleted' };
    default:
      return state;
  }
}

/** Another organization's content is indistinguishable from a missing one. */
function requireActive(state: ContentState, orgId: string): void {
  if (state.status !== 'active' || state.org_id !== orgId) throw errors.notFound('Content');
}

function requireVersion(state: ContentState, versionId: string): VersionState {
  const version = state.versions.find((v) => v.version_id === versionId);
  if (!version) throw errors.notFound('Content version');
  return version;
}

export function checkTitle(title: string): string {
  const clean = title.trim();
  if (clean.length === 0) throw errors.validation('title must not be empty', { details: { field: 'title' } });
  if (clean.length > 500) throw errors.validation('title is longer than 500 characters', { details: { field: 'title' } });
  return clean;
}

/**
 * What a content.chunks_added event carries besides its chunks, with room to
 * spare: its envelope (ids, type, schema, positions, time), its metadata (org,
 * actor, trace context), the other data fields, and the bus's record framing.
 */
export const CHUNK_EVENT_OVERHEAD_BYTES = 8192;

/** What one chunk adds to a content.chunks_added event on the bus: its JSON in UTF-8 and a comma. */
export const chunkBytes = (chunk: ChunkData): number => Buffer.byteLength(JSON.stringify(chunk)) + 1;

/**
 * Splits chunks, in order, into content.chunks_added events that each fit in
 * `maxEventBytes` on the bus (the bus's message limit, BUS_MAX_MESSAGE_BYTES): sized
 * by their JSON in UTF-8, so multi-byte characters and escapes count as they travel.
 * A chunk that cannot fit in an event on its own is refused: no event the bus
 * cannot carry is ever appended.
 */
export function batchChunks(chunks: ChunkData[], maxEventBytes: number): ChunkData[][] {
  const room = maxEventBytes - CHUNK_EVENT_OVERHEAD_BYTES;
  const batches: ChunkData[][] = [];
  let current: ChunkData[] = [];
  let size = 0;
  for (const chunk of chunks) {
    const bytes = chunkBytes(chunk);
    if (bytes > room)
      throw errors.validation(
        `Chunk ${chunk.chunk_index} is ${bytes.toLocaleString('en-US')} bytes, more than an event carries (${room.toLocaleString('en-US')}); lower CHUNK_TARGET_CHARS`,
      );
    if (current.length > 0 && size + bytes > room) {
      batches.push(current);
      current = [];
      size = 0;
    }
    current.push(chunk);
    size += bytes;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

const optional = (extra: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(extra).filter(([, v]) => v !== undefined));

function decide(command: ContentCommand, state: ContentState): DecidedEvent[] {
  switch (command.type) {
    case 'create': {
      if (state.status !== 'new') throw errors.conflict('Content already exists', { code: 'content_exists' });
      const data = {
        content_id: command.content_id,
        version_id: command.version_id,
        version_num: 1,
        org_id: command.org_id,
        type: command.kind,
        title: checkTitle(command.title),
        source: command.source,
        parent_id: command.filing.parent_id,
        tags: command.filing.tags,
        at: command.at,
        ...optional({ summary: command.summary, category_id: command.filing.category_id, topic_id: command.filing.topic_id }),
      };
      return [{ type: 'content.created', data }];
    }
    case 'add_version': {
      requireActive(state, command.org_id);
      const last = state.versions[state.versions.length - 1];
      const summary = command.summary ?? state.summary;
      const data = {
        content_id: state.content_id,
        version_id: command.version_id,
        version_num: (last?.version_num ?? 0) + 1,
        org_id: state.org_id,
        type: state.type,
        title: command.title === undefined ? state.title : checkTitle(command.title),
        source: command.source,
        parent_id: state.parent_id,
        tags: state.tags,
        at: command.at,
        ...optional({ summary, category_id: state.category_id, topic_id: state.topic_id }),
      };
      return [{ type: 'content.version_added', data }];
    }
    case 'start_processing': {
      if (state.status !== 'active') return [];
      const version = requireVersion(state, command.version_id);
      if (version.status === 'completed' || version.status === 'failed') return [];
      return [
        {
          type: 'content.processing_started',
          data: {
            content_id: state.content_id,
            version_id: version.version_id,
            org_id: state.org_id,
            attempt: command.attempt,
            at: command.at,
          },
        },
      ];
    }
    case 'complete': {
      if (state.status !== 'active') return [];
      const version = requireVersion(state, command.version_id);
      if (version.status === 'completed' || version.status === 'failed') return [];
      const ids = { content_id: state.content_id, version_id: version.version_id, org_id: state.org_id };
      return [
        ...batchChunks(command.chunks, command.max_event_bytes).map((chunks) => ({
          type: 'content.chunks_added',
          data: { ...ids, chunks, at: command.at },
        })),
        {
          type: 'content.extracted',
          data: {
            ...ids,
            version_num: version.version_num,
            chunk_count: command.chunks.length,
            characters: command.characters,
            ...optional({ format: command.format }),
            at: command.at,
          },
        },
      ];
    }
    case 'fail': {
      if (state.status !== 'active') return [];
      const version = requireVersion(state, command.version_id);
      if (version.status === 'completed' || version.status === 'failed') return [];
      return [
        {
          type: 'content.failed',
          data: {
            content_id: state.content_id,
            version_id: version.version_id,
            org_id: state.org_id,
            reason: command.reason,
            attempts: Math.max(1, command.attempts),
            at: command.at,
          },
        },
      ];
    }
    case 'update': {
      requireActive(state, command.org_id);
      const data = {
        content_id: state.content_id,
        org_id: state.org_id,
        at: command.at,
        ...optional({
          title: command.title === undefined ? undefined : checkTitle(command.title),
          summary: command.summary,
          category_id: command.category_id,
          topic_id: command.topic_id,
        }),
      };
      return [{ type: 'content.updated', data }];
    }
    case 'delete':
      requireActive(state, command.org_id);
      return [{ type: 'content.deleted', data: { content_id: state.content_id, org_id: state.org_id, at: command.at } }];
    case 'move':
      // A fact from the tree, not a request: nothing to refuse, only nothing to record when it changes nothing.
      if (state.status !== 'active' || state.org_id !== command.org_id || state.parent_id === command.parent_id) return [];
      return [
        {
          type: 'content.moved',
          data: { content_id: state.content_id, org_id: state.org_id, parent_id: command.parent_id, at: command.at },
        },
      ];
    default: {
      const never: never = command;
      throw new Error(`Unknown command ${JSON.stringify(never)}`);
    }
  }
}

export const contentDecider: Decider<ContentCommand, ContentState, ContentEvent> = { initialState, evolve, decide };
