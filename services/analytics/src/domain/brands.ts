import { boundedMemo } from './memo.js';

/**
 * Brand mentions (glossary "mention"). A brand is named by its name or any
 * alias, case-insensitively, as a whole word; every occurrence is one mention
 * instance (overlapping names of one brand count once). Brands other than the
 * organization and its tracked competitors come from the producer's `brands`
 * list, or, when the producer gives none, from the extraction method below.
 */
export interface TrackedBrand {
  /** 'org' for the organization, else the competitor id. */
  key: string;
  names: string[];
}

export interface BrandMention {
  key: string;
  count: number;
  /** Offset of the first occurrence in the text; the producer's list order after the text. */
  first: number;
}

export interface MentionResult {
  tracked: BrandMention[];
  /** Brands neither the organization nor tracked: name (as first spelled) and count. */
  others: { name: string; count: number; first: number }[];
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/**
 * Distinct names per memo generation: brand names recur in every answer, and
 * names extracted from texts (one-offs among them) stay a bounded number of
 * compiled regexes.
 */
const NAMES_REMEMBERED = 2_000;
const nameKey = boundedMemo((s: string) => s.trim().toLowerCase().replace(/\s+/g, ' '), NAMES_REMEMBERED);

/**
 * A trimmed name as a whole word, case-insensitively, compiled once per name
 * (building a regex per name and answer was the largest part of the facts).
 * Global, so shared: every use starts by resetting lastIndex, and none is
 * interrupted by another.
 */
const patternOf = boundedMemo(
  (name: string) => new RegExp(`(?<![\\p{L}\\p{N}])${escape(name).replace(/\s+/g, '\\s+')}(?![\\p{L}\\p{N}])`, 'giu'),
  NAMES_REMEMBERED,
);

/**
 * Occurrences of one name. A regex's matches never overlap and come in order,
 * so each is an instance and the first is the earliest (what the span merge
 * below gives for one name).
 */
function countName(text: string, raw: string): { count: number; first: number } {
  const name = raw.trim();
  if (!name) return { count: 0, first: Number.POSITIVE_INFINITY };
  const re = patternOf(name);
  re.lastIndex = 0;
  let m = re.exec(text);
  if (m === null) return { count: 0, first: Number.POSITIVE_INFINITY };
  const first = m.index;
  let count = 0;
  for (; m !== null; m = re.exec(text)) count++;
  return { count, first };
}

/** Occurrences of any of the names as whole words; overlapping matches count once. */
export function countOccurrences(text: string, names: string[]): { count: number; first: number } {
  if (names.length === 1) return countName(text, names[0]!);
  const spans: [number, number][] = [];
  for (const raw of names) {
    const name = raw.trim();
    if (!name) continue;
    const re = patternOf(name);
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) spans.push([m.index, m.index + m[0].length]);
  }
  spans.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  let count = 0;
  let end = -1;
  for (const [s, e] of spans) {
    if (s < end) continue;
    count++;
    end = e;
  }
  return { count, first: spans.length ? spans[0]![0] : Number.POSITIVE_INFINITY };
}

const BOLD = /\*\*([^*\n]{1,60})\*\*/g;
const LIST_LEAD =
  /^\s*(?:\d+[.)]|[-*\u2022])\s+(?:\*\*)?([\p{Lu}\p{N}][\p{L}\p{N}&.'+-]*(?:\s+[\p{Lu}\p{N}][\p{L}\p{N}&.'+-]*){0,3})(?:\*\*)?\s*(?:[:\u2013\u2014-]|$)/gmu;

/**
 * Extraction method when the producer names no brands: bold phrases
 * (**Name**) and the leading capitalised words of numbered or bulleted list
 * items (`1. Name: ...`, `- Name - ...`), one to four words starting with a
 * capital letter or digit. Distinct case-insensitively, in order of appearance.
 */
export function extractBrands(text: string): string[] {
  const found: { name: string; at: number }[] = [];
  for (const m of text.matchAll(BOLD)) {
    const name = m[1]!.trim().replace(/[:.]$/, '');
    if (/^[\p{Lu}\p{N}]/u.test(name) && name.split(/\s+/).length <= 5) found.push({ name, at: m.index });
  }
  for (const m of text.matchAll(LIST_LEAD)) found.push({ name: m[1]!.trim(), at: m.index });
  found.sort((a, b) => a.at - b.at);
  const seen = new Set<string>();
  const out: string[] = [];
  for (const f of found) {
    const k = nameKey(f.name);
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(f.name);
  }
  return out;
}

/**
 * Tracked brands by each name's key (the first brand to use a name keeps it),
 * built once per list: a fold context's list is read-only and serves a batch.
 */
const trackedIndex = new WeakMap<TrackedBrand[], Map<string, string>>();
function trackedByNameOf(tracked: TrackedBrand[]): Map<string, string> {
  let byName = trackedIndex.get(tracked);
  if (byName) return byName;
  byName = new Map<string, string>();
  for (const b of tracked) for (const n of b.names) if (!byName.has(nameKey(n))) byName.set(nameKey(n), b.key);
  trackedIndex.set(tracked, byName);
  return byName;
}

/** Every brand the answer names, split into tracked ones (the org and competitors) and the others. */
export function findMentions(text: string, tracked: TrackedBrand[], producerBrands: string[] | undefined): MentionResult {
  const listed = producerBrands ?? extractBrands(text);
  const trackedByName = trackedByNameOf(tracked);
  const listedTracked = new Map<string, number>();
  for (let i = 0; i < listed.length; i++) {
    const key = trackedByName.get(nameKey(listed[i]!));
    if (key !== undefined && !listedTracked.has(key)) listedTracked.set(key, i);
  }

  const afterText = text.length + 1;
  const result: MentionResult = { tracked: [], others: [] };
  for (const b of tracked) {
    const occ = countOccurrences(text, b.names);
    const listedAt = listedTracked.get(b.key);
    if (occ.count > 0) result.tracked.push({ key: b.key, count: occ.count, first: occ.first });
    // Named by the producer but spelled differently in the text: one instance.
    else if (listedAt !== undefined) result.tracked.push({ key: b.key, count: 1, first: afterText + listedAt });
  }
  const seen = new Set<string>();
  for (let i = 0; i < listed.length; i++) {
    const name = listed[i]!;
    const k = nameKey(name);
    if (seen.has(k) || trackedByName.has(k)) continue;
    seen.add(k);
    const occ = countName(text, name);
    result.others.push({ name: name.trim(), count: Math.max(1, occ.count), first: occ.count ? occ.first : afterText + i });
  }
  return result;
}
