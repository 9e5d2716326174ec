import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { RouteEntry } from '../http/app.js';
import { ErrorBody } from '../http/schemas.js';
import { inlineRefs, toolInputSchema, toolSuccessSchema, type JsonSchema } from './route-schema.js';

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
  annotations: ToolAnnotations;
  /** A schema of its own instead of the route's (multipart routes). */
  input?: JsonSchema & { type: 'object' };
  /** Encodes the arguments as the route's body when it is not JSON. */
  multipart?: true;
  /** Argument values used when the caller leaves them out (shown as the input schema's defaults). */
  defaults?: Record<string, unknown>;
  /** Keeps these fields of the REST answer as the tool's result (and of its schema as the output schema). */
  pick?: readonly string[];
}

const read: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
/** Creates something new each call (a recorded search counts: it is metered and recorded). */
const create: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
const update: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false };

const report = (name: string, path: string, title: string, description: string): ToolRow => ({
  name,
  title,
  description,
  method: 'GET',
  path,
  annotations: read,
});

export const toolRows: ToolRow[] = [
  {
    name: 'search',
    title: 'Search the knowledge base',
    description:
      'Searches the organization knowledge base: a short answer with [n] citations, the retrieved chunks (context, best first) and the source ids. Costs one query credit; recorded in the search history.',
    method: 'POST',
    path: '/org/search',
    annotations: { ...create, title: 'Search the knowledge base' },
  },
  {
    name: 'ask',
    title: 'Ask a question',
    description:
      'Asks a question of the knowledge base and returns only the cited answer: answer, citations (n, content_id, title) and whether anything relevant was found. Costs one query credit.',
    method: 'POST',
    path: '/org/search',
    annotations: create,
    pick: ['query', 'answer', 'answered', 'citations', 'source_ids'],
  },
  {
    name: 'list_search_history',
    title: 'Recorded searches',
    description: 'The recorded organization searches, newest first.',
    method: 'GET',
    path: '/org/search/queries',
    annotations: read,
  },
  {
    name: 'kb_tree',
    title: 'Knowledge-base root folder',
    description: 'The root folder of the knowledge base with a page of its children (folders first, then content).',
    method: 'GET',
    path: '/org/kb/tree',
    annotations: read,
  },
  {
    name: 'kb_folder',
    title: 'Read a folder or content node',
    description: 'A knowledge-base node (folder or content) with a page of its children.',
    method: 'GET',
    path: '/org/kb/nodes/:kb_node_id',
    annotations: read,
  },
  {
    name: 'kb_node_path',
    title: 'Path of a node',
    description: 'The folders from the top (of the caller’s scope) down to a node.',
    method: 'GET',
    path: '/org/kb/nodes/:kb_node_id/path',
    annotations: read,
  },
  {
    name: 'kb_create_folder',
    title: 'Create a folder',
    description: 'Creates a knowledge-base folder under parent_id (the root when omitted).',
    method: 'POST',
    path: '/org/kb/folders',
    annotations: create,
  },
  {
    name: 'kb_read_content',
    title: 'Read a content item',
    description: 'A knowledge-base content item: title, type, processing status, tags, filing.',
    method: 'GET',
    path: '/org/kb/content/:content_id',
    annotations: read,
  },
  {
    name: 'kb_read_chunks',
    title: 'Read the text of a content item',
    description: 'The chunks (text) of a content item, in order, a page at a time.',
    method: 'GET',
    path: '/org/kb/content/:content_id/chunks',
    annotations: read,
  },
  {
    name: 'ingest_text',
    title: 'Add raw text',
    description:
      'Adds raw text (or Markdown) to the knowledge base as a new content item; processing is asynchronous (follow it with kb_read_content). Text already in the knowledge base (the same bytes) is refused as a duplicate naming the existing content_id, at no cost. Costs one ingest unit, and one more per started 100,000 characters stored beyond the first.',
    method: 'POST',
    path: '/org/kb/raw',
    annotations: create,
  },
  {
    name: 'upload_file',
    title: 'Upload files',
    description:
      'Uploads up to 10 files given as base64 (PDF, TXT, CSV, DOC, DOCX, XLS, XLSX, PPT, PPTX, HTML, JSON, XML), exactly as POST /org/kb/upload. Costs one ingest unit per accepted file (a skipped duplicate costs nothing), and one more per started 100,000 characters a file stores beyond the first.',
    method: 'POST',
    path: '/org/kb/upload',
    annotations: create,
    multipart: true,
    input: {
      type: 'object',
      properties: {
        files: {
          type: 'array',
          minItems: 1,
          maxItems: 10,
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
  {
    name: 'list_prompts',
    title: 'List tracked prompts',
    description: 'The organization’s tracked prompts (the questions asked of answer engines), a page at a time.',
    method: 'GET',
    path: '/org/prompts',
    annotations: read,
  },
  {
    name: 'get_prompt',
    title: 'Read a tracked prompt',
    description: 'One tracked prompt.',
    method: 'GET',
    path: '/org/prompts/:prompt_id',
    annotations: read,
  },
  {
    name: 'create_prompt',
    title: 'Create a tracked prompt',
    description: 'Adds a prompt to track across answer engines.',
    method: 'POST',
    path: '/org/prompts',
    annotations: create,
  },
  {
    name: 'update_prompt',
    title: 'Update a tracked prompt',
    description: 'Changes some fields of a tracked prompt.',
    method: 'PATCH',
    path: '/org/prompts/:prompt_id',
    annotations: update,
  },
  {
    name: 'prompt_suggestions',
    title: 'Suggest prompts',
    description: 'Suggests prompts worth tracking, from the knowledge base and the organization’s analytics.',
    method: 'POST',
    path: '/org/prompts/suggestions',
    annotations: { ...read, idempotentHint: false },
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
  report('analytics_domains', '/org/analytics/domains', 'Cited domains', 'The domains answer engines cite, with coverage and share.'),
  report('analytics_pages', '/org/analytics/pages', 'Cited pages', 'The pages answer engines cite, with coverage and share.'),
  report(
    'analytics_share_of_voice',
    '/org/analytics/share-of-voice',
    'Share of voice',
    'Mentions and share of voice, the brand against competitors.',
  ),
  report('analytics_prompts', '/org/analytics/prompts', 'Prompts won and lost', 'Per prompt: answers, won and lost counts and rates.'),
  {
    name: 'analytics_latest_answers',
    title: 'Latest answers',
    description: 'The latest answers of the answer engines to the tracked prompts, with their citations.',
    method: 'GET',
    path: '/org/analytics/answers/latest',
    annotations: read,
  },
  // Verified generation (services/generation).
  {
    name: 'verify_text',
    title: 'Verify a text against the knowledge base',
    description:
      'Checks every sentence of a text against the knowledge base: a verdict per sentence (supported, unsupported, not factual) with the citing chunks and quoted spans. Costs one query credit.',
    method: 'POST',
    path: '/org/content/verify',
    annotations: { ...read, idempotentHint: false },
  },
  {
    name: 'list_content_types',
    title: 'Content types',
    description: 'The content types a generation run can produce (their content_type_id is what start_generation takes).',
    method: 'GET',
    path: '/org/content-types',
    annotations: read,
  },
  {
    name: 'start_generation',
    title: 'Start a generation run',
    description:
      'Starts an asynchronous generation run for a content type (optionally answering a tracked prompt): a cited draft whose every sentence is fact-checked. Follow it with get_generation_run. Costs generation credits.',
    method: 'POST',
    path: '/org/generation/runs',
    annotations: create,
  },
  {
    name: 'get_generation_run',
    title: 'Follow a generation run',
    description:
      'A run’s state (queued, running, completed, failed), progress from 0 to 1, failure reason and, once completed, its draft_id.',
    method: 'GET',
    path: '/org/generation/runs/:run_id',
    annotations: read,
  },
  {
    name: 'list_generation_runs',
    title: 'List generation runs',
    description: 'Generation runs, newest first, optionally by state or prompt.',
    method: 'GET',
    path: '/org/generation/runs',
    annotations: read,
  },
  {
    name: 'list_drafts',
    title: 'List drafts',
    description: 'Generated drafts with their verification summary, a page at a time.',
    method: 'GET',
    path: '/org/generation/drafts',
    annotations: read,
  },
  {
    name: 'get_draft',
    title: 'Read a draft',
    description: 'A draft: sections, sentences with verdicts and citations, and sources that changed since (stale).',
    method: 'GET',
    path: '/org/generation/drafts/:draft_id',
    annotations: read,
  },
  // Publishing (services/publishing): find a piece, then publish it; a dry run unless dry_run is false.
  {
    name: 'list_pieces',
    title: 'List generated pieces',
    description:
      'Generated pieces with their review state (draft, in_review, approved, rejected, published, unpublished) and whether they pass the publish gate, newest first.',
    method: 'GET',
    path: '/org/content/pieces',
    annotations: read,
  },
  {
    name: 'get_piece',
    title: 'Read a piece',
    description: 'A piece: its body, review state, the unsupported sentences that block the publish gate, publications and history.',
    method: 'GET',
    path: '/org/content/pieces/:piece_id',
    annotations: read,
  },
  {
    name: 'publish_piece',
    title: 'Publish a piece',
    description:
      'Publishes an approved piece to the named destinations (or the default set). A DRY RUN BY DEFAULT: it makes every check (publish:content, folder scope, the publish gate, the destinations) and answers what would be published where (slug, URL) without changing anything; pass dry_run: false to publish. Needs publish:content.',
    method: 'POST',
    path: '/org/content/pieces/:piece_id/publish',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    defaults: { dry_run: true },
  },
];

export interface Tool {
  row: ToolRow;
  inputSchema: JsonSchema & { type: 'object' };
  /**
   * The structured content: the REST success answer's schema, or a tool error
   * (isError) carrying REST's status and error body.
   */
  outputSchema: JsonSchema & { type: 'object' };
  /** Names of the route's path parameters and query fields (the rest of the arguments is the body). */
  params: Set<string>;
  query: Set<string>;
}

/** A tool error's structured content: REST's status and error body (and Retry-After on 429). */
export const toolErrorSchema: JsonSchema & { type: 'object' } = {
  type: 'object',
  properties: {
    status: { type: 'integer', minimum: 400, maximum: 599 },
    error: (inlineRefs(ErrorBody, {}) as { properties: { error: JsonSchema } }).properties.error,
    retry_after_seconds: { type: 'integer', minimum: 0 },
  },
  required: ['status', 'error'],
};

/** Joins the table with the gateway's route table: a row whose route does not exist is a startup error. */
export function buildTools(routes: readonly RouteEntry[], rows: readonly ToolRow[] = toolRows): Map<string, Tool> {
  const tools = new Map<string, Tool>();
  for (const row of rows) {
    const route = routes.find((r) => r.method === row.method && r.url === `/api/v1${row.path}`);
    if (!route) throw new Error(`MCP tool ${row.name}: no route ${row.method} /api/v1${row.path}`);
    const schema = route.schema ?? {};
    const keys = (s: JsonSchema | undefined) => new Set(Object.keys((s?.properties as object | undefined) ?? {}));
    const input = row.input ?? toolInputSchema(schema);
    for (const [k, v] of Object.entries(row.defaults ?? {})) {
      const properties = input.properties as Record<string, JsonSchema> | undefined;
      if (!properties?.[k]) throw new Error(`MCP tool ${row.name}: a default for ${k}, which its route does not take`);
      properties[k] = { ...properties[k], default: v };
    }
    tools.set(row.name, {
      row,
      inputSchema: input,
      outputSchema: { type: 'object', anyOf: [toolSuccessSchema(schema, row.pick), toolErrorSchema] },
      params: keys(schema.params),
      query: keys(schema.querystring),
    });
  }
  return tools;
}
