import type { AnswerCollected } from '@kb/events';
import { findMentions, type TrackedBrand } from './brands.js';
import { citationFact } from './citations.js';
import type { SourceRule, TierName } from './sources.js';
import { registrableDomain } from './urls.js';

/** What an answer's producer hands in: the answer with its full text, citations as spelled and brands. */
export interface AnswerBody {
  answer_id: string;
  prompt_id: string;
  model: string;
  location: string;
  run_at: string;
  text: string;
  citations: string[];
  brands?: string[];
}

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
  /** Registrable domain of the host (public suffix list): docs.example.co.uk -> example.co.uk. */
  site: string;
  tier: TierName;
  /** The tracked-source rule that decided the tier; null when none matched. */
  source_id: string | null;
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

const DAY_MS = 86_400_000;
/** Day names by UTC day number: formatting a date was a large part of the facts, and a fold's answers fall on few days. */
const dayNames = new Map<number, string>();

export function dayOf(timestamp: string): string {
  const ms = Date.parse(timestamp);
  // Not a date: toISOString throws, as it always did.
  if (Number.isNaN(ms)) return new Date(timestamp).toISOString().slice(0, 10);
  const n = Math.floor(ms / DAY_MS);
  let day = dayNames.get(n);
  if (day === undefined) {
    if (dayNames.size >= 10_000) dayNames.clear();
    dayNames.set(n, (day = new Date(ms).toISOString().slice(0, 10)));
  }
  return day;
}

export function answerFacts(answer: AnswerBody, context: FoldContext): AnswerFacts {
  const citations: CitationFact[] = [];
  for (const raw of answer.citations) {
    const fact = citationFact(context.rules, raw);
    if (fact) citations.push(fact);
  }
  const mentions = findMentions(answer.text, context.brands, answer.brands);
  const tracked_mentions: Record<string, number> = {};
  let org: (typeof mentions.tracked)[number] | undefined;
  let firstOther = Number.POSITIVE_INFINITY;
  for (const m of mentions.tracked) {
    tracked_mentions[m.key] = m.count;
    if (m.key === 'org') org ??= m;
    else if (m.first < firstOther) firstOther = m.first;
  }
  const other_mentions: AnswerFacts['other_mentions'] = [];
  for (const m of mentions.others) {
    other_mentions.push({ name: m.name, count: m.count });
    if (m.first < firstOther) firstOther = m.first;
  }
  return {
    answer_id: answer.answer_id,
    prompt_id: answer.prompt_id,
    model: answer.model,
    location: answer.location,
    run_at: answer.run_at,
    day: dayOf(answer.run_at),
    citations,
    tracked_mentions,
    other_mentions,
    won: org !== undefined && org.first < firstOther,
    lost: org === undefined && mentions.tracked.length > 0,
  };
}

type EventFacts = Pick<AnswerCollected, 'cited' | 'tracked_mentions' | 'other_mentions' | 'won' | 'lost'>;

/**
 * The facts as the answer.collected event carries them: distinct pages with
 * instance counts (not the URLs as spelled, nor their order) and mention counts
 * with the tracked brands' names, never the text.
 */
export function eventFacts(f: AnswerFacts, names: ReadonlyMap<string, string>): EventFacts {
  const cited = new Map<string, EventFacts['cited'][number]>();
  for (const c of f.citations) {
    const row = cited.get(c.page);
    if (row) row.count += 1;
    // Two literals rather than a spread of a conditional object (several times slower); source_id before count either way.
    else if (c.source_id !== null) cited.set(c.page, { page: c.page, domain: c.domain, tier: c.tier, source_id: c.source_id, count: 1 });
    else cited.set(c.page, { page: c.page, domain: c.domain, tier: c.tier, count: 1 });
  }
  const tracked_mentions: EventFacts['tracked_mentions'] = [];
  for (const key of Object.keys(f.tracked_mentions))
    tracked_mentions.push({ key, name: names.get(key) ?? key, count: f.tracked_mentions[key]! });
  return {
    cited: [...cited.values()],
    tracked_mentions,
    other_mentions: f.other_mentions.map((o) => ({ ...o })),
    won: f.won,
    lost: f.lost,
  };
}

/** The facts of a schema-2 answer.collected event (what folding and replay add up). */
export function factsOfEvent(e: AnswerCollected): AnswerFacts {
  const citations: CitationFact[] = [];
  for (const c of e.cited) {
    const fact: CitationFact = {
      page: c.page,
      domain: c.domain,
      site: registrableDomain(c.domain),
      tier: c.tier,
      source_id: c.source_id ?? null,
    };
    for (let i = 0; i < c.count; i++) citations.push(fact);
  }
  return {
    answer_id: e.answer_id,
    prompt_id: e.prompt_id,
    model: e.model,
    location: e.location,
    run_at: e.run_at,
    day: dayOf(e.run_at),
    citations,
    tracked_mentions: Object.fromEntries(e.tracked_mentions.map((m) => [m.key, m.count])),
    other_mentions: e.other_mentions.map((o) => ({ ...o })),
    won: e.won,
    lost: e.lost,
  };
}
