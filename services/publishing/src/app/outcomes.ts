import { errors } from '@kb/platform';
import type { CallContext, RpcClient } from '@kb/rpc';
import { PIECE_STATES, type PieceStateDoc } from '../projections/collections.js';
import type { AppDeps } from './context.js';
import type { PiecesService } from './pieces.js';

export interface Figures {
  answer_count: number;
  mention_rate: number | null;
  citation_rate: number | null;
  share_of_voice: number | null;
  win_rate: number | null;
  loss_rate: number | null;
}

/** The analytics port of the closed loop: a prompt's figures over a window of whole UTC days. */
export interface PromptFigures {
  figures(ctx: CallContext, promptId: string, from: string, to: string): Promise<Figures>;
}

/** Over analytics' ReportService.Overview (prompt_id filter). */
export function createAnalyticsPromptFigures(reports: RpcClient): PromptFigures {
  return {
    async figures(ctx, promptId, from, to) {
      const res = await reports.call<{ json: string }>('Overview', { from, to, prompt_id: promptId }, ctx);
      const doc = JSON.parse(res.json) as {
        totals?: { answer_count?: number };
        metrics?: Record<string, { value: number | null } | undefined>;
      };
      const v = (k: string) => doc.metrics?.[k]?.value ?? null;
      return {
        answer_count: doc.totals?.answer_count ?? 0,
        mention_rate: v('mention_rate'),
        citation_rate: v('cited_answer_rate'),
        share_of_voice: v('share_of_voice'),
        win_rate: v('win_rate'),
        loss_rate: v('loss_rate'),
      };
    },
  };
}

const DAY = 86_400_000;
const MAX_WINDOW_DAYS = 30;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** won: the brand is named more often after than before (then cited more often); lost: less; else unchanged. */
export function movement(before: Figures, after: Figures): 'won' | 'lost' | 'unchanged' | 'no_data' {
  if (before.answer_count === 0 || after.answer_count === 0) return 'no_data';
  for (const k of ['mention_rate', 'citation_rate'] as const) {
    const b = before[k] ?? 0;
    const a = after[k] ?? 0;
    if (a > b) return 'won';
    if (a < b) return 'lost';
  }
  return 'unchanged';
}

/**
 * The closed loop: for each published piece, its target prompts' figures over
 * equal windows of whole days before and after the day it was first published
 * (the after window is as long as the days since, up to 30; the publish day
 * counts as after).
 */
export function createOutcomesService(deps: AppDeps & { figures: PromptFigures; pieces: PiecesService }) {
  const { store, clock, figures, pieces } = deps;

  async function outcome(ctx: CallContext, pieceId: string) {
    const draft = await pieces.readDraft(ctx, pieceId);
    const state = await store.get<PieceStateDoc>(PIECE_STATES, pieceId);
    if (!state?.published_at) throw errors.conflict('The piece has not been published yet', { code: 'not_published' });
    const published = Date.parse(`${state.published_at.slice(0, 10)}T00:00:00Z`);
    const today = Date.parse(`${clock.now().toISOString().slice(0, 10)}T00:00:00Z`);
    const days = Math.min(MAX_WINDOW_DAYS, Math.max(1, Math.round((today - published) / DAY) + 1));
    const before = { from: day(published - days * DAY), to: day(published - DAY) };
    const after = { from: day(published), to: day(published + (days - 1) * DAY) };
    const prompts = await Promise.all(
      draft.target_prompt_ids.map(async (prompt_id) => {
        const [b, a] = await Promise.all([
          figures.figures(ctx, prompt_id, before.from, before.to),
          figures.figures(ctx, prompt_id, after.from, after.to),
        ]);
        return { prompt_id, before: b, after: a, movement: movement(b, a) };
      }),
    );
    return {
      piece_id: pieceId,
      title: draft.title,
      published_at: state.published_at,
      window_days: days,
      before_window: before,
      after_window: after,
      prompts,
      moved: prompts.some((p) => p.movement === 'won' || p.movement === 'lost'),
    };
  }

  return {
    outcome,
    /** Published pieces whose target prompts moved (won or lost), most recently published first. */
    async moved(ctx: CallContext) {
      const states = await store.find<PieceStateDoc>(PIECE_STATES, {
        where: { org_id: ctx.org_id },
        sort: [{ field: 'updated_at', order: 'desc' }],
      });
      const out = [];
      for (const s of states) {
        if (!s.published_at) continue;
        const o = await outcome(ctx, s.id).catch((err: unknown) => {
          // Gone, or outside a folder-scoped caller's folders: left out.
          if ((err as { kind?: string }).kind === 'not_found' || (err as { kind?: string }).kind === 'forbidden') return null;
          throw err;
        });
        if (o?.moved) out.push(o);
      }
      return { items: out };
    },
  };
}
export type OutcomesService = ReturnType<typeof createOutcomesService>;
