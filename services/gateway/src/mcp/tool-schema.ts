import type { JsonSchema } from './route-schema.js';

/**
 * Makes the input schemas an assistant reads small and self-explaining: a
 * union of constants becomes an `enum`, a field a route forbids (`{not: {}}`)
 * is left out, the int32 ceiling fastify adds is dropped, and every parameter
 * gets a description (the route's own, else the shared one for its name).
 */

/** What a parameter means, by name, where the route does not say. */
export const PARAMETER_DESCRIPTIONS: Record<string, string> = {
  limit: 'how many items per page',
  offset: 'items to skip (next_offset of the previous page)',
  from: 'start of the window: YYYY-MM-DD or an ISO 8601 date-time',
  to: 'end of the window: YYYY-MM-DD or an ISO 8601 date-time',
  order: 'sort direction',
  sort: 'the column to sort by',
  prompt_id: 'a tracked prompt (from list_tracked_prompts)',
  model: 'only answers of this answer-engine model',
  location: 'only answers for this location',
  tag_id: 'only this tag (a tag id)',
  tags: 'tags by id or by name',
  kb_node_id: 'a knowledge-base node (folder or content) id, from kb_tree or kb_folder',
  content_id: 'a knowledge-base content item id',
  version_id: 'a version of the content item (the latest when omitted)',
  category_id: 'a category id',
  topic_id: 'a topic id',
  folder_ids: 'knowledge-base folder ids to limit to',
  parent_id: 'the parent folder id (the root when omitted)',
  name: 'the name',
  title: 'the title',
  text: 'the text',
  summary: 'a short summary',
  query: 'the question or keywords',
  count: 'how many to return',
  run_id: 'a generation run id (from start_generation or list_generation_runs)',
  draft_id: 'a draft id (from list_drafts or a completed run)',
  piece_id: 'a piece id (from list_pieces)',
  content_type_id: 'a content type id (from list_content_types)',
  product_line_id: 'a product line id',
  instructions: 'what the piece should say or stress, in plain words',
  scope: 'which knowledge-base content the run may draw on',
  state: 'only runs in this state',
  status: 'only items in this state',
  files: 'the files to upload',
  destination_ids: 'destinations to publish to; omitted or empty: the default shared set',
  category_ids: 'category ids',
  detail: 'summary: ids, titles, states, counts; full: every field',
  start_index: 'where to start reading (next_start_index of the previous call)',
  max_length: 'the most characters of text to return',
};

const INT32_MAX = 2147483647;

/** A union of string/number constants as one enum, its own keywords (description, default) kept. */
function enumOf(schema: JsonSchema): JsonSchema | undefined {
  const members = schema.anyOf as JsonSchema[] | undefined;
  if (!Array.isArray(members) || members.length === 0 || !members.every((m) => m && 'const' in m)) return undefined;
  const { anyOf: _drop, ...rest } = schema;
  const values = members.map((m) => m.const);
  const types = new Set(members.map((m) => m.type));
  const type = types.size === 1 ? [...types][0] : undefined;
  return { ...rest, ...(typeof type === 'string' && { type }), enum: values };
}

const isForbidden = (s: unknown) => !!s && typeof s === 'object' && 'not' in s && Object.keys((s as { not: object }).not).length === 0;

/** The schema tidied recursively (see above); `name` is the property it describes, for its shared description. */
export function tidySchema(schema: unknown, name?: string): unknown {
  if (Array.isArray(schema)) return schema.map((s) => tidySchema(s));
  if (!schema || typeof schema !== 'object') return schema;
  let node = schema as JsonSchema;
  node = enumOf(node) ?? node;
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'maximum' && v === INT32_MAX) continue;
    if (k === 'properties' && v && typeof v === 'object') {
      const props: Record<string, unknown> = {};
      for (const [p, s] of Object.entries(v as Record<string, unknown>)) if (!isForbidden(s)) props[p] = tidySchema(s, p);
      out.properties = props;
    } else if (k === 'required' && Array.isArray(v)) {
      const props = (node.properties ?? {}) as Record<string, unknown>;
      const kept = v.filter((r: string) => !isForbidden(props[r]));
      if (kept.length > 0) out.required = kept;
    } else out[k] = tidySchema(v);
  }
  if (name && typeof out.description !== 'string' && PARAMETER_DESCRIPTIONS[name]) out.description = PARAMETER_DESCRIPTIONS[name];
  return out;
}

/** The parameters (dotted paths) that have no description: none may be left once tidied. */
export function undescribed(schema: JsonSchema, prefix = ''): string[] {
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const out: string[] = [];
  for (const [k, s] of Object.entries(props)) {
    if (typeof s.description !== 'string' || !s.description) out.push(`${prefix}${k}`);
    if (s.type === 'object') out.push(...undescribed(s, `${prefix}${k}.`));
    const items = s.items as JsonSchema | undefined;
    if (items?.type === 'object') out.push(...undescribed(items, `${prefix}${k}[].`));
  }
  return out;
}

const SIMPLE_TYPES = new Set(['string', 'integer', 'number', 'boolean', 'array', 'object']);

/**
 * A tool's output schema: the top-level fields of its result with their types
 * and descriptions, none required, others allowed. A tool error's structured
 * content ({ status, error }) is valid against it too, so no error branch is
 * repeated per tool; the tool descriptions say what each field holds.
 */
export function outputSchemaOf(success: JsonSchema, extra: Record<string, JsonSchema> = {}): JsonSchema & { type: 'object' } {
  const parts = [success, ...((success.allOf as JsonSchema[] | undefined) ?? [])];
  const props = Object.assign({}, ...parts.map((p) => (p.properties ?? {}) as Record<string, JsonSchema>)) as Record<string, JsonSchema>;
  const out: Record<string, JsonSchema> = {};
  for (const [k, s] of Object.entries(props)) {
    const type = typeof s.type === 'string' && SIMPLE_TYPES.has(s.type) ? s.type : undefined;
    out[k] = type ? { type } : {};
  }
  return { type: 'object', properties: { ...out, ...extra } };
}
