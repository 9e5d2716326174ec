import type { Projection, StoredOf } from '@kb/eventsourcing';
import type { DraftRevision, GenerationRunRequested } from '@kb/events';
import type { RunState } from '../domain/aggregates.js';
import { rulesProjection } from '../engine/rules.js';

export const BRAND_KITS = 'brand_kits';
export const CONTENT_TYPES = 'content_types';
export const PRODUCT_LINES = 'product_lines';
export const RUNS = 'generation_runs';
export const DRAFTS = 'drafts';
/** One row per (draft, cited content item): which drafts a changed source affects. */
export const DRAFT_SOURCES = 'draft_sources';

export interface BrandKitDoc {
  id: string;
  org_id: string;
  name: string;
  guidelines: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

export interface ContentTypeDoc {
  id: string;
  content_type_id: string;
  org_id: string;
  name: string;
  description: string;
  config: Record<string, unknown>;
  created_at: string;
  updated_at: string;
  seq: number;
}

export interface ProductLineDoc {
  id: string;
  product_line_id: string;
  org_id: string;
  name: string;
  details: Record<string, unknown>;
  created_at: string;
  updated_at: string;
  seq: number;
}

export interface RunDoc {
  id: string;
  run_id: string;
  org_id: string;
  content_type_id: string;
  geo_question_id: string | null;
  product_line_id: string | null;
  instructions: string | null;
  scope: GenerationRunRequested['scope'];
  caller_folder_scope: string[] | null;
  rule_id: string | null;
  state: RunState;
  progress: number;
  reason: string | null;
  draft_id: string | null;
  /** 1 while queued or working: what the worker looks for. */
  active: number;
  actor: string | null;
  created_at: string;
  updated_at: string;
  seq: number;
}

export type DraftDoc = DraftRevision & { id: string; created_at: string; seq: number };

export interface DraftSourceDoc {
  id: string;
  draft_id: string;
  org_id: string;
  content_id: string;
}

async function putDraft(tx: Parameters<Projection['apply']>[0], event: StoredOf<'draft.created' | 'draft.revised'>) {
  const d = event.data;
  const current = await tx.get<DraftDoc>(DRAFTS, d.draft_id);
  await tx.put(DRAFTS, { ...d, id: d.draft_id, created_at: current?.created_at ?? d.at, seq: current?.seq ?? event.position });
  const wanted = new Set(d.source_content_ids);
  for (const old of await tx.find<DraftSourceDoc>(DRAFT_SOURCES, { where: { draft_id: d.draft_id } }))
    if (!wanted.has(old.content_id)) await tx.delete(DRAFT_SOURCES, old.id);
  for (const content_id of wanted)
    await tx.put(DRAFT_SOURCES, { id: `${d.draft_id}:${content_id}`, draft_id: d.draft_id, org_id: d.org_id, content_id });
}

async function updateRun(tx: Parameters<Projection['apply']>[0], runId: string, patch: Partial<RunDoc>) {
  const current = await tx.get<RunDoc>(RUNS, runId);
  if (current) await tx.put(RUNS, { ...current, ...patch });
}

/** Every read model of generation, fed by its own events in the append's transaction. */
export const generationProjection: Projection = {
  name: 'generation',
  collections: [BRAND_KITS, CONTENT_TYPES, PRODUCT_LINES, RUNS, DRAFTS, DRAFT_SOURCES],
  indexes: [
    { collection: CONTENT_TYPES, fields: ['org_id', 'seq'] },
    { collection: PRODUCT_LINES, fields: ['org_id', 'seq'] },
    { collection: RUNS, fields: ['org_id', 'seq'] },
    { collection: RUNS, fields: ['active'] },
    { collection: DRAFTS, fields: ['org_id', 'seq'] },
    { collection: DRAFT_SOURCES, fields: ['content_id'] },
  ],
  async apply(tx, event) {
    switch (event.type) {
      case 'brand_kit.set': {
        const d = event.data;
        const current = await tx.get<BrandKitDoc>(BRAND_KITS, d.org_id);
        await tx.put(BRAND_KITS, {
          id: d.org_id,
          org_id: d.org_id,
          name: d.name,
          guidelines: d.guidelines,
          created_at: current?.created_at ?? d.at,
          updated_at: d.at,
        });
        return;
      }
      case 'content_type.created':
      case 'content_type.updated': {
        const d = event.data;
        const current = await tx.get<ContentTypeDoc>(CONTENT_TYPES, d.content_type_id);
        await tx.put(CONTENT_TYPES, {
          id: d.content_type_id,
          content_type_id: d.content_type_id,
          org_id: d.org_id,
          name: d.name,
          description: d.description,
          config: d.config,
          created_at: current?.created_at ?? d.at,
          updated_at: d.at,
          seq: current?.seq ?? event.position,
        });
        return;
      }
      case 'content_type.deleted':
        await tx.delete(CONTENT_TYPES, event.data.content_type_id);
        return;
      case 'product_line.created':
      case 'product_line.updated': {
        const d = event.data;
        const current = await tx.get<ProductLineDoc>(PRODUCT_LINES, d.product_line_id);
        await tx.put(PRODUCT_LINES, {
          id: d.product_line_id,
          product_line_id: d.product_line_id,
          org_id: d.org_id,
          name: d.name,
          details: d.details,
          created_at: current?.created_at ?? d.at,
          updated_at: d.at,
          seq: current?.seq ?? event.position,
        });
        return;
      }
      case 'product_line.deleted':
        await tx.delete(PRODUCT_LINES, event.data.product_line_id);
        return;
      case 'generation_run.requested': {
        const d = event.data;
        const doc: RunDoc = {
          id: d.run_id,
          run_id: d.run_id,
          org_id: d.org_id,
          content_type_id: d.content_type_id,
          geo_question_id: d.geo_question_id ?? null,
          product_line_id: d.product_line_id ?? null,
          instructions: d.instructions ?? null,
          scope: d.scope,
          caller_folder_scope: d.caller_folder_scope ?? null,
          rule_id: d.rule_id ?? null,
          state: 'queued',
          progress: 0,
          reason: null,
          draft_id: null,
          active: 1,
          actor: d.actor ?? null,
          created_at: d.at,
          updated_at: d.at,
          seq: event.position,
        };
        await tx.put(RUNS, doc);
        return;
      }
      case 'generation_run.progressed': {
        const d = event.data;
        await updateRun(tx, d.run_id, { state: d.state, progress: d.progress, updated_at: d.at });
        return;
      }
      case 'generation_run.completed': {
        const d = event.data;
        await updateRun(tx, d.run_id, { state: 'completed', progress: 1, draft_id: d.draft_id, active: 0, updated_at: d.at });
        return;
      }
      case 'generation_run.failed': {
        const d = event.data;
        await updateRun(tx, d.run_id, { state: 'failed', reason: d.reason, active: 0, updated_at: d.at });
        return;
      }
      case 'draft.created':
      case 'draft.revised':
        await putDraft(tx, event);
        return;
      case 'draft.sources_stale': {
        const d = event.data;
        const current = await tx.get<DraftDoc>(DRAFTS, d.draft_id);
        if (current) await tx.put(DRAFTS, { ...current, stale_sources: d.stale_sources });
        return;
      }
      case 'draft.deleted': {
        const id = event.data.draft_id;
        await tx.delete(DRAFTS, id);
        for (const row of await tx.find<DraftSourceDoc>(DRAFT_SOURCES, { where: { draft_id: id } })) await tx.delete(DRAFT_SOURCES, row.id);
        return;
      }
      default:
        return;
    }
  },
};

export const generationProjections: Projection[] = [generationProjection, rulesProjection];
