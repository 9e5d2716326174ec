import { errors, type Clock, type IdGenerator } from '@kb/platform';
import type { Store } from '@kb/store';
import type { CommandBus } from '@kb/eventsourcing';
import type { CallContext } from '@kb/rpc';
import {
  brandKitDecider,
  brandKitStream,
  contentTypeDecider,
  contentTypeStream,
  productLineDecider,
  productLineStream,
} from '../domain/aggregates.js';
import { GUIDELINE_KEYS, parseContentTypeConfig, parseDetails, parseGuidelines, parseName } from '../domain/settings.js';
import {
  BRAND_KITS,
  CONTENT_TYPES,
  PRODUCT_LINES,
  type BrandKitDoc,
  type ContentTypeDoc,
  type ProductLineDoc,
} from '../projections/index.js';
import { checkPage, isUuid, metadataOf } from './context.js';

export interface SettingsDeps {
  store: Store;
  commands: CommandBus;
  ids: IdGenerator;
  clock: Clock;
}

const brandKitJson = (d: BrandKitDoc) => ({ name: d.name, guidelines: d.guidelines, created_at: d.created_at, updated_at: d.updated_at });
const contentTypeJson = ({ id: _id, org_id: _o, seq: _s, ...d }: ContentTypeDoc) => d;
const productLineJson = ({ id: _id, org_id: _o, seq: _s, ...d }: ProductLineDoc) => d;

function description(input: unknown): string {
  if (input === undefined || input === null) return '';
  if (typeof input !== 'string' || input.length > 5000)
    throw errors.validation('description must be a string of at most 5000 characters', { details: { field: 'description' } });
  return input.trim();
}

/** Brand kit (one per organization), content types and product lines (spec 2.8). */
export function createSettingsService(deps: SettingsDeps) {
  const { store, commands, ids, clock } = deps;
  const now = () => clock.now().toISOString();

  async function brandKit(orgId: string): Promise<BrandKitDoc> {
    const doc = await store.get<BrandKitDoc>(BRAND_KITS, orgId);
    if (!doc) throw errors.notFound('Brand kit');
    return doc;
  }

  async function contentType(orgId: string, id: unknown, reader: Pick<Store, 'get'> = store): Promise<ContentTypeDoc> {
    const doc = isUuid(id) ? await reader.get<ContentTypeDoc>(CONTENT_TYPES, id.toLowerCase()) : undefined;
    if (!doc || doc.org_id !== orgId) throw errors.notFound('Content type');
    return doc;
  }

  async function productLine(orgId: string, id: unknown, reader: Pick<Store, 'get'> = store): Promise<ProductLineDoc> {
    const doc = isUuid(id) ? await reader.get<ProductLineDoc>(PRODUCT_LINES, id.toLowerCase()) : undefined;
    if (!doc || doc.org_id !== orgId) throw errors.notFound('Product line');
    return doc;
  }

  async function setBrandKit(ctx: CallContext, name: string, guidelines: Record<string, unknown>) {
    await commands.transaction(metadataOf(ctx), (s) =>
      s.execute(brandKitDecider, brandKitStream(ctx.org_id), { type: 'set', org_id: ctx.org_id, name, guidelines, at: now() }),
    );
    return brandKitJson(await brandKit(ctx.org_id));
  }

  const page = async <T>(collection: string, ctx: CallContext, r: { limit?: number; offset?: number }) => {
    const where = { org_id: ctx.org_id };
    const p = checkPage(r);
    const [items, total_count] = await Promise.all([
      store.find<T & { id: string }>(collection, { where, sort: [{ field: 'seq', order: 'asc' }], ...p }),
      store.count(collection, where),
    ]);
    return { items, total_count };
  };

  return {
    brandKit,
    contentType,
    productLine,

    getBrandKit: async (ctx: CallContext) => brandKitJson(await brandKit(ctx.org_id)),
    /** Create or replace: the guidelines given are the whole set. */
    async putBrandKit(ctx: CallContext, input: { name?: unknown; guidelines?: unknown }) {
      const name = input.name === undefined ? 'Brand kit' : parseName(input.name);
      return setBrandKit(ctx, name, parseGuidelines(input.guidelines ?? {}) as Record<string, unknown>);
    },
    /** Merge: each guideline key given replaces that key; null removes it. */
    async patchBrandKit(ctx: CallContext, input: { name?: unknown; guidelines?: unknown }) {
      const current = await brandKit(ctx.org_id);
      const patch = input.guidelines ?? {};
      if (typeof patch !== 'object' || patch === null || Array.isArray(patch))
        throw errors.validation('guidelines must be an object', { details: { field: 'guidelines' } });
      // The patch is judged by the same closed parse (unknown keys are 400), null meaning "remove".
      const entries = Object.entries(patch as Record<string, unknown>);
      for (const [k] of entries)
        if (!(GUIDELINE_KEYS as readonly string[]).includes(k))
          throw errors.validation(`guidelines.${k} is not an accepted field`, {
            code: 'unknown_key',
            details: { field: `guidelines.${k}` },
          });
      parseGuidelines(Object.fromEntries(entries.filter(([, v]) => v !== null)));
      const merged: Record<string, unknown> = { ...current.guidelines };
      for (const [k, v] of entries) {
        if (v === null) delete merged[k];
        else merged[k] = v;
      }
      const guidelines = parseGuidelines(merged) as Record<string, unknown>;
      return setBrandKit(ctx, input.name === undefined ? current.name : parseName(input.name), guidelines);
    },

    async listContentTypes(ctx: CallContext, r: { limit?: number; offset?: number }) {
      const { items, total_count } = await page<ContentTypeDoc>(CONTENT_TYPES, ctx, r);
      return { items: items.map(contentTypeJson), total_count };
    },
    getContentType: async (ctx: CallContext, id: unknown) => contentTypeJson(await contentType(ctx.org_id, id)),
    async createContentType(ctx: CallContext, input: { name?: unknown; description?: unknown; config?: unknown }) {
      const fields = {
        name: parseName(input.name),
        description: description(input.description),
        config: parseContentTypeConfig(input.config) as unknown as Record<string, unknown>,
      };
      const id = ids.uuid();
      await commands.transaction(metadataOf(ctx), (s) =>
        s.execute(contentTypeDecider, contentTypeStream(id), { type: 'create', id, org_id: ctx.org_id, ...fields, at: now() }),
      );
      return contentTypeJson(await contentType(ctx.org_id, id));
    },
    async updateContentType(ctx: CallContext, id: unknown, input: { name?: unknown; description?: unknown; config?: unknown }) {
      const doc = await contentType(ctx.org_id, id);
      const fields = {
        name: parseName(input.name),
        description: description(input.description),
        config: parseContentTypeConfig(input.config) as unknown as Record<string, unknown>,
      };
      await commands.transaction(metadataOf(ctx), (s) =>
        s.execute(contentTypeDecider, contentTypeStream(doc.id), { type: 'update', id: doc.id, org_id: ctx.org_id, ...fields, at: now() }),
      );
      return contentTypeJson(await contentType(ctx.org_id, doc.id));
    },
    async deleteContentType(ctx: CallContext, id: unknown) {
      const doc = await contentType(ctx.org_id, id);
      await commands.transaction(metadataOf(ctx), (s) =>
        s.execute(contentTypeDecider, contentTypeStream(doc.id), { type: 'delete', id: doc.id, org_id: ctx.org_id, at: now() }),
      );
    },

    async listProductLines(ctx: CallContext, r: { limit?: number; offset?: number }) {
      const { items, total_count } = await page<ProductLineDoc>(PRODUCT_LINES, ctx, r);
      return { items: items.map(productLineJson), total_count };
    },
    getProductLine: async (ctx: CallContext, id: unknown) => productLineJson(await productLine(ctx.org_id, id)),
    async createProductLine(ctx: CallContext, input: { name?: unknown; details?: unknown }) {
      const fields = { name: parseName(input.name), details: parseDetails(input.details) };
      const id = ids.uuid();
      await commands.transaction(metadataOf(ctx), (s) =>
        s.execute(productLineDecider, productLineStream(id), { type: 'create', id, org_id: ctx.org_id, ...fields, at: now() }),
      );
      return productLineJson(await productLine(ctx.org_id, id));
    },
    async updateProductLine(ctx: CallContext, id: unknown, input: { name?: unknown; details?: unknown }) {
      const doc = await productLine(ctx.org_id, id);
      const fields = { name: parseName(input.name), details: parseDetails(input.details) };
      await commands.transaction(metadataOf(ctx), (s) =>
        s.execute(productLineDecider, productLineStream(doc.id), { type: 'update', id: doc.id, org_id: ctx.org_id, ...fields, at: now() }),
      );
      return productLineJson(await productLine(ctx.org_id, doc.id));
    },
    async deleteProductLine(ctx: CallContext, id: unknown) {
      const doc = await productLine(ctx.org_id, id);
      await commands.transaction(metadataOf(ctx), (s) =>
        s.execute(productLineDecider, productLineStream(doc.id), { type: 'delete', id: doc.id, org_id: ctx.org_id, at: now() }),
      );
    },
  };
}

export type SettingsService = ReturnType<typeof createSettingsService>;
