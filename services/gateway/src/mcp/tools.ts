import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { RouteEntry } from '../http/app.js';
import { toolInputSchema, toolSuccessSchema, type JsonSchema } from './route-schema.js';
import type { Shaping } from './shape.js';
import { TEXT_WINDOW, RESULT_CAP } from './shape.js';
import { outputSchemaOf, PARAMETER_DESCRIPTIONS, tidySchema } from './tool-schema.js';

/** Tool groups an assistant can load on their own (`?toolsets=kb,search`). */
export const TOOLSETS = ['search', 'kb', 'tracked_prompts', 'analytics', 'generation', 'publishing'] as const;
export type Toolset = (typeof TOOLSETS)[number];

/**
 * What a call does to the organization: reads only; reads but spends a credit
 * and is recorded (metered); or changes something. readOnlyHint is true only
 * for reads; the read-only mode keeps reads and metered reads.
 */
export type Effect = 'read' | 'metered' | 'write';

/**
 * One row per MCP tool: the REST route it dispatches to. The input schema is
 * the route's own (params, query and body side by side), so validation and its
 * messages are REST's. Only the upload tool has its own schema: REST takes
 * multipart there, the tool takes the files as base64 and sends the same form.
 */
export interface ToolRow {
  name: string;
  title: string;
  description: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The route under /api/v1, with :params. */
  path: string;
  group: Toolset;
  effect: Effect;
  /** Hints beyond what the effect says (idempotence, open world). */
  annotations?: ToolAnnotations;
  /** A schema of its own instead of the route's (multipart routes). */
  input?: JsonSchema & { type: 'object' };
  /** Encodes the arguments as the route's body when it is not JSON. */
  multipart?: true;
  /** Argument values used when the caller leaves them out (shown as the input schema's defaults). */
  defaults?: Record<string, unknown>;
  /** Descriptions of arguments where the tool means more than the route says. */
  describe?: Record<string, string>;
  /** Tool argument names for the route's own (tool name -> REST name). */
  argNames?: Record<string, string>;
  /** How the REST answer is shaped for an assistant (compact items, paged text, outcome first). */
  shape?: Shaping;
  /**
   * Refused for folder scope (403 folder_scope): answer the folders the credential
   * may see instead (GET /org/kb/scope), as the children of a top of its own.
   */
  scopedTop?: true;
}

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
const len = (v: unknown) => (Array.isArray(v) ? v.length : 0);
const excerpt = (v: unknown, n = 200) => {
  const t = str(v) ?? '';
  return t.length > n ? `${t.slice(0, n)}…` : t;
};
type Obj = Record<string, unknown>;
const keep = (o: Obj, keys: readonly string[]) => Object.fromEntries(keys.filter((k) => k in o).map((k) => [k, o[k]]));

/** A piece or draft's sections as counts: the sentences and how many are unsupported. */
const sectionCounts = (sections: unknown) =>
  (Array.isArray(sections) ? (sections as Obj[]) : []).map((sec) => ({
    ...keep(sec, ['section_id', 'title']),
    sentences: len(sec.sentences),
    unsupported: (Array.isArray(sec.sentences) ? (sec.sentences as Obj[]) : []).filter((x) => x.verdict === 'unsupported').length,
  }));

const pieceSummary = (p: Obj) => ({
  ...keep(p, ['piece_id', 'title', 'status', 'revision', 'publishable', 'verification', 'content_kind']),
  unsupported_count: len(p.unsupported_sentences),
  stale_count: len(p.stale_sources),
  publication_count: len(p.publications),
  ...keep(p, ['published_at', 'updated_at']),
});
const draftSummary = (d: Obj) => ({
  ...keep(d, ['draft_id', 'run_id', 'title', 'revision', 'content_kind', 'verification', 'totals']),
  stale_count: len(d.stale_sources),
  ...keep(d, ['created_at', 'at']),
});
const runSummary = (r: Obj) => keep(r, ['run_id', 'state', 'progress', 'content_type_id', 'prompt_id', 'draft_id', 'reason', 'created_at']);

/** A whole piece or draft without its sentence-level detail (read with detail: 'full'). */
const withoutSentences = (o: Obj) => {
  const { sections, history, ...rest } = o;
  return {
    ...rest,
    sections: sectionCounts(sections),
    ...(Array.isArray(history) && { history_count: history.length, last_event: history[history.length - 1] }),
  };
};

const SUMMARY_NOTE = "Items are summaries; detail: 'full' gives every field.";

const kbNode = (n: Obj) => keep(n, ['kb_node_id', 'type', 'name', 'content_id', 'processing_status']);

export const toolRows: ToolRow[] = [
  {
    name: 'search',
    title: 'Search the knowledge base',
    description:
      'Searches the organization knowledge base: a short answer with [n] citations, the retrieved chunks (context, best first) and the source ids. Costs one query credit; recorded in the search history.',
    method: 'POST',
    path: '/org/search',
    group: 'search',
    effect: 'metered',
    shape: { list: 'context', first: ['query', 'answered', 'answer', 'citations'] },
  },
  {
    name: 'ask',
    title: 'Ask a question',
    description:
      'Asks a question of the knowledge base and returns only the cited answer: answer, citations (n, content_id, title) and whether anything relevant was found. Costs one query credit.',
    method: 'POST',
    path: '/org/search',
    group: 'search',
    effect: 'metered',
    shape: { pick: ['query', 'answer', 'answered', 'citations', 'source_ids'] },
  },
  {
    name: 'list_search_history',
    title: 'Recorded searches',
    description: `The recorded organization searches, newest first. ${SUMMARY_NOTE}`,
    method: 'GET',
    path: '/org/search/queries',
    group: 'search',
    effect: 'read',
    shape: { list: 'items', summarizeItem: (q) => keep(q, ['query_id', 'query', 'answered', 'total_results', 'at']) },
  },
  {
    name: 'kb_tree',
    title: 'Knowledge-base root folder',
    description:
      'The top of the knowledge base the caller may see, with a page of its children (folders first, then content). A folder-scoped credential sees its folders as the children of a virtual root. ' +
      SUMMARY_NOTE,
    method: 'GET',
    path: '/org/kb/tree',
    group: 'kb',
    effect: 'read',
    scopedTop: true,
    shape: { list: 'children', summarizeItem: kbNode, adds: { scope: 'string' } },
  },
  {
    name: 'kb_folder',
    title: 'Read a folder or content node',
    description: `A knowledge-base node (folder or content) with a page of its children. ${SUMMARY_NOTE}`,
    method: 'GET',
    path: '/org/kb/nodes/:kb_node_id',
    group: 'kb',
    effect: 'read',
    shape: { list: 'children', summarizeItem: kbNode },
  },
  {
    name: 'kb_node_path',
    title: 'Path of a node',
    description: 'The folders from the top (of the caller’s scope) down to a node.',
    method: 'GET',
    path: '/org/kb/nodes/:kb_node_id/path',
    group: 'kb',
    effect: 'read',
    shape: { list: 'items', summarizeItem: kbNode },
  },
  {
    name: 'kb_create_folder',
    title: 'Create a folder',
    description: 'Creates a knowledge-base folder under parent_id (the root when omitted).',
    method: 'POST',
    path: '/org/kb/folders',
    group: 'kb',
    effect: 'write',
  },
  {
    name: 'kb_read_content',
    title: 'Read a content item',
    description: 'A knowledge-base content item: title, type, processing status, tags, filing and its versions. Its text: kb_read_chunks.',
    method: 'GET',
    path: '/org/kb/content/:content_id',
    group: 'kb',
    effect: 'read',
    shape: { list: 'versions' },
  },
  {
    name: 'kb_read_chunks',
    title: 'Read the text of a content item',
    description: `The chunks (text) of a content item, in order, a page at a time (10 by default; next_offset says where the next page starts). At most ${RESULT_CAP.toLocaleString('en')} characters a call.`,
    method: 'GET',
    path: '/org/kb/content/:content_id/chunks',
    group: 'kb',
    effect: 'read',
    defaults: { limit: 10 },
    shape: { list: 'chunks' },
  },
  {
    name: 'ingest_text',
    title: 'Add raw text',
    description:
      'Adds raw text (or Markdown) to the knowledge base as a new content item; processing is asynchronous (follow it with kb_read_content). Text already in the knowledge base (the same bytes) is refused as a duplicate naming the existing content_id, at no cost. Costs one ingest unit, and one more per started 100,000 characters stored beyond the first.',
    method: 'POST',
    path: '/org/kb/raw',
    group: 'kb',
    effect: 'write',
  },
  {
    name: 'upload_file',
    title: 'Upload files',
    description:
      'Uploads up to 10 files given as base64 (PDF, TXT, CSV, DOC, DOCX, XLS, XLSX, PPT, PPTX, HTML, JSON, XML), exactly as POST /org/kb/upload. Costs one ingest unit per accepted file (a skipped duplicate costs nothing), and one more per started 100,000 characters a file stores beyond the first.',
    method: 'POST',
    path: '/org/kb/upload',
    group: 'kb',
    effect: 'write',
    multipart: true,
    input: {
      type: 'object',
      properties: {
        files: {
          type: 'array',
          minItems: 1,
          maxItems: 10,
          description: 'the files to upload',
          items: {
            type: 'object',
            properties: {
              filename: { type: 'string', minLength: 1, maxLength: 255, description: 'the file name, with its extension' },
              content_base64: { type: 'string', description: 'the file bytes, base64' },
              content_type: { type: 'string', description: 'MIME type (application/octet-stream when omitted)' },
            },
            required: ['filename', 'content_base64'],
            additionalProperties: false,
          },
        },
        parent_id: { type: 'string', format: 'uuid', description: 'the folder to file them in' },
        tags: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 100 }, maxItems: 50 },
        category_id: { type: 'string', format: 'uuid' },
        topic_id: { type: 'string', format: 'uuid' },
      },
      required: ['files'],
      additionalProperties: false,
    },
  },
  // Tracked prompts: the questions asked of answer engines (not MCP prompts).
  {
    name: 'list_tracked_prompts',
    title: 'List tracked prompts',
    description: `The organization’s tracked prompts (the questions asked of answer engines), a page at a time. ${SUMMARY_NOTE}`,
    method: 'GET',
    path: '/org/prompts',
    group: 'tracked_prompts',
    effect: 'read',
    shape: { list: 'items', summarizeItem: (p) => ({ ...keep(p, ['prompt_id', 'name']), text: excerpt(p.text) }) },
  },
  {
    name: 'get_tracked_prompt',
    title: 'Read a tracked prompt',
    description: 'One tracked prompt: its name, text, variables and tags.',
    method: 'GET',
    path: '/org/prompts/:prompt_id',
    group: 'tracked_prompts',
    effect: 'read',
  },
  {
    name: 'create_tracked_prompt',
    title: 'Create a tracked prompt',
    description: 'Adds a prompt to track across answer engines.',
    method: 'POST',
    path: '/org/prompts',
    group: 'tracked_prompts',
    effect: 'write',
  },
  {
    name: 'update_tracked_prompt',
    title: 'Update a tracked prompt',
    description: 'Changes some fields of a tracked prompt.',
    method: 'PATCH',
    path: '/org/prompts/:prompt_id',
    group: 'tracked_prompts',
    effect: 'write',
    annotations: { destructiveHint: true, idempotentHint: true },
  },
  {
    name: 'suggest_tracked_prompts',
    title: 'Suggest prompts to track',
    description: 'Suggests prompts worth tracking, from the knowledge base and the organization’s analytics. Records nothing.',
    method: 'POST',
    path: '/org/prompts/suggestions',
    group: 'tracked_prompts',
    effect: 'read',
    annotations: { idempotentHint: false },
  },
  report(
    'analytics_overview',
    '/org/analytics/overview',
    'Analytics overview',
    'Visibility overview: answers, mentions, citations, rates.',
  ),
  report(
    'analytics_citations',
    '/org/analytics/citations',
    'Citations by source tier',
    'Citations of owned, competitor and other sources.',
  ),
  report(
    'analytics_domains',
    '/org/analytics/domains',
    'Cited domains',
    'The domains answer engines cite, with coverage and share.',
    'domains',
  ),
  report('analytics_pages', '/org/analytics/pages', 'Cited pages', 'The pages answer engines cite, with coverage and share.', 'pages'),
  report(
    'analytics_share_of_voice',
    '/org/analytics/share-of-voice',
    'Share of voice',
    'Mentions and share of voice, the brand against competitors.',
    'brands',
  ),
  report(
    'analytics_prompts',
    '/org/analytics/prompts',
    'Prompts won and lost',
    'Per tracked prompt: answers, won and lost counts and rates.',
    'prompts',
  ),
  {
    name: 'analytics_latest_answers',
    title: 'Latest answers',
    description: `The latest answers of the answer engines to the tracked prompts, with their citations. ${SUMMARY_NOTE}`,
    method: 'GET',
    path: '/org/analytics/answers/latest',
    group: 'analytics',
    effect: 'read',
    shape: {
      list: 'answers',
      summarize: (r) => keep(r, ['window', 'total_count', 'limit', 'offset', 'answers', 'notes']),
      summarizeItem: (a) => ({
        ...keep(a, ['answer_id', 'prompt_id', 'model', 'location', 'run_at', 'won', 'lost', 'origin']),
        text: excerpt(a.text, 300),
        citation_count: len(a.citations),
        mention_count: len(a.mentions),
      }),
    },
  },
  // Verified generation (services/generation).
  {
    name: 'verify_text',
    title: 'Verify a text against the knowledge base',
    description:
      'Checks every sentence of a text against the knowledge base: a verdict per sentence (supported, unsupported, not factual) with the citing chunks and quoted spans. Costs one query credit; changes nothing else.',
    method: 'POST',
    path: '/org/content/verify',
    group: 'generation',
    effect: 'metered',
    shape: { list: 'sentences', first: ['totals', 'supported_ratio'] },
  },
  {
    name: 'list_content_types',
    title: 'Content types',
    description: `The content types a generation run can produce (their content_type_id is what start_generation takes). ${SUMMARY_NOTE}`,
    method: 'GET',
    path: '/org/content-types',
    group: 'generation',
    effect: 'read',
    shape: { list: 'items', summarizeItem: (c) => keep(c, ['content_type_id', 'name', 'description']) },
  },
  {
    name: 'start_generation',
    title: 'Start a generation run',
    description:
      'Starts an asynchronous generation run for a content type (optionally answering a tracked prompt, prompt_id): a cited draft whose every sentence is fact-checked. Follow it with get_generation_run. Costs generation credits.',
    method: 'POST',
    path: '/org/generation/runs',
    group: 'generation',
    effect: 'write',
    argNames: { prompt_id: 'geo_question_id' },
    shape: { rename: { geo_question_id: 'prompt_id' } },
  },
  {
    name: 'get_generation_run',
    title: 'Follow a generation run',
    description:
      'A run’s state (queued, retrieving, drafting, verifying, completed, failed), progress from 0 to 1, failure reason and, once completed, its draft_id.',
    method: 'GET',
    path: '/org/generation/runs/:run_id',
    group: 'generation',
    effect: 'read',
    shape: { rename: { geo_question_id: 'prompt_id' } },
  },
  {
    name: 'list_generation_runs',
    title: 'List generation runs',
    description: `Generation runs, newest first, optionally by state or tracked prompt. ${SUMMARY_NOTE}`,
    method: 'GET',
    path: '/org/generation/runs',
    group: 'generation',
    effect: 'read',
    argNames: { prompt_id: 'geo_question_id' },
    shape: { list: 'items', rename: { geo_question_id: 'prompt_id' }, summarizeItem: runSummary },
  },
  {
    name: 'list_drafts',
    title: 'List drafts',
    description: `Generated drafts with their verification summary, a page at a time. ${SUMMARY_NOTE} One whole draft: get_draft.`,
    method: 'GET',
    path: '/org/generation/drafts',
    group: 'generation',
    effect: 'read',
    defaults: { limit: 20 },
    shape: { list: 'items', summarizeItem: draftSummary },
  },
  {
    name: 'get_draft',
    title: 'Read a draft',
    description: `A draft: its body (${TEXT_WINDOW.toLocaleString('en')} characters at a time from start_index), sections with sentence counts, and sources that changed since (stale). detail: 'full' gives every sentence with its verdict and citations.`,
    method: 'GET',
    path: '/org/generation/drafts/:draft_id',
    group: 'generation',
    effect: 'read',
    shape: { pagedText: 'body', summarize: withoutSentences, adds: { history_count: 'integer', last_event: 'object' } },
  },
  // Publishing (services/publishing): find a piece, then publish it; a dry run unless dry_run is false.
  {
    name: 'list_pieces',
    title: 'List generated pieces',
    description: `Generated pieces with their review state (draft, in_review, approved, rejected, published, unpublished) and whether they pass the publish gate, newest first. ${SUMMARY_NOTE} One whole piece: get_piece.`,
    method: 'GET',
    path: '/org/content/pieces',
    group: 'publishing',
    effect: 'read',
    defaults: { limit: 20 },
    shape: { list: 'items', summarizeItem: pieceSummary },
  },
  {
    name: 'get_piece',
    title: 'Read a piece',
    description: `A piece: its body (${TEXT_WINDOW.toLocaleString('en')} characters at a time from start_index), review state, the unsupported sentences that block the publish gate, publications and the last history event. detail: 'full' gives every sentence and the whole history.`,
    method: 'GET',
    path: '/org/content/pieces/:piece_id',
    group: 'publishing',
    effect: 'read',
    shape: { pagedText: 'body', summarize: withoutSentences, adds: { history_count: 'integer', last_event: 'object' } },
  },
  {
    name: 'publish_piece',
    title: 'Publish a piece',
    description:
      'Publishes an approved piece to the named destinations (or the default set). A DRY RUN BY DEFAULT (dry_run defaults to true): it makes every check (publish:content, folder scope, the publish gate, the destinations) and answers what would be published where (slug, URL) without changing anything; pass dry_run: false to publish. The result starts with the outcome (dry_run, status, results per destination), then a summary of the piece. Needs publish:content.',
    method: 'POST',
    path: '/org/content/pieces/:piece_id/publish',
    group: 'publishing',
    effect: 'write',
    annotations: { destructiveHint: false, idempotentHint: true, openWorldHint: true },
    defaults: { dry_run: true },
    describe: { dry_run: 'true (the default): check and answer what would be published, changing nothing; false: publish' },
    shape: {
      summarize: (r) => ({ dry_run: r.dry_run === true, ...keep(r, ['results']), ...pieceSummary(r) }),
      first: ['dry_run', 'status', 'publishable', 'results'],
      adds: { unsupported_count: 'integer', stale_count: 'integer', publication_count: 'integer' },
    },
  },
];

function report(name: string, path: string, title: string, description: string, list?: string): ToolRow {
  return { name, title, description, method: 'GET', path, group: 'analytics', effect: 'read', ...(list && { shape: { list } }) };
}

export interface Tool {
  row: ToolRow;
  inputSchema: JsonSchema & { type: 'object' };
  /** The result's top-level fields (see outputSchemaOf); a tool error is isError with { status, error }. */
  outputSchema: JsonSchema & { type: 'object' };
  annotations: ToolAnnotations;
  /** Names of the route's path parameters and query fields (the rest of the arguments is the body). */
  params: Set<string>;
  query: Set<string>;
  /** Arguments the MCP server reads itself (detail, start_index, max_length): never sent to REST. */
  local: Set<string>;
}

/** Hints whose value differs from MCP's default (readOnly false, destructive true, idempotent false, open world true). */
const ANNOTATIONS: Record<Effect, ToolAnnotations> = {
  read: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  // Spends a credit and is recorded: not read-only, though it changes no content.
  metered: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
  write: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
};

/** Arguments the shaping adds to a tool's input schema. */
function localArguments(shape: Shaping | undefined): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  if (shape?.summarize || shape?.summarizeItem)
    out.detail = { type: 'string', enum: ['summary', 'full'], default: 'summary', description: PARAMETER_DESCRIPTIONS.detail };
  if (shape?.pagedText) {
    out.start_index = { type: 'integer', minimum: 0, default: 0, description: PARAMETER_DESCRIPTIONS.start_index };
    out.max_length = {
      type: 'integer',
      minimum: 100,
      maximum: RESULT_CAP,
      default: TEXT_WINDOW,
      description: `${PARAMETER_DESCRIPTIONS.max_length} of ${shape.pagedText}`,
    };
  }
  return out;
}

const renameKeys = (o: Record<string, JsonSchema>, names: Record<string, string>) =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [names[k] ?? k, v]));

/** Joins the table with the gateway's route table: a row whose route does not exist is a startup error. */
export function buildTools(routes: readonly RouteEntry[], rows: readonly ToolRow[] = toolRows): Map<string, Tool> {
  const tools = new Map<string, Tool>();
  for (const row of rows) {
    const route = routes.find((r) => r.method === row.method && r.url === `/api/v1${row.path}`);
    if (!route) throw new Error(`MCP tool ${row.name}: no route ${row.method} /api/v1${row.path}`);
    const schema = route.schema ?? {};
    const keys = (s: JsonSchema | undefined) => new Set(Object.keys((s?.properties as object | undefined) ?? {}));
    const raw = row.input ?? toolInputSchema(schema);
    const restToTool = Object.fromEntries(Object.entries(row.argNames ?? {}).map(([tool, rest]) => [rest, tool]));
    const properties = renameKeys((raw.properties ?? {}) as Record<string, JsonSchema>, restToTool);
    for (const [toolName] of Object.entries(row.argNames ?? {})) {
      if (!properties[toolName]) throw new Error(`MCP tool ${row.name}: renames ${toolName}, which its route does not take`);
      properties[toolName] = { ...properties[toolName], description: PARAMETER_DESCRIPTIONS[toolName] };
    }
    for (const [k, description] of Object.entries(row.describe ?? {})) {
      if (!properties[k]) throw new Error(`MCP tool ${row.name}: describes ${k}, which its route does not take`);
      properties[k] = { ...properties[k], description };
    }
    for (const [k, v] of Object.entries(row.defaults ?? {})) {
      if (!properties[k]) throw new Error(`MCP tool ${row.name}: a default for ${k}, which its route does not take`);
      properties[k] = { ...properties[k], default: v };
    }
    const local = localArguments(row.shape);
    const required = ((raw.required as string[] | undefined) ?? []).map((r) => restToTool[r] ?? r);
    const input = tidySchema({
      ...raw,
      properties: { ...properties, ...local },
      ...(required.length > 0 && { required }),
    }) as JsonSchema & { type: 'object' };

    const success = toolSuccessSchema(schema, row.shape?.pick);
    const successProps = renameKeys((success.properties ?? {}) as Record<string, JsonSchema>, row.shape?.rename ?? {});
    // Paging fields every result may carry; the server's instructions say what they mean.
    const extra: Record<string, JsonSchema> = { truncated: { type: 'string' } };
    for (const [k, type] of Object.entries(row.shape?.adds ?? {})) extra[k] = { type };
    if (row.shape?.list) Object.assign(extra, { total_count: { type: 'integer' }, next_offset: { type: 'integer' } });
    if (row.shape?.pagedText)
      Object.assign(extra, { [`${row.shape.pagedText}_length`]: { type: 'integer' }, next_start_index: { type: 'integer' } });
    tools.set(row.name, {
      row,
      inputSchema: input,
      outputSchema: outputSchemaOf({ ...success, properties: successProps }, extra),
      annotations: { ...ANNOTATIONS[row.effect], ...row.annotations },
      params: keys(schema.params),
      query: keys(schema.querystring),
      local: new Set(Object.keys(local)),
    });
  }
  return tools;
}

/** The tools of the chosen groups; read-only leaves out what changes anything but credits and the search history. */
export function selectTools(
  tools: Map<string, Tool>,
  options: { toolsets?: readonly string[] | undefined; readOnly?: boolean | undefined },
): Map<string, Tool> {
  const unknown = (options.toolsets ?? []).filter((t) => !(TOOLSETS as readonly string[]).includes(t));
  if (unknown.length > 0) throw new Error(`Unknown toolset ${unknown.join(', ')}: choose from ${TOOLSETS.join(', ')}`);
  const sets = options.toolsets && options.toolsets.length > 0 ? new Set(options.toolsets) : undefined;
  return new Map([...tools].filter(([, t]) => (!sets || sets.has(t.row.group)) && !(options.readOnly && t.row.effect === 'write')));
}

/** Parses "a,b" toolset lists and read-only flags as configuration and query strings give them. */
export function parseToolSelection(toolsets: unknown, readOnly: unknown): { toolsets?: string[]; readOnly: boolean } {
  const list = [toolsets]
    .flat()
    .filter((v): v is string => typeof v === 'string')
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
  const flag = [readOnly].flat()[0];
  return {
    ...(list.length > 0 && { toolsets: list }),
    readOnly: flag === true || (typeof flag === 'string' && ['1', 'true', 'yes', ''].includes(flag.toLowerCase())),
  };
}
