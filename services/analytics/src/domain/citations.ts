import type { CitationFact } from './facts.js';
import { boundedMemo } from './memo.js';
import { winningRule, type SourceRule } from './sources.js';
import { MEMO_MAX_URL, normalizeUrl, registrableDomain } from './urls.js';

/**
 * Distinct URLs remembered per rule set and generation (see boundedMemo), and
 * rule sets (organizations) remembered at once: at most 8 x 2 x 4,000 facts,
 * whose strings the URL memo mostly shares.
 */
const URLS_PER_RULE_SET = 4_000;
const RULE_SETS = 8;

/** A citation's facts (null when the URL is not an http(s) page): its page, host, registrable domain, and the rule deciding its tier. */
function classify(rules: SourceRule[], raw: string): CitationFact | null {
  const url = normalizeUrl(raw);
  if (!url) return null;
  const rule = winningRule(rules, url);
  return Object.freeze({
    page: url.key,
    domain: url.host,
    site: registrableDomain(url.host),
    tier: rule?.tier ?? 'secondary',
    source_id: rule?.source_id ?? null,
  });
}

/** What decides a URL's facts under a rule list: equal for two lists with the same rules. */
const ruleSetKey = (rules: SourceRule[]) => JSON.stringify(rules.map((r) => [r.source_id, r.match_type, r.pattern, r.tier, r.seq]));

/**
 * Memos of classify per rule set. Each batch loads its fold context afresh,
 * so a memo is found by the rules' content (computed once per list: a fold
 * context's list is read-only), and the answers of every batch cite the same
 * URLs. When more rule sets (organizations) than RULE_SETS are in use, all are
 * forgotten and remembered again.
 */
const byList = new WeakMap<SourceRule[], (raw: string) => CitationFact | null>();
const byKey = new Map<string, (raw: string) => CitationFact | null>();
function memoOf(rules: SourceRule[]): (raw: string) => CitationFact | null {
  let memo = byList.get(rules);
  if (memo) return memo;
  const key = ruleSetKey(rules);
  memo = byKey.get(key);
  if (!memo) {
    if (byKey.size >= RULE_SETS) byKey.clear();
    memo = boundedMemo((raw) => classify(rules, raw), URLS_PER_RULE_SET);
    byKey.set(key, memo);
  }
  byList.set(rules, memo);
  return memo;
}

/**
 * The facts of one URL as cited under the rules (null when it is not an
 * http(s) page). Shared between answers citing the same URL, so frozen.
 */
export function citationFact(rules: SourceRule[], raw: string): CitationFact | null {
  return raw.length <= MEMO_MAX_URL ? memoOf(rules)(raw) : classify(rules, raw);
}
