import { errors } from '@kb/platform';

/**
 * The closed key sets of the brand kit's guidelines and a content type's config
 * (spec 2.8): an unknown key is a 400 naming it. Pure: used by the use cases
 * whatever transport the call came through (the gateway's schemas say the same).
 */

export interface PreferredTerm {
  /** The term to write. */
  term: string;
  /** Words to replace by it. */
  instead_of: string[];
}

export interface FormattingRules {
  /** Sentences longer than this are not used. */
  max_sentence_words?: number;
  heading_case?: 'title' | 'sentence';
  /** Render each section's sentences as a bulleted list instead of a paragraph. */
  bullet_lists?: boolean;
}

export interface Guidelines {
  voice?: string;
  tone?: string;
  persona?: string;
  audience?: string;
  reading_level?: string;
  do_rules?: string[];
  dont_rules?: string[];
  preferred_terms?: PreferredTerm[];
  banned_terms?: string[];
  formatting?: FormattingRules;
  example_passages?: string[];
}

export type ContentKind = 'article' | 'qa' | 'summary' | 'other';

export interface SectionSpec {
  title: string;
  instructions?: string;
}

export interface ContentTypeConfig {
  kind: ContentKind;
  format: 'markdown' | 'html';
  sections: SectionSpec[];
  target_length: { min_words: number; max_words: number };
  citation_style: 'numeric' | 'none';
  /** What happens to a sentence still unsupported after its one repair. */
  unsupported_sentences: 'remove' | 'block';
  auto_publish: boolean;
  publish_destination_ids: string[];
}

export const GUIDELINE_KEYS = [
  'voice',
  'tone',
  'persona',
  'audience',
  'reading_level',
  'do_rules',
  'dont_rules',
  'preferred_terms',
  'banned_terms',
  'formatting',
  'example_passages',
] as const;
const FORMATTING_KEYS = ['max_sentence_words', 'heading_case', 'bullet_lists'] as const;
export const CONFIG_KEYS = [
  'kind',
  'format',
  'sections',
  'target_length',
  'citation_style',
  'unsupported_sentences',
  'auto_publish',
  'publish_destination_ids',
] as const;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const bad = (field: string, message: string) => errors.validation(`${field} ${message}`, { details: { field } });

function object(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw bad(field, 'must be an object');
  return value as Record<string, unknown>;
}

function closed(value: Record<string, unknown>, keys: readonly string[], field: string): void {
  for (const key of Object.keys(value))
    if (!keys.includes(key))
      throw errors.validation(`${field}.${key} is not an accepted field`, { code: 'unknown_key', details: { field: `${field}.${key}` } });
}

function text(value: unknown, field: string, max = 2000): string {
  if (typeof value !== 'string' || value.length > max) throw bad(field, `must be a string of at most ${max} characters`);
  return value;
}

function texts(value: unknown, field: string, maxItems = 50, maxLength = 500): string[] {
  if (!Array.isArray(value) || value.length > maxItems) throw bad(field, `must be a list of at most ${maxItems} strings`);
  return value.map((v, i) => {
    const s = text(v, `${field}[${i}]`, maxLength).trim();
    if (!s) throw bad(`${field}[${i}]`, 'must not be empty');
    return s;
  });
}

function integer(value: unknown, field: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw bad(field, `must be an integer from ${min} to ${max}`);
  return value;
}

function oneOf<T extends string>(value: unknown, field: string, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !allowed.includes(value as T)) throw bad(field, `must be one of ${allowed.join(', ')}`);
  return value as T;
}

/** Validates and normalises brand kit guidelines; every key is optional, none other is accepted. */
export function parseGuidelines(input: unknown): Guidelines {
  const g = object(input, 'guidelines');
  closed(g, GUIDELINE_KEYS, 'guidelines');
  const out: Guidelines = {};
  for (const key of ['voice', 'tone', 'persona', 'audience', 'reading_level'] as const)
    if (g[key] !== undefined) out[key] = text(g[key], `guidelines.${key}`).trim();
  for (const key of ['do_rules', 'dont_rules', 'banned_terms'] as const)
    if (g[key] !== undefined) out[key] = texts(g[key], `guidelines.${key}`);
  if (g.example_passages !== undefined) out.example_passages = texts(g.example_passages, 'guidelines.example_passages', 20, 5000);
  if (g.preferred_terms !== undefined) {
    if (!Array.isArray(g.preferred_terms) || g.preferred_terms.length > 100)
      throw bad('guidelines.preferred_terms', 'must be a list of at most 100 entries');
    out.preferred_terms = g.preferred_terms.map((entry, i) => {
      const field = `guidelines.preferred_terms[${i}]`;
      const o = object(entry, field);
      closed(o, ['term', 'instead_of'], field);
      const term = text(o.term, `${field}.term`, 200).trim();
      if (!term) throw bad(`${field}.term`, 'must not be empty');
      return { term, instead_of: texts(o.instead_of ?? [], `${field}.instead_of`, 20, 200) };
    });
  }
  if (g.formatting !== undefined) {
    const f = object(g.formatting, 'guidelines.formatting');
    closed(f, FORMATTING_KEYS, 'guidelines.formatting');
    out.formatting = {
      ...(f.max_sentence_words !== undefined && {
        max_sentence_words: integer(f.max_sentence_words, 'guidelines.formatting.max_sentence_words', 5, 200),
      }),
      ...(f.heading_case !== undefined && {
        heading_case: oneOf(f.heading_case, 'guidelines.formatting.heading_case', ['title', 'sentence'] as const),
      }),
      ...(f.bullet_lists !== undefined && { bullet_lists: boolean(f.bullet_lists, 'guidelines.formatting.bullet_lists') }),
    };
  }
  return out;
}

function boolean(value: unknown, field: string): boolean {
  if (typeof value !== 'boolean') throw bad(field, 'must be true or false');
  return value;
}

export const DEFAULT_SECTIONS: SectionSpec[] = [{ title: 'Overview' }];

/** Validates a content type config (closed), filling defaults for what is not given. */
export function parseContentTypeConfig(input: unknown): ContentTypeConfig {
  const c = input === undefined ? {} : object(input, 'config');
  closed(c, CONFIG_KEYS, 'config');
  let sections = DEFAULT_SECTIONS;
  if (c.sections !== undefined) {
    if (!Array.isArray(c.sections) || c.sections.length < 1 || c.sections.length > 20)
      throw bad('config.sections', 'must hold 1 to 20 sections');
    sections = c.sections.map((entry, i) => {
      const field = `config.sections[${i}]`;
      const o = object(entry, field);
      closed(o, ['title', 'instructions'], field);
      const title = text(o.title, `${field}.title`, 200).trim();
      if (!title) throw bad(`${field}.title`, 'must not be empty');
      return { title, ...(o.instructions !== undefined && { instructions: text(o.instructions, `${field}.instructions`).trim() }) };
    });
  }
  let target_length = { min_words: 50, max_words: 600 };
  if (c.target_length !== undefined) {
    const t = object(c.target_length, 'config.target_length');
    closed(t, ['min_words', 'max_words'], 'config.target_length');
    target_length = {
      min_words: integer(t.min_words ?? 0, 'config.target_length.min_words', 0, 20000),
      max_words: integer(t.max_words ?? 600, 'config.target_length.max_words', 10, 20000),
    };
    if (target_length.min_words > target_length.max_words) throw bad('config.target_length', 'min_words must not exceed max_words');
  }
  const destinations =
    c.publish_destination_ids === undefined ? [] : texts(c.publish_destination_ids, 'config.publish_destination_ids', 20, 36);
  for (const [i, id] of destinations.entries()) if (!UUID_RE.test(id)) throw bad(`config.publish_destination_ids[${i}]`, 'must be a uuid');
  return {
    kind: c.kind === undefined ? 'article' : oneOf(c.kind, 'config.kind', ['article', 'qa', 'summary', 'other'] as const),
    format: c.format === undefined ? 'markdown' : oneOf(c.format, 'config.format', ['markdown', 'html'] as const),
    sections,
    target_length,
    citation_style:
      c.citation_style === undefined ? 'numeric' : oneOf(c.citation_style, 'config.citation_style', ['numeric', 'none'] as const),
    unsupported_sentences:
      c.unsupported_sentences === undefined
        ? 'remove'
        : oneOf(c.unsupported_sentences, 'config.unsupported_sentences', ['remove', 'block'] as const),
    auto_publish: c.auto_publish === undefined ? false : boolean(c.auto_publish, 'config.auto_publish'),
    publish_destination_ids: destinations,
  };
}

/** JSON `details` of a product line: any object, at most 32 KB. */
export function parseDetails(input: unknown): Record<string, unknown> {
  if (input === undefined) return {};
  const d = object(input, 'details');
  if (JSON.stringify(d).length > 32_768) throw bad('details', 'must be at most 32 KB of JSON');
  return d;
}

export function parseName(input: unknown, field = 'name'): string {
  const name = typeof input === 'string' ? input.trim() : '';
  if (name.length < 1 || name.length > 200) throw bad(field, 'must be 1 to 200 characters');
  return name;
}
