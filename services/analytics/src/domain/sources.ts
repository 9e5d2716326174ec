import { errors } from '@kb/platform';
import { normalizeHost, normalizeUrl, type NormalizedUrl } from './urls.js';

export type TierName = 'primary' | 'tracked' | 'secondary';
export type MatchType = 'domain' | 'host' | 'path_prefix' | 'exact_url';
export const TIERS: TierName[] = ['primary', 'tracked', 'secondary'];
export const TIER_LABELS: Record<TierName, string> = { primary: 'Owned', tracked: 'Tracked', secondary: 'External' };

export interface SourceRule {
  source_id: string;
  match_type: MatchType;
  /** Normalised: a host for domain/host, host+path for path_prefix, a URL key for exact_url. */
  pattern: string;
  tier: TierName;
  /** Creation order, the last tie-break. */
  seq: number;
}

/** Validates and normalises a rule pattern for its match type; 400 when it cannot match anything. */
export function normalizePattern(matchType: MatchType, pattern: string): string {
  const bad = () => errors.validation(`pattern "${pattern}" is not a valid ${matchType}`, { details: { field: 'pattern' } });
  if (matchType === 'domain' || matchType === 'host') {
    const host = normalizeHost(pattern);
    if (!host) throw bad();
    return host;
  }
  const url = normalizeUrl(pattern);
  if (!url) throw bad();
  return matchType === 'path_prefix' ? `${url.host}${url.path}` : url.key;
}

/**
 * Specificity of a matching rule, higher wins (glossary "rule precedence"):
 * exact_url > path_prefix (longer prefix first) > host > domain (longer
 * domain first). Equal specificity: the higher tier (primary > tracked >
 * secondary), then the older rule.
 */
function specificity(rule: SourceRule): number {
  switch (rule.match_type) {
    case 'exact_url':
      return 4e6;
    case 'path_prefix':
      return 3e6 + rule.pattern.length;
    case 'host':
      return 2e6;
    case 'domain':
      return 1e6 + rule.pattern.length;
  }
}

function matches(rule: SourceRule, url: NormalizedUrl): boolean {
  switch (rule.match_type) {
    case 'exact_url':
      return url.key === rule.pattern;
    case 'host':
      return url.host === rule.pattern;
    case 'domain':
      return url.host === rule.pattern || url.host.endsWith(`.${rule.pattern}`);
    case 'path_prefix': {
      const hostPath = `${url.host}${url.path}`;
      // Prefixes end at a path segment: /blog matches /blog and /blog/x, not /blogs.
      return hostPath === rule.pattern || hostPath.startsWith(`${rule.pattern}/`);
    }
  }
}

const tierRank: Record<TierName, number> = { primary: 3, tracked: 2, secondary: 1 };

/** The one rule that decides a URL's tier, or undefined (then the tier is secondary). */
export function winningRule(rules: SourceRule[], url: NormalizedUrl): SourceRule | undefined {
  let best: SourceRule | undefined;
  for (const rule of rules) {
    if (!matches(rule, url)) continue;
    if (!best) {
      best = rule;
      continue;
    }
    const d = specificity(rule) - specificity(best) || tierRank[rule.tier] - tierRank[best.tier] || best.seq - rule.seq;
    if (d > 0) best = rule;
  }
  return best;
}

/** Rule 2: every cited URL is in exactly one tier. */
export function tierOf(rules: SourceRule[], url: NormalizedUrl): TierName {
  return winningRule(rules, url)?.tier ?? 'secondary';
}
