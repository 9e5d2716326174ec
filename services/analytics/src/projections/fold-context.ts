import type { DocumentReader } from '@kb/store';
import { normalizeHost } from '../domain/urls.js';
import { websiteRuleId } from './configuration.js';
import type { FoldContext } from '../domain/facts.js';
import type { BrandName } from '../domain/reports.js';
import {
  BRAND_SETTINGS,
  COMPETITORS,
  ORGANIZATIONS,
  TRACKED_SOURCES,
  type BrandSettingsDoc,
  type CompetitorDoc,
  type OrganizationDoc,
  type SourceRuleDoc,
} from './collections.js';

/** The organization's brand: its brand settings, else its organization name. */
export async function orgBrand(reader: DocumentReader, orgId: string): Promise<{ name: string; aliases: string[] } | undefined> {
  const settings = await reader.get<BrandSettingsDoc>(BRAND_SETTINGS, orgId);
  if (settings) return { name: settings.brand_name, aliases: settings.aliases };
  const org = await reader.get<OrganizationDoc>(ORGANIZATIONS, orgId);
  return org ? { name: org.name, aliases: [] } : undefined;
}

/**
 * The organization's websites from its profile (gateway events) as published,
 * read-only primary domain rules. They live in the profile, not in this
 * service's event log, so they are merged in wherever rules are read.
 */
export async function organizationWebsiteRules(reader: DocumentReader, orgId: string): Promise<SourceRuleDoc[]> {
  const org = await reader.get<OrganizationDoc>(ORGANIZATIONS, orgId);
  const hosts = [...new Set((org?.websites ?? []).map((w) => normalizeHost(w)).filter((h): h is string => h !== null))];
  return hosts.map((host) => {
    const id = websiteRuleId(orgId, host);
    return {
      id,
      source_id: id,
      org_id: orgId,
      match_type: 'domain',
      pattern: host,
      tier: 'primary',
      label: 'Organization website',
      source_origin: 'published',
      created_at: org?.websites_at ?? '',
      updated_at: org?.websites_at ?? '',
      seq: 0,
    };
  });
}

/** Every rule in force for the organization: its tracked sources and its profile's websites. */
export async function sourceRules(reader: DocumentReader, orgId: string): Promise<SourceRuleDoc[]> {
  const [own, websites] = await Promise.all([
    reader.find<SourceRuleDoc>(TRACKED_SOURCES, { where: { org_id: orgId }, sort: [{ field: 'seq', order: 'asc' }] }),
    organizationWebsiteRules(reader, orgId),
  ]);
  const ids = new Set(own.map((r) => r.id));
  return [...websites.filter((w) => !ids.has(w.id)), ...own];
}

/** What folding an answer needs: the rules and tracked brands in force now. */
export async function loadFoldContext(reader: DocumentReader, orgId: string): Promise<FoldContext & { names: BrandName[] }> {
  const [rules, competitors, brand] = await Promise.all([
    sourceRules(reader, orgId),
    reader.find<CompetitorDoc>(COMPETITORS, { where: { org_id: orgId }, sort: [{ field: 'seq', order: 'asc' }] }),
    orgBrand(reader, orgId),
  ]);
  const brands = [
    ...(brand ? [{ key: 'org', names: [brand.name, ...brand.aliases] }] : []),
    ...competitors.map((c) => ({ key: c.competitor_id, names: [c.name, ...c.aliases] })),
  ];
  const names: BrandName[] = [
    ...(brand ? [{ key: 'org', name: brand.name }] : []),
    ...competitors.map((c) => ({ key: c.competitor_id, name: c.name })),
  ];
  return {
    rules: rules.map((r) => ({ source_id: r.source_id, match_type: r.match_type, pattern: r.pattern, tier: r.tier, seq: r.seq })),
    brands,
    names,
  };
}
