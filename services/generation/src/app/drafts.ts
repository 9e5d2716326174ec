import { errors, type Clock } from '@kb/platform';
import type { Store } from '@kb/store';
import type { CommandBus } from '@kb/eventsourcing';
import type { CallContext } from '@kb/rpc';
import { draftDecider, draftStream } from '../domain/aggregates.js';
import { DRAFTS, type DraftDoc } from '../projections/index.js';
import { drawsWithin, requireWithin } from '../domain/scope.js';
import { checkPage, isUuid, metadataOf, visiblePage } from './context.js';

const draftJson = ({ id: _id, seq: _s, org_id: _o, ...d }: DraftDoc) => d;

/** Generated content: the drafts runs (and the builder) produce, newest first. */
export function createDraftsService(deps: { store: Store; commands: CommandBus; clock: Clock }) {
  const { store, commands, clock } = deps;

  async function read(orgId: string, id: unknown): Promise<DraftDoc> {
    const doc = isUuid(id) ? await store.get<DraftDoc>(DRAFTS, id.toLowerCase()) : undefined;
    if (!doc || doc.org_id !== orgId) throw errors.notFound('Draft');
    return doc;
  }

  return {
    async get(ctx: CallContext, id: unknown) {
      const doc = await read(ctx.org_id, id);
      requireWithin(doc.source_folder_ids, ctx.folder_scope, 'a draft');
      return draftJson(doc);
    },
    async list(ctx: CallContext, r: { limit?: number; offset?: number; stale?: boolean }) {
      const scope = ctx.folder_scope;
      const visible = scope === null ? null : (d: DraftDoc) => drawsWithin(d.source_folder_ids, scope);
      const { items, total_count } = await visiblePage<DraftDoc>(store, DRAFTS, { org_id: ctx.org_id }, checkPage(r), visible);
      return { items: items.map(draftJson), total_count };
    },
    async remove(ctx: CallContext, id: unknown) {
      const doc = await read(ctx.org_id, id);
      requireWithin(doc.source_folder_ids, ctx.folder_scope, 'a draft');
      await commands.transaction(metadataOf(ctx), (s) =>
        s.execute(draftDecider, draftStream(doc.draft_id), { type: 'delete', at: clock.now().toISOString() }),
      );
    },
  };
}

export type DraftsService = ReturnType<typeof createDraftsService>;
