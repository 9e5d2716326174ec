import { errors, type Clock } from '@kb/platform';
import type { Store } from '@kb/store';
import type { CommandBus } from '@kb/eventsourcing';
import type { CallContext } from '@kb/rpc';
import { orgSettingsDecider, orgSettingsStream } from '../domain/aggregates.js';
import { normalizeHost } from '../domain/urls.js';
import { isName } from '../domain/answer-input.js';
import { orgBrand } from '../projections/fold-context.js';
import {
  BRAND_SETTINGS,
  ORGANIZATIONS,
  PROMPT_RUNS,
  RUN_CONFIGURATIONS,
  type BrandSettingsDoc,
  type OrganizationDoc,
  type PromptRunDoc,
  type RunConfigurationDoc,
} from '../projections/collections.js';
import { metadataOf, type Page } from './context.js';

export interface BrandSettingsInput {
  brand_name: string;
  aliases?: string[];
  websites?: string[];
}

export interface RunConfigurationInput {
  enabled: boolean;
  models: string[];
  locations?: string[];
  cadence: string;
  prompt_ids?: string[];
  tag_ids?: string[];
}

const CADENCES = ['hourly', 'daily', 'weekly'] as const;
const distinct = (xs: string[]) => [...new Set(xs.map((x) => x.trim()).filter(Boolean))];

/** The organization's brand (for mentions and owned websites) and its run configuration. */
export function createSettingsService(deps: { store: Store; commands: CommandBus; clock: Clock }) {
  const { store, commands, clock } = deps;
  const now = () => clock.now().toISOString();

  async function brand(ctx: CallContext) {
    const doc = await store.get<BrandSettingsDoc>(BRAND_SETTINGS, ctx.org_id);
    if (doc)
      return {
        brand_name: doc.brand_name,
        aliases: doc.aliases,
        websites: doc.websites,
        source: 'settings' as const,
        updated_at: doc.updated_at,
      };
    const fallback = await orgBrand(store, ctx.org_id);
    return { brand_name: fallback?.name ?? null, aliases: [], websites: [], source: 'organization' as const, updated_at: null };
  }

  async function runConfiguration(ctx: CallContext) {
    const [doc, org] = await Promise.all([
      store.get<RunConfigurationDoc>(RUN_CONFIGURATIONS, ctx.org_id),
      store.get<OrganizationDoc>(ORGANIZATIONS, ctx.org_id),
    ]);
    // The gateway's switch, shown so a caller sees why no run starts; unknown yet counts as on (the gateway default).
    const runs_enabled = org?.runs_enabled !== false;
    if (doc) {
      const { id: _id, org_id: _org, ...rest } = doc;
      return { ...rest, runs_enabled };
    }
    return {
      enabled: false,
      models: [],
      locations: ['global'],
      cadence: 'daily' as const,
      prompt_ids: [],
      tag_ids: [],
      updated_at: null,
      runs_enabled,
    };
  }

  return {
    brand,
    async setBrand(ctx: CallContext, input: BrandSettingsInput) {
      const brand_name = (input.brand_name ?? '').trim();
      if (!brand_name || brand_name.length > 200)
        throw errors.validation('brand_name must be 1 to 200 characters', { details: { field: 'brand_name' } });
      const aliases = distinct(input.aliases ?? []);
      if (aliases.length > 50 || aliases.some((a) => a.length > 200))
        throw errors.validation('at most 50 aliases of at most 200 characters', { details: { field: 'aliases' } });
      const websites = distinct(input.websites ?? []);
      if (websites.length > 50) throw errors.validation('at most 50 websites', { details: { field: 'websites' } });
      const hosts = websites.map((w) => {
        const h = normalizeHost(w);
        if (!h) throw errors.validation(`website "${w}" must be a host name such as example.com`, { details: { field: 'websites' } });
        return h;
      });
      await commands.transaction(metadataOf(ctx), (s) =>
        s.execute(orgSettingsDecider, orgSettingsStream(ctx.org_id), {
          type: 'set_brand',
          org_id: ctx.org_id,
          brand_name,
          aliases,
          websites: distinct(hosts),
          at: now(),
        }),
      );
      return brand(ctx);
    },
    runConfiguration,
    async setRunConfiguration(ctx: CallContext, input: RunConfigurationInput) {
      if (!CADENCES.includes(input.cadence as never))
        throw errors.validation(`cadence must be one of ${CADENCES.join(', ')}`, { details: { field: 'cadence' } });
      const models = distinct(input.models ?? []);
      const locations = distinct(input.locations?.length ? input.locations : ['global']);
      if (models.length > 20 || !models.every(isName))
        throw errors.validation('at most 20 models of 1 to 100 characters, none *', { details: { field: 'models' } });
      if (locations.length > 20 || !locations.every(isName))
        throw errors.validation('at most 20 locations of 1 to 100 characters, none *', { details: { field: 'locations' } });
      if (input.enabled && models.length === 0)
        throw errors.validation('an enabled run configuration needs at least one model', { details: { field: 'models' } });
      await commands.transaction(metadataOf(ctx), (s) =>
        s.execute(orgSettingsDecider, orgSettingsStream(ctx.org_id), {
          type: 'set_run_configuration',
          org_id: ctx.org_id,
          enabled: input.enabled,
          models,
          locations,
          cadence: input.cadence as (typeof CADENCES)[number],
          prompt_ids: distinct(input.prompt_ids ?? []),
          tag_ids: distinct(input.tag_ids ?? []),
          at: now(),
        }),
      );
      return runConfiguration(ctx);
    },
    async listRuns(ctx: CallContext, page: Page) {
      const where = { org_id: ctx.org_id };
      const [items, total_count] = await Promise.all([
        store.find<PromptRunDoc>(PROMPT_RUNS, { where, sort: [{ field: 'slot', order: 'desc' }], ...page }),
        store.count(PROMPT_RUNS, where),
      ]);
      return { items: items.map(({ id: _id, ...r }) => r), total_count };
    },
  };
}

export type SettingsService = ReturnType<typeof createSettingsService>;
