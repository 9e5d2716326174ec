import type { AnswerCollected } from '@kb/events';
import { findMentions, type TrackedBrand } from './brands.js';
import { tierOf, type SourceRule, type TierName } from './sources.js';
import { normalizeUrl } from './urls.js';

/** What the fold needs to know about the organization when the answer arrives. */
export interface FoldContext {
  rules: SourceRule[];
  /** The organization (key 'org') first, then tracked competitors. */
  brands: TrackedBrand[];
}

export interface CitationFact {
  /** Normalised URL (the page). */
  page: string;
  domain: string;
  tier: TierName;
}

/** One answer reduced to the facts the daily counts add up. */
export interface AnswerFacts {
  answer_id: string;
  prompt_id: string;
  model: string;
  location: string;
  run_at: string;
  /** UTC day of run_at, YYYY-MM-DD. */
  day: string;
  citations: CitationFact[];
  /** Mention instances per tracked brand key ('org' or competitor id), only those named. */
  tracked_mentions: Record<string, number>;
  /** Mention instances of brands neither the organization nor tracked. */
  other_mentions: { name: string; count: number }[];
  /** Glossary "won": the organization is named and named before every other brand. */
  won: boolean;
  /** Glossary "lost": a tracked competitor is named and the organization is not. */
  lost: boolean;
}

export const dayOf = (timestamp: string): string => new Date(timestamp).toISOString().slice(0, 10);

export function answerFacts(answer: AnswerCollected, context: FoldContext): AnswerFacts {
  const citations: CitationFact[] = [];
  for (const raw of answer.citations) {
    const url = normalizeUrl(raw);
    if (url) citations.push({ page: url.key, domain: url.host, tier: tierOf(context.rules, url) });
  }
  const mentions = findMentions(answer.text, context.brands, answer.brands);
  const tracked_mentions: Record<string, number> = {};
  for (const m of mentions.tracked) tracked_mentions[m.key] = m.count;
  const org = mentions.tracked.find((m) => m.key === 'org');
  const firstOther = Math.min(
    ...mentions.tracked.filter((m) => m.key !== 'org').map((m) => m.first),
    ...mentions.others.map((m) => m.first),
  );
  return {
    answer_id: answer.answer_id,
    prompt_id: answer.prompt_id,
    model: answer.model,
    location: answer.location,
    run_at: answer.run_at,
    day: dayOf(answer.run_at),
    citations,
    tracked_mentions,
    other_mentions: mentions.others.map(({ name, count }) => ({ name, count })),
    won: org !== undefined && org.first < firstOther,
    lost: org === undefined && mentions.tracked.some((m) => m.key !== 'org'),
  };
}
