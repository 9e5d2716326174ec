import { errors } from '@kb/platform';
import type { Decider, DecidedEvent, Stored } from '@kb/eventsourcing';
import type { DraftRevision, GenerationRunRequested } from '@kb/events';

/**
 * The deciders of generation's aggregates (pure): brand kit (one per
 * organization), content type, product line, generation run and draft.
 */

const never = (x: never): never => {
  throw new Error(`unhandled command ${JSON.stringify(x)}`);
};

// ---- brand kit ----

export type BrandKitCommand = { type: 'set'; org_id: string; name: string; guidelines: Record<string, unknown>; at: string };
export const brandKitStream = (orgId: string) => `brand_kit-${orgId}`;
export const brandKitDecider: Decider<BrandKitCommand, { exists: boolean }> = {
  initialState: () => ({ exists: false }),
  evolve: () => ({ exists: true }),
  decide: (c, s) => [
    { type: 'brand_kit.set', data: { org_id: c.org_id, name: c.name, guidelines: c.guidelines, created: !s.exists, at: c.at } },
  ],
};

// ---- content types and product lines: create, replace, delete ----

interface ResourceState {
  exists: boolean;
  deleted: boolean;
}

function resourceDecider<Fields extends Record<string, unknown>>(kind: 'content_type' | 'product_line') {
  const idField = `${kind}_id`;
  type Command =
    | ({ type: 'create'; id: string; org_id: string; at: string } & Fields)
    | ({ type: 'update'; id: string; org_id: string; at: string } & Fields)
    | { type: 'delete'; id: string; org_id: string; at: string };
  const decider: Decider<Command, ResourceState> = {
    initialState: () => ({ exists: false, deleted: false }),
    evolve: (s, e) => (e.type.endsWith('.deleted') ? { ...s, deleted: true } : { exists: true, deleted: false }),
    decide: (c, s): DecidedEvent[] => {
      const { type, id, ...rest } = c;
      switch (type) {
        case 'create':
          if (s.exists) throw errors.conflict(`${kind} ${id} exists`);
          return [{ type: `${kind}.created`, data: { [idField]: id, ...rest } }];
        case 'update':
          if (!s.exists || s.deleted) throw errors.notFound(kind === 'content_type' ? 'Content type' : 'Product line');
          return [{ type: `${kind}.updated`, data: { [idField]: id, ...rest } }];
        case 'delete':
          if (!s.exists || s.deleted) throw errors.notFound(kind === 'content_type' ? 'Content type' : 'Product line');
          return [{ type: `${kind}.deleted`, data: { [idField]: id, org_id: c.org_id, at: c.at } }];
        default:
          return never(type);
      }
    },
  };
  return decider;
}

export const contentTypeDecider = resourceDecider<{ name: string; description: string; config: Record<string, unknown> }>('content_type');
export const contentTypeStream = (id: string) => `content_type-${id}`;
export const productLineDecider = resourceDecider<{ name: string; details: Record<string, unknown> }>('product_line');
export const productLineStream = (id: string) => `product_line-${id}`;

// ---- generation runs ----

export type RunState = 'queued' | 'retrieving' | 'drafting' | 'verifying' | 'completed' | 'failed';
export const TERMINAL: RunState[] = ['completed', 'failed'];

export type RunCommand =
  | ({ type: 'request' } & GenerationRunRequested)
  | { type: 'progress'; state: 'retrieving' | 'drafting' | 'verifying'; progress: number; at: string }
  | { type: 'complete'; draft_id: string; at: string }
  | { type: 'fail'; reason: string; at: string };

export interface RunAggregate {
  requested: GenerationRunRequested | null;
  state: RunState | null;
}

export const runStream = (id: string) => `generation_run-${id}`;
export const runDecider: Decider<RunCommand, RunAggregate> = {
  initialState: () => ({ requested: null, state: null }),
  evolve: (s, e: Stored) => {
    switch (e.type) {
      case 'generation_run.requested':
        return { requested: e.data, state: 'queued' };
      case 'generation_run.progressed':
        return { ...s, state: e.data.state };
      case 'generation_run.completed':
        return { ...s, state: 'completed' };
      case 'generation_run.failed':
        return { ...s, state: 'failed' };
      default:
        return s;
    }
  },
  decide: (c, s): DecidedEvent[] => {
    if (c.type === 'request') {
      if (s.requested) throw errors.conflict('The run exists');
      const { type: _t, ...data } = c;
      return [{ type: 'generation_run.requested', data }];
    }
    const run = s.requested;
    if (!run) throw errors.notFound('Generation run');
    // A terminal run takes no more steps: a late worker (lease lost) changes nothing.
    if (s.state && TERMINAL.includes(s.state)) return [];
    const base = { run_id: run.run_id, org_id: run.org_id };
    const question = run.geo_question_id ? { geo_question_id: run.geo_question_id } : {};
    switch (c.type) {
      case 'progress':
        return [{ type: 'generation_run.progressed', data: { ...base, state: c.state, progress: c.progress, at: c.at } }];
      case 'complete':
        return [{ type: 'generation_run.completed', data: { ...base, draft_id: c.draft_id, ...question, at: c.at } }];
      case 'fail':
        return [{ type: 'generation_run.failed', data: { ...base, reason: c.reason, ...question, at: c.at } }];
      default:
        return never(c);
    }
  },
};

// ---- drafts ----

export type StaleSource = DraftRevision['stale_sources'][number];

export type DraftCommand =
  | { type: 'create'; draft: DraftRevision }
  | { type: 'revise'; draft: DraftRevision }
  | { type: 'mark_stale'; content_id: string; reason: 'new_version' | 'deleted'; new_version_id?: string; at: string }
  | { type: 'delete'; at: string };

export interface DraftAggregate {
  draft: DraftRevision | null;
  deleted: boolean;
}

export const draftStream = (id: string) => `draft-${id}`;
export const draftDecider: Decider<DraftCommand, DraftAggregate> = {
  initialState: () => ({ draft: null, deleted: false }),
  evolve: (s, e) => {
    switch (e.type) {
      case 'draft.created':
      case 'draft.revised':
        return { ...s, draft: e.data };
      case 'draft.sources_stale':
        return s.draft ? { ...s, draft: { ...s.draft, stale_sources: e.data.stale_sources } } : s;
      case 'draft.deleted':
        return { ...s, deleted: true };
      default:
        return s;
    }
  },
  decide: (c, s): DecidedEvent[] => {
    switch (c.type) {
      case 'create':
        if (s.draft) throw errors.conflict('The draft exists');
        return [{ type: 'draft.created', data: { ...c.draft, revision: 1 } }];
      case 'revise':
        if (!s.draft || s.deleted) throw errors.notFound('Draft');
        return [{ type: 'draft.revised', data: { ...c.draft, revision: s.draft.revision + 1 } }];
      case 'mark_stale': {
        const draft = s.draft;
        if (!draft || s.deleted) return [];
        const cited = citedVersions(draft, c.content_id);
        // A new version of a source the draft already cites at that version is no change.
        const stale = cited.filter(
          (v) => v !== c.new_version_id && !draft.stale_sources.some((x) => x.version_id === v && x.reason === c.reason),
        );
        if (stale.length === 0) return [];
        const stale_sources = [
          ...draft.stale_sources,
          ...stale.map((version_id) => ({ content_id: c.content_id, version_id, reason: c.reason, at: c.at })),
        ];
        return [
          {
            type: 'draft.sources_stale',
            data: { draft_id: draft.draft_id, org_id: draft.org_id, revision: draft.revision, stale_sources, at: c.at },
          },
        ];
      }
      case 'delete':
        if (!s.draft || s.deleted) throw errors.notFound('Draft');
        return [{ type: 'draft.deleted', data: { draft_id: s.draft.draft_id, org_id: s.draft.org_id, at: c.at } }];
      default:
        return never(c);
    }
  },
};

/** The versions of one content item a draft cites. */
export function citedVersions(draft: Pick<DraftRevision, 'sections'>, contentId: string): string[] {
  const out = new Set<string>();
  for (const section of draft.sections)
    for (const sentence of section.sentences) for (const c of sentence.citations) if (c.content_id === contentId) out.add(c.version_id);
  return [...out];
}
