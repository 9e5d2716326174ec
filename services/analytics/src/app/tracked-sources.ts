import { errors, type Clock, type IdGenerator } from '@kb/platform';
import type { Store } from '@kb/store';
import type { CommandBus, CommandSession } from '@kb/eventsourcing';
import type { CallContext } from '@kb/rpc';
import { trackedSourceDecider, trackedSourceStream } from '../domain/aggregates.js';
import { normalizePattern, TIERS, type MatchType, type TierName } from '../domain/sources.js';
import { TRACKED_SOURCES, type SourceRuleDoc } from '../projections/collections.js';
import { organizationWebsiteRules, sourceRules } from '../projections/fold-context.js';
import { metadataOf, type Page } from './context.js';

export interface SourceRuleInput {
  match_type: string;
  pattern: string;
  tier: string;
  label?: string;
}

const MATCH_TYPES: MatchType[] = ['domain', 'host', 'path_prefix', 'exact_url'];
export const MAX_SOURCE_BATCH = 500;

function checkInput(input: SourceRuleInput) {
  if (!MATCH_TYPES.includes(input.match_type as MatchType))
    throw errors.validation(`match_type must be one of ${MATCH_TYPES.join(', ')}`, { details: { field: 'match_type' } });
  if (!TIERS.includes(input.tier as TierName))
    throw errors.validation(`tier must be one of ${TIERS.join(', ')}`, { details: { field: 'tier' } });
  if (input.label !== undefined && input.label.length > 255)
    throw errors.validation('label is at most 255 characters', { details: { field: 'label' } });
  const match_type = input.match_type as MatchType;
  return {
    match_type,
    pattern: normalizePattern(match_type, input.pattern ?? ''),
    tier: input.tier as TierName,
    ...(input.label !== undefined && { label: input.label }),
  };
}

/** Tracked-source rules (spec 2.8): CRUD and batch import; published rules are read-only (409). */
export function createTrackedSourcesService(deps: { store: Store; commands: CommandBus; ids: IdGenerator; clock: Clock }) {
  const { store, commands, ids, clock } = deps;
  const now = () => clock.now().toISOString();

  /** A rule of the organization: its own, or one of its profile's websites (published). */
  async function read(orgId: string, id: string, reader: Pick<Store, 'get' | 'find' | 'count'> = store): Promise<SourceRuleDoc> {
    const doc = await reader.get<SourceRuleDoc>(TRACKED_SOURCES, id);
    if (doc && doc.org_id === orgId) return doc;
    const website = (await organizationWebsiteRules(reader, orgId)).find((r) => r.id === id);
    if (!website) throw errors.notFound('Tracked source');
    return website;
  }

  async function writable(session: CommandSession, orgId: string, id: string) {
    const doc = await read(orgId, id, session.tx);
    if (doc.source_origin === 'published')
      throw errors.conflict('This source is published and read-only; change the organization websites instead', {
        code: 'source_read_only',
      });
    return doc;
  }

  async function createIn(session: CommandSession, ctx: CallContext, input: SourceRuleInput, origin: 'manual' | 'import'): Promise<string> {
    const rule = checkInput(input);
    const source_id = ids.uuid();
    await session.execute(trackedSourceDecider, trackedSourceStream(source_id), {
      type: 'create',
      source_id,
      org_id: ctx.org_id,
      source_origin: origin,
      ...rule,
      at: now(),
    });
    return source_id;
  }

  return {
    /** The organization's website rules first, then its own rules oldest first. */
    async list(ctx: CallContext, page: Page) {
      const all = await sourceRules(store, ctx.org_id);
      return { items: all.slice(page.offset, page.offset + page.limit), total_count: all.length };
    },
    get: (ctx: CallContext, id: string) => read(ctx.org_id, id),
    async create(ctx: CallContext, input: SourceRuleInput) {
      const id = await commands.transaction(metadataOf(ctx), (s) => createIn(s, ctx, input, 'manual'));
      return read(ctx.org_id, id);
    },
    async update(ctx: CallContext, id: string, input: SourceRuleInput) {
      await commands.transaction(metadataOf(ctx), async (s) => {
        await writable(s, ctx.org_id, id);
        await s.execute(trackedSourceDecider, trackedSourceStream(id), {
          type: 'update',
          org_id: ctx.org_id,
          ...checkInput(input),
          at: now(),
        });
      });
      return read(ctx.org_id, id);
    },
    async remove(ctx: CallContext, id: string) {
      await commands.transaction(metadataOf(ctx), async (s) => {
        await writable(s, ctx.org_id, id);
        await s.execute(trackedSourceDecider, trackedSourceStream(id), { type: 'delete', org_id: ctx.org_id, at: now() });
      });
    },
    /** Per-item results; valid items are created together, invalid ones change nothing. */
    async batchImport(ctx: CallContext, inputs: SourceRuleInput[]) {
      if (inputs.length === 0 || inputs.length > MAX_SOURCE_BATCH)
        throw errors.validation(`sources must hold 1 to ${MAX_SOURCE_BATCH} rules`, { details: { field: 'sources' } });
      const results: { index: number; status: 'created' | 'rejected'; source_id?: string; errors: string[] }[] = [];
      await commands.transaction(metadataOf(ctx), async (s) => {
        for (const [index, input] of inputs.entries()) {
          try {
            checkInput(input);
          } catch (err) {
            results.push({ index, status: 'rejected', errors: [(err as Error).message] });
            continue;
          }
          results.push({ index, status: 'created', source_id: await createIn(s, ctx, input, 'import'), errors: [] });
        }
      });
      const created = results.filter((r) => r.status === 'created').length;
      if (created === 0) throw errors.validation('no rule in the batch is valid', { details: { results: results.slice(0, 10) } });
      const docs = await store.find<SourceRuleDoc>(TRACKED_SOURCES, {
        where: { id: { $in: results.flatMap((r) => (r.source_id ? [r.source_id] : [])) } },
      });
      const byId = new Map(docs.map((d) => [d.id, d]));
      return {
        created,
        rejected: results.length - created,
        results: results.map((r) => ({ ...r, ...(r.source_id && { source: byId.get(r.source_id) }) })),
      };
    },
  };
}

export type TrackedSourcesService = ReturnType<typeof createTrackedSourcesService>;
