import { errors, type Clock, type IdGenerator } from '@kb/platform';
import type { Store } from '@kb/store';
import type { CommandBus, CommandSession } from '@kb/eventsourcing';
import type { CallContext } from '@kb/rpc';
import { competitorDecider, competitorStream, type CompetitorFields } from '../domain/aggregates.js';
import { normalizeHost } from '../domain/urls.js';
import { orgBrand } from '../projections/fold-context.js';
import { competitorNameKey } from '../projections/configuration.js';
import { BRAND_TALLIES, COMPETITORS, COMPETITOR_NAMES, type BrandTallyDoc, type CompetitorDoc } from '../projections/collections.js';
import { metadataOf, type Page } from './context.js';

export interface CompetitorInput {
  name: string;
  aliases?: string[];
  website?: string;
}

export const MAX_COMPETITOR_BATCH = 200;
const key = (s: string) => s.trim().toLowerCase().replace(/\s+/g, ' ');

function clean(input: CompetitorInput): CompetitorFields {
  const name = (input.name ?? '').trim();
  if (name.length < 1 || name.length > 200) throw errors.validation('name must be 1 to 200 characters', { details: { field: 'name' } });
  const aliases = [
    ...new Map(
      (input.aliases ?? [])
        .map((a) => a.trim())
        .filter((a) => a && key(a) !== key(name))
        .map((a) => [key(a), a]),
    ).values(),
  ];
  if (aliases.length > 50 || aliases.some((a) => a.length > 200))
    throw errors.validation('at most 50 aliases of at most 200 characters', { details: { field: 'aliases' } });
  if (input.website !== undefined && !normalizeHost(input.website) && input.website !== '')
    throw errors.validation('website must be a host name such as example.com', { details: { field: 'website' } });
  return { name, aliases, ...(input.website ? { website: normalizeHost(input.website)! } : {}) };
}

/** Tracked competitors (spec 2.8): CRUD, batch import with per-item results, suggestions. */
export function createCompetitorsService(deps: { store: Store; commands: CommandBus; ids: IdGenerator; clock: Clock }) {
  const { store, commands, ids, clock } = deps;
  const now = () => clock.now().toISOString();

  async function read(orgId: string, id: string, reader: Pick<Store, 'get'> = store): Promise<CompetitorDoc> {
    const doc = await reader.get<CompetitorDoc>(COMPETITORS, id);
    if (!doc || doc.org_id !== orgId) throw errors.notFound('Competitor');
    return doc;
  }

  async function requireFreeName(s: CommandSession, orgId: string, name: string, except?: string) {
    const taken = await s.tx.get<{ id: string; competitor_id: string }>(COMPETITOR_NAMES, competitorNameKey(orgId, name));
    if (taken && taken.competitor_id !== except)
      throw errors.conflict(`A competitor named "${name}" is already tracked`, { code: 'competitor_name_taken' });
  }

  async function createIn(s: CommandSession, ctx: CallContext, input: CompetitorInput) {
    const fields = clean(input);
    await requireFreeName(s, ctx.org_id, fields.name);
    const competitor_id = ids.uuid();
    await s.execute(competitorDecider, competitorStream(competitor_id), {
      type: 'create',
      competitor_id,
      org_id: ctx.org_id,
      ...fields,
      at: now(),
    });
    return competitor_id;
  }

  return {
    async list(ctx: CallContext, page: Page) {
      const where = { org_id: ctx.org_id };
      const [items, total_count] = await Promise.all([
        store.find<CompetitorDoc>(COMPETITORS, { where, sort: [{ field: 'seq', order: 'asc' }], ...page }),
        store.count(COMPETITORS, where),
      ]);
      return { items, total_count };
    },
    get: (ctx: CallContext, id: string) => read(ctx.org_id, id),
    async create(ctx: CallContext, input: CompetitorInput) {
      const id = await commands.transaction(metadataOf(ctx), (s) => createIn(s, ctx, input));
      return read(ctx.org_id, id);
    },
    async update(ctx: CallContext, id: string, input: CompetitorInput) {
      await commands.transaction(metadataOf(ctx), async (s) => {
        await read(ctx.org_id, id, s.tx);
        const fields = clean(input);
        await requireFreeName(s, ctx.org_id, fields.name, id);
        await s.execute(competitorDecider, competitorStream(id), { type: 'update', org_id: ctx.org_id, ...fields, at: now() });
      });
      return read(ctx.org_id, id);
    },
    async remove(ctx: CallContext, id: string) {
      await commands.transaction(metadataOf(ctx), async (s) => {
        await read(ctx.org_id, id, s.tx);
        await s.execute(competitorDecider, competitorStream(id), { type: 'delete', org_id: ctx.org_id, at: now() });
      });
    },
    /** Each valid item is created; invalid or duplicate ones are reported and change nothing. */
    async batchImport(ctx: CallContext, inputs: CompetitorInput[]) {
      if (inputs.length === 0 || inputs.length > MAX_COMPETITOR_BATCH)
        throw errors.validation(`competitors must hold 1 to ${MAX_COMPETITOR_BATCH} entries`, { details: { field: 'competitors' } });
      const results: { index: number; status: 'created' | 'rejected'; competitor_id?: string; errors: string[] }[] = [];
      await commands.transaction(metadataOf(ctx), async (s) => {
        const batchNames = new Set<string>();
        for (const [index, input] of inputs.entries()) {
          try {
            const fields = clean(input);
            await requireFreeName(s, ctx.org_id, fields.name);
            if (batchNames.has(key(fields.name))) throw errors.conflict(`"${fields.name}" repeats an earlier item`);
            batchNames.add(key(fields.name));
          } catch (err) {
            results.push({ index, status: 'rejected', errors: [(err as Error).message] });
            continue;
          }
          results.push({ index, status: 'created', competitor_id: await createIn(s, ctx, input), errors: [] });
        }
      });
      const created = results.filter((r) => r.status === 'created').length;
      if (created === 0)
        throw errors.validation('no competitor in the batch can be created', { details: { results: results.slice(0, 10) } });
      const docs = await store.find<CompetitorDoc>(COMPETITORS, {
        where: { id: { $in: results.flatMap((r) => (r.competitor_id ? [r.competitor_id] : [])) } },
      });
      const byId = new Map(docs.map((d) => [d.id, d]));
      return {
        created,
        rejected: results.length - created,
        results: results.map((r) => ({ ...r, ...(r.competitor_id && { competitor: byId.get(r.competitor_id) }) })),
      };
    },
    /**
     * Brands the organization's answers name that are neither the organization
     * nor tracked, ranked by mention instances (then answers naming them).
     */
    async suggest(ctx: CallContext, limit: number) {
      const [tallies, competitors, brand] = await Promise.all([
        store.find<BrandTallyDoc>(BRAND_TALLIES, { where: { org_id: ctx.org_id } }),
        store.find<CompetitorDoc>(COMPETITORS, { where: { org_id: ctx.org_id } }),
        orgBrand(store, ctx.org_id),
      ]);
      const known = new Set(
        [...competitors.flatMap((c) => [c.name, ...c.aliases]), ...(brand ? [brand.name, ...brand.aliases] : [])].map(key),
      );
      const suggestions = tallies
        .filter((t) => !known.has(t.key))
        .sort((a, b) => b.mentions - a.mentions || b.answer_count - a.answer_count || (a.key < b.key ? -1 : 1))
        .slice(0, limit)
        .map((t) => ({ name: t.name, mention_count: t.mentions, answer_count: t.answer_count }));
      return { suggestions };
    },
  };
}

export type CompetitorsService = ReturnType<typeof createCompetitorsService>;
