import { contentStems } from '@kb/search';
import { splitSentences, type EvidencePassage } from '@kb/ai';
import type { Guidelines, SectionSpec } from './settings.js';

/**
 * The built-in drafter (no model, deterministic): builds each section from the
 * retrieved passages' own sentences, the ones that cover most of the section's
 * query (rarer words weighing more), and applies the brand kit's rules: a
 * sentence with a banned term or longer than the formatting allows is never
 * used, preferred terms replace the words they stand for, and the draft stays
 * inside the content type's word budget. A sentence on a section's own subject
 * goes to that section. Every sentence cites the passage it came from and quotes
 * the source sentence verbatim.
 */

export interface DraftedSentence {
  text: string;
  /** The source sentence (verbatim): what a repair falls back to. */
  quote: string;
  /** Index into the section's passages; -1: the sentence cites nothing. */
  passage: number;
}

export interface DraftedSection {
  section_id: string;
  title: string;
  passages: EvidencePassage[];
  sentences: DraftedSentence[];
}

export interface SectionInput {
  section_id: string;
  spec: SectionSpec;
  /** What the section is about: the prompt, the section's title and instructions, the run's instructions. */
  query: string;
  passages: EvidencePassage[];
}

const words = (s: string) => s.split(/\s+/).filter(Boolean).length;
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const termPattern = (term: string) => new RegExp(`(?<![\\p{L}\\p{N}])${escape(term)}(?![\\p{L}\\p{N}])`, 'iu');

export function hasBannedTerm(text: string, guidelines: Guidelines): string | undefined {
  return (guidelines.banned_terms ?? []).find((t) => termPattern(t).test(text));
}

/** Replaces each preferred term's alternatives by the term, keeping a leading capital. */
export function applyPreferredTerms(text: string, guidelines: Guidelines): string {
  let out = text;
  for (const { term, instead_of } of guidelines.preferred_terms ?? []) {
    for (const alt of instead_of) {
      const re = new RegExp(`(?<![\\p{L}\\p{N}])${escape(alt)}(?![\\p{L}\\p{N}])`, 'giu');
      out = out.replace(re, (match) => (/^\p{Lu}/u.test(match) ? term.charAt(0).toUpperCase() + term.slice(1) : term));
    }
  }
  return out;
}

export function headingCase(title: string, guidelines: Guidelines): string {
  const mode = guidelines.formatting?.heading_case;
  if (mode === 'sentence') return title.charAt(0).toUpperCase() + title.slice(1).toLowerCase();
  if (mode === 'title')
    return title.replace(/\p{L}[\p{L}'’-]*/gu, (w, offset: number) =>
      offset > 0 && /^(a|an|the|and|or|of|in|on|for|to|with|by)$/i.test(w) ? w.toLowerCase() : w.charAt(0).toUpperCase() + w.slice(1),
    );
  return title;
}

/** Whether a sentence may be used at all under the brand kit. */
export function allowed(text: string, guidelines: Guidelines): boolean {
  if (hasBannedTerm(text, guidelines)) return false;
  const max = guidelines.formatting?.max_sentence_words;
  return max === undefined || words(text) <= max;
}

const ENDS_SENTENCE = /[.!?]["'”’)]?$/;

/**
 * Whether a line runs on into the next: a sentence wrapped across lines, as PDF text comes line by
 * line, continues in lower case or after a comma, semicolon or dash; a heading, a title or a table
 * row ends where its line does.
 */
const runsOn = (line: string, next: string) => !ENDS_SENTENCE.test(line) && (/^\p{Ll}/u.test(next) || /[,;–—-]$/.test(line));

/**
 * A passage's sentences, line by line, so that a heading line never runs into the sentence after
 * it, with a sentence wrapped across lines joined up again (its first line has no end punctuation
 * and was otherwise dropped, leaving its tail as a sentence).
 */
export function sourceSentences(text: string): string[] {
  const lines: string[] = [];
  for (const raw of text.split(/\n+/)) {
    const line = raw.replace(/^\s*(#{1,6}\s+|[-*+]\s+|\d+[.)]\s+)/, '').trim();
    if (!line) continue;
    const last = lines.at(-1);
    if (last !== undefined && runsOn(last, line)) lines[lines.length - 1] = `${last} ${line}`;
    else lines.push(line);
  }
  return lines.filter((line) => ENDS_SENTENCE.test(line)).flatMap((line) => splitSentences(line));
}

interface Candidate {
  text: string;
  passage: number;
  position: number;
  score: number;
  /** How much of the section's own subject (title, instructions) the sentence covers, by weight. */
  onSubject: number;
}

/**
 * The section's usable source sentences, best first: those that cover most of its query (rarer
 * words weighing more). The section's own subject (its title and instructions) weighs double
 * against what every section shares (the prompt, the run's instructions), so a sentence on it
 * ranks higher here than in a section about something else.
 */
function rankedCandidates(section: SectionInput, guidelines: Guidelines): Candidate[] {
  const own = new Set(contentStems([section.spec.title, section.spec.instructions].filter(Boolean).join(' ')));
  const terms = [...new Set([...contentStems(section.query), ...own])];
  const candidates = section.passages.flatMap((p, passage) =>
    sourceSentences(p.text)
      .filter((s) => s.length >= 12 && s.length <= 600 && /[.!?]$/.test(s) && allowed(s, guidelines))
      .map((text, position) => ({ text, passage, position, stems: new Set(contentStems(text)) })),
  );
  const weight = new Map(
    terms.map((t) => {
      const df = candidates.filter((c) => c.stems.has(t)).length;
      return [t, Math.log(1 + (candidates.length + 1) / (df + 0.5)) * (own.has(t) ? 2 : 1)];
    }),
  );
  const total = terms.reduce((sum, t) => sum + weight.get(t)!, 0) || 1;
  return candidates
    .map(({ stems, ...c }) => {
      const covered = terms.filter((t) => stems.has(t));
      const coverage = covered.reduce((sum, t) => sum + weight.get(t)!, 0) / total;
      const onSubject = covered.filter((t) => own.has(t)).reduce((sum, t) => sum + weight.get(t)!, 0);
      // Retrieval order and position in the passage break ties: earlier is better.
      return { ...c, onSubject, score: coverage + 0.05 / (c.passage + 1) - 0.001 * c.position };
    })
    .filter((c) => c.score > 0.06)
    .sort((a, b) => b.score - a.score);
}

export function composeDeterministic(sections: SectionInput[], guidelines: Guidelines, budget: { max_words: number }): DraftedSection[] {
  const perSection = Math.max(15, Math.floor(budget.max_words / Math.max(1, sections.length)));
  const ranked = sections.map((section) => rankedCandidates(section, guidelines));
  // A sentence on a section's own subject belongs to that section (to the one it covers most of,
  // the earlier on a tie): sections are filled in order, and the first would otherwise take every
  // sentence the prompt matches, leaving a later section on that very subject with none. A
  // sentence on no section's own subject goes to the first section with room for it.
  const home = new Map<string, { section: number; onSubject: number }>();
  ranked.forEach((candidates, section) => {
    for (const c of candidates) {
      const key = c.text.toLowerCase();
      const best = home.get(key);
      if (c.onSubject > 0 && (!best || c.onSubject > best.onSubject)) home.set(key, { section, onSubject: c.onSubject });
    }
  });
  const used = new Set<string>();
  return sections.map((section, i) => {
    const picked: Candidate[] = [];
    let count = 0;
    for (const c of ranked[i]!) {
      const key = c.text.toLowerCase();
      // A sentence that belongs to a later section is left to it; one an earlier section had no room for may go here.
      if (used.has(key) || (home.get(key)?.section ?? i) > i) continue;
      const n = words(c.text);
      if (picked.length > 0 && count + n > perSection) continue;
      picked.push(c);
      used.add(key);
      count += n;
      if (count >= perSection) break;
    }
    // Read in source order: passage by passage, sentence by sentence.
    picked.sort((a, b) => a.passage - b.passage || a.position - b.position);
    return {
      section_id: section.section_id,
      title: headingCase(section.spec.title, guidelines),
      passages: section.passages,
      sentences: picked.map((c) => ({ text: applyPreferredTerms(c.text, guidelines), quote: c.text, passage: c.passage })),
    };
  });
}
