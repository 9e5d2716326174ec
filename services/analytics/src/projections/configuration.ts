import { DuplicateKeyError, type StoreTransaction } from '@kb/store';
import type { Projection, Stored } from '@kb/eventsourcing';
import { errors } from '@kb/platform';

import { normalizeHost } from '../domain/urls.js';
import {
  BRAND_SETTINGS,
  COMPETITORS,
  COMPETITOR_NAMES,
  RUN_CONFIGURATIONS,
  TRACKED_SOURCES,
  derivedUuid,
  type BrandSettingsDoc,
  type CompetitorDoc,
  type SourceRuleDoc,
} from './collections.js';

export const competitorNameKey = (orgId: string, name: string) => `${orgId}:${name.trim().toLowerCase().replace(/\s+/g, ' ')}`;
export const websiteRuleId = (orgId: string, host: string) => derivedUuid(`website:${orgId}:${host}`);

async function reserveCompetitorName(tx: StoreTransaction, orgId: string, name: string, competitorId: string) {
  try {
    await tx.insert(COMPETITOR_NAMES, { id: competitorNameKey(orgId, name), competitor_id: competitorId });
  } catch (err) {
    if (err instanceof DuplicateKeyError)
      throw errors.conflict(`A competitor named "${name}" is already tracked`, { code: 'competitor_name_taken' });
    throw err;
  }
}

/** Tracked-source rules, tracked competitors, brand settings and run configurations. */
export const configurationProjection: Projection = {
  name: 'analytics-configuration',
  collections: [TRACKED_SOURCES, COMPETITORS, COMPETITOR_NAMES, BRAND_SETTINGS, RUN_CONFIGURATIONS],
  indexes: [
    { collection: TRACKED_SOURCES, fields: ['org_id', 'seq'] },
    { collection: COMPETITORS, fields: ['org_id', 'seq'] },
  ],
  async apply(tx, event: Stored) {
    switch (event.type) {
      case 'tracked_source.created': {
        const d = event.data;
        const doc: SourceRuleDoc = {
          id: d.source_id,
          source_id: d.source_id,
          org_id: d.org_id,
          match_type: d.match_type,
          pattern: d.pattern,
          tier: d.tier,
          ...(d.label !== undefined && { label: d.label }),
          source_origin: d.source_origin,
          created_at: d.at,
          updated_at: d.at,
          seq: event.position,
        };
        await tx.put(TRACKED_SOURCES, doc);
        return;
      }
      case 'tracked_source.updated': {
        const d = event.data;
        const cur = await tx.get<SourceRuleDoc>(TRACKED_SOURCES, d.source_id);
        if (!cur) return;
        const { label: _label, ...rest } = cur;
        await tx.put(TRACKED_SOURCES, {
          ...rest,
          match_type: d.match_type,
          pattern: d.pattern,
          tier: d.tier,
          ...(d.label !== undefined && { label: d.label }),
          updated_at: d.at,
        });
        return;
      }
      case 'tracked_source.deleted':
        await tx.delete(TRACKED_SOURCES, event.data.source_id);
        return;
      case 'competitor.created': {
        const d = event.data;
        await reserveCompetitorName(tx, d.org_id, d.name, d.competitor_id);
        const doc: CompetitorDoc = {
          id: d.competitor_id,
          competitor_id: d.competitor_id,
          org_id: d.org_id,
          name: d.name,
          aliases: d.aliases,
          ...(d.website !== undefined && { website: d.website }),
          created_at: d.at,
          updated_at: d.at,
          seq: event.position,
        };
        await tx.put(COMPETITORS, doc);
        return;
      }
      case 'competitor.updated': {
        const d = event.data;
        const cur = await tx.get<CompetitorDoc>(COMPETITORS, d.competitor_id);
        if (!cur) return;
        if (competitorNameKey(cur.org_id, cur.name) !== competitorNameKey(d.org_id, d.name)) {
          await tx.delete(COMPETITOR_NAMES, competitorNameKey(cur.org_id, cur.name));
          await reserveCompetitorName(tx, d.org_id, d.name, d.competitor_id);
        }
        const { website: _w, ...rest } = cur;
        await tx.put(COMPETITORS, {
          ...rest,
          name: d.name,
          aliases: d.aliases,
          ...(d.website !== undefined && { website: d.website }),
          updated_at: d.at,
        });
        return;
      }
      case 'competitor.deleted': {
        const id = event.data.competitor_id;
        const cur = await tx.get<CompetitorDoc>(COMPETITORS, id);
        if (!cur) return;
        await tx.delete(COMPETITOR_NAMES, competitorNameKey(cur.org_id, cur.name));
        await tx.delete(COMPETITORS, id);
        return;
      }
      case 'brand_settings.updated': {
        const d = event.data;
        const prev = await tx.get<BrandSettingsDoc>(BRAND_SETTINGS, d.org_id);
        // The organization's websites are owned rules: read-only (published) primary domain rules.
        const hosts = (list: string[]) => new Set(list.map((w) => normalizeHost(w)).filter((h): h is string => h !== null));
        const before = hosts(prev?.websites ?? []);
        const after = hosts(d.websites);
        for (const h of before) if (!after.has(h)) await tx.delete(TRACKED_SOURCES, websiteRuleId(d.org_id, h));
        for (const h of after) {
          if (before.has(h)) continue;
          const id = websiteRuleId(d.org_id, h);
          const rule: SourceRuleDoc = {
            id,
            source_id: id,
            org_id: d.org_id,
            match_type: 'domain',
            pattern: h,
            tier: 'primary',
            label: 'Organization website',
            source_origin: 'published',
            created_at: d.at,
            updated_at: d.at,
            seq: event.position,
          };
          await tx.put(TRACKED_SOURCES, rule);
        }
        const doc: BrandSettingsDoc = {
          id: d.org_id,
          org_id: d.org_id,
          brand_name: d.brand_name,
          aliases: d.aliases,
          websites: d.websites,
          updated_at: d.at,
        };
        await tx.put(BRAND_SETTINGS, doc);
        return;
      }
      case 'run_configuration.updated': {
        const { at, ...d } = event.data;
        await tx.put(RUN_CONFIGURATIONS, { id: d.org_id, ...d, updated_at: at });
        return;
      }
      default:
        return;
    }
  },
};
