import { randomBytes } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ErrorCode,
  ReadResourceRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { Dispatcher, DispatchResponse } from './dispatcher.js';
import type { Tool } from './tools.js';
import { RESULT_CAP, shapeResult } from './shape.js';
import { SERVICE_VERSION } from '../version.js';

export const MCP_SERVER_NAME = 'kb-content-service';
export const MCP_SERVER_VERSION = SERVICE_VERSION;

/** The caller's credential as the dispatcher forwards it; set on the AuthInfo of every MCP request. */
export const requestCredential = (auth: AuthInfo | undefined): Record<string, string> => {
  const headers = auth?.extra?.headers;
  if (!headers || typeof headers !== 'object') throw new McpError(ErrorCode.InvalidRequest, 'No credential');
  return headers as Record<string, string>;
};

interface RestError {
  error: { code: string; message: string; details?: Record<string, unknown> };
}
const isRestError = (b: unknown): b is RestError =>
  !!b && typeof b === 'object' && typeof (b as RestError).error?.code === 'string' && typeof (b as RestError).error?.message === 'string';

/** A REST error as an MCP tool error: the same code and message, the status alongside. */
function toolError(res: DispatchResponse): CallToolResult {
  const error = isRestError(res.body)
    ? res.body.error
    : { code: `http_${res.status}`, message: typeof res.body === 'string' && res.body ? res.body : `HTTP ${res.status}` };
  const retry = res.headers['retry-after'];
  return {
    isError: true,
    content: [{ type: 'text', text: `${error.code}: ${error.message}` }],
    structuredContent: { status: res.status, error, ...(retry && { retry_after_seconds: Number(retry) }) },
  };
}

/** A REST success as the tool's result, shaped and capped (shape.ts): the JSON, then the line saying how to read on. */
function toolResult(res: DispatchResponse, tool: Tool, args: Record<string, unknown>): CallToolResult {
  const body = res.status === 204 ? { ok: true } : res.body;
  const object = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : { items: body };
  const total = Number(res.headers['x-total-count']);
  const { structured, note } = shapeResult(object, tool.row.shape, {
    args,
    toolName: tool.row.name,
    takesOffset: tool.query.has('offset'),
    ...(Number.isInteger(total) && res.headers['x-total-count'] !== undefined && { totalCount: total }),
  });
  const content: CallToolResult['content'] = [{ type: 'text', text: JSON.stringify(structured) }];
  if (note) content.push({ type: 'text', text: note });
  return { content, structuredContent: structured };
}

/** The arguments REST takes: the tool's own (detail, start_index, max_length) left out, renamed ones given their REST names. */
function restArguments(tool: Tool, args: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) if (!tool.local.has(k)) out[tool.row.argNames?.[k] ?? k] = v;
  return out;
}

const encode = encodeURIComponent;

/** Splits tool arguments into the route's path, query and JSON body. */
export function requestFor(tool: Tool, args: Record<string, unknown>): { path: string; json?: unknown } {
  let path = `/api/v1${tool.row.path}`;
  for (const name of tool.params) {
    const value = args[name];
    if (typeof value !== 'string' || value === '') return { path: '' };
    path = path.replace(`:${name}`, encode(value));
  }
  const query = new URLSearchParams();
  const body: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) {
    if (tool.params.has(k) || v === undefined) continue;
    if (tool.query.has(k) || tool.row.method === 'GET' || tool.row.method === 'DELETE') {
      for (const item of [v].flat()) query.append(k, typeof item === 'object' ? JSON.stringify(item) : String(item as string));
    } else body[k] = v;
  }
  const qs = query.toString();
  const hasBody = tool.row.method !== 'GET' && tool.row.method !== 'DELETE';
  return { path: qs ? `${path}?${qs}` : path, ...(hasBody && { json: body }) };
}

interface UploadArgs {
  files?: { filename?: unknown; content_base64?: unknown; content_type?: unknown }[];
  parent_id?: unknown;
  tags?: unknown;
  category_id?: unknown;
  topic_id?: unknown;
}

const BASE64_RE = /^[A-Za-z0-9+/\r\n]*={0,2}\s*$/;

/** The multipart form POST /org/kb/upload takes, built from the tool's base64 files; bad arguments are the tool's own 400. */
export function multipartFor(
  args: UploadArgs,
  random: () => Buffer = () => randomBytes(12),
): { contentType: string; payload: Buffer } | string {
  if (!Array.isArray(args.files) || args.files.length === 0) return 'files must hold at least one file';
  const boundary = `----kb-mcp-${random().toString('hex')}`;
  const parts: Buffer[] = [];
  const quote = (s: string) => s.replace(/["\r\n\\]/g, '_');
  const field = (name: string, value: string) =>
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  for (const [i, f] of args.files.entries()) {
    if (typeof f?.filename !== 'string' || !f.filename.trim()) return `files/${i}/filename must be a non-empty string`;
    if (typeof f.content_base64 !== 'string' || !BASE64_RE.test(f.content_base64)) return `files/${i}/content_base64 must be base64`;
    const type =
      typeof f.content_type === 'string' && /^[\w.+-]+\/[\w.+-]+$/.test(f.content_type) ? f.content_type : 'application/octet-stream';
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="${quote(f.filename)}"\r\nContent-Type: ${type}\r\n\r\n`,
      ),
      Buffer.from(f.content_base64, 'base64'),
      Buffer.from('\r\n'),
    );
  }
  for (const name of ['parent_id', 'category_id', 'topic_id'] as const) {
    const v = args[name];
    if (v === undefined) continue;
    if (typeof v !== 'string') return `${name} must be a string`;
    field(name, v);
  }
  if (args.tags !== undefined) {
    if (!Array.isArray(args.tags) || args.tags.some((t) => typeof t !== 'string')) return 'tags must be an array of strings';
    for (const t of args.tags as string[]) field('tags', t);
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { contentType: `multipart/form-data; boundary=${boundary}`, payload: Buffer.concat(parts) };
}

const RESOURCE_PAGE = 100;
const CONTENT_URI = /^kb:\/\/content\/([0-9a-f-]{36})(?:\?start_index=(\d{1,9}))?$/i;
/** MCP's error code for a resource that does not exist. */
export const RESOURCE_NOT_FOUND = -32002;

/**
 * The MCP server of one session: tools dispatch to REST with the credential of
 * the MCP request that calls them; knowledge-base documents are resources; a
 * few prompts guide an assistant through the tools.
 */
export function createMcpServer(deps: {
  tools: Map<string, Tool>;
  dispatcher: Dispatcher;
  /** A fixed credential (stdio); over HTTP each request's own. */
  credential?: Record<string, string>;
}): Server {
  const { tools, dispatcher } = deps;
  const credentialOf = (auth: AuthInfo | undefined) => deps.credential ?? requestCredential(auth);
  const server = new Server(
    { name: MCP_SERVER_NAME, version: MCP_SERVER_VERSION },
    {
      capabilities: { tools: {}, resources: {}, prompts: {} },
      instructions:
        'Knowledge base, analytics, tracked prompts, generation and publishing of one organization. Start with `search` or `ask` for cited answers; ' +
        'browse with kb_tree / kb_folder and read documents as kb://content/{content_id} resources. ' +
        `Results: list tools give summaries (detail: 'full' for every field) with total_count and next_offset; long texts come ` +
        `a window at a time (start_index, next_start_index); no result exceeds ${RESULT_CAP.toLocaleString('en')} characters, and one that was cut ` +
        'says so in `truncated` and in its last line, with how to read on. A failed call is isError with { status, error: { code, message } }.',
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [...tools.values()].map((t) => ({
      name: t.row.name,
      title: t.row.title,
      description: t.row.description,
      inputSchema: t.inputSchema,
      outputSchema: t.outputSchema,
      annotations: t.annotations,
    })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = tools.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${request.params.name}`);
    const credential = credentialOf(extra.authInfo);
    const given = { ...tool.row.defaults, ...request.params.arguments };
    const args = restArguments(tool, given);
    if (tool.row.multipart) {
      const raw = multipartFor(args as UploadArgs);
      if (typeof raw === 'string')
        return toolError({ status: 400, headers: {}, body: { error: { code: 'validation_failed', message: raw } } });
      return finish(
        await dispatcher.dispatch({ method: tool.row.method, path: `/api/v1${tool.row.path}`, credential, raw }),
        tool,
        given,
        credential,
      );
    }
    const { path, json } = requestFor(tool, args);
    if (!path) {
      const missing = [...tool.params].find((p) => typeof args[p] !== 'string' || args[p] === '');
      return toolError({ status: 400, headers: {}, body: { error: { code: 'validation_failed', message: `${missing} is required` } } });
    }
    return finish(
      await dispatcher.dispatch({ method: tool.row.method, path, credential, ...(json !== undefined && { json }) }),
      tool,
      given,
      credential,
    );
  });

  const finish = async (res: DispatchResponse, tool: Tool, given: Record<string, unknown>, credential: Record<string, string>) => {
    if (tool.row.scopedTop && res.status === 403 && isRestError(res.body) && res.body.error.code === 'folder_scope') {
      const top = await scopedTop(credential);
      if (top) return toolResult(top, tool, given);
    }
    return res.status >= 400 ? toolError(res) : toolResult(res, tool, given);
  };

  /**
   * A folder-scoped credential may not read the root: its top is a folder of
   * its own whose children are its scope folders (the subtrees it may browse).
   * Undefined when it may see no folder at all.
   */
  const scopedTop = async (credential: Record<string, string>): Promise<DispatchResponse | undefined> => {
    const scope = await dispatcher.dispatch({ method: 'GET', path: '/api/v1/org/kb/scope', credential });
    const items = (scope.body as { items?: unknown[] } | undefined)?.items;
    if (scope.status !== 200 || !Array.isArray(items) || items.length === 0) return undefined;
    const body = {
      type: 'folder',
      name: 'Your folders',
      parent_id: null,
      scope: 'The folders this credential may see: browse each with kb_folder.',
      children: items,
      children_total: items.length,
    };
    return { status: 200, headers: {}, body };
  };

  // Resources: the content items of the knowledge base the caller can see. GET /content
  // lists exactly those (a folder-scoped credential: the items under its folders).
  // A page of RESOURCE_PAGE documents at a time; nextCursor is the offset of the next page.
  server.setRequestHandler(ListResourcesRequestSchema, async (request, extra) => {
    const credential = credentialOf(extra.authInfo);
    const cursor = request.params?.cursor;
    const offset = cursor === undefined ? 0 : Number(cursor);
    if (!Number.isInteger(offset) || offset < 0) throw new McpError(ErrorCode.InvalidParams, `Invalid cursor ${cursor}`);
    const page = await dispatcher.dispatch({
      method: 'GET',
      path: `/api/v1/content?limit=${RESOURCE_PAGE}&offset=${offset}`,
      credential,
    });
    // A key scoped to no folder sees no document.
    if (page.status === 403 && isRestError(page.body) && page.body.error.code === 'folder_scope') return { resources: [] };
    if (page.status >= 400) {
      const err = isRestError(page.body) ? page.body.error : { code: `http_${page.status}`, message: `HTTP ${page.status}` };
      throw new McpError(ErrorCode.InvalidRequest, `${err.code}: ${err.message}`, { status: page.status, error: err });
    }
    const items = (page.body as { items?: { id: string; title: string }[] }).items ?? [];
    return {
      resources: items.map((item) => ({ uri: `kb://content/${item.id}`, name: item.title, mimeType: 'text/plain' })),
      ...(items.length === RESOURCE_PAGE && { nextCursor: String(offset + RESOURCE_PAGE) }),
    };
  });

  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [
      {
        uriTemplate: 'kb://content/{content_id}{?start_index}',
        name: 'Knowledge-base document',
        mimeType: 'text/plain',
        description: `The text of a content item, ${RESULT_CAP.toLocaleString('en')} characters at a time (start_index: where to start)`,
      },
    ],
  }));

  // A document is read RESULT_CAP characters at a time: kb://content/{id}?start_index=N reads on.
  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const credential = credentialOf(extra.authInfo);
    const match = CONTENT_URI.exec(request.params.uri);
    const id = match?.[1];
    // -32002: the resource does not exist (MCP's code for an unknown or unreadable URI).
    if (!id) throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${request.params.uri}`, { uri: request.params.uri });
    const start = Number(match[2] ?? 0);
    const item = await dispatcher.dispatch({ method: 'GET', path: `/api/v1/org/kb/content/${id}`, credential });
    if (item.status >= 400) {
      const err = isRestError(item.body) ? item.body.error : { code: `http_${item.status}`, message: `HTTP ${item.status}` };
      const code = item.status === 404 ? RESOURCE_NOT_FOUND : ErrorCode.InvalidParams;
      throw new McpError(code, `${err.code}: ${err.message}`, { uri: request.params.uri, status: item.status, error: err });
    }
    const texts: string[] = [];
    for (let offset = 0; ; offset += 100) {
      const page = await dispatcher.dispatch({
        method: 'GET',
        path: `/api/v1/org/kb/content/${id}/chunks?limit=100&offset=${offset}`,
        credential,
      });
      const body = page.body as { chunks?: { text: string }[] };
      const items = page.status < 400 ? (body.chunks ?? []) : [];
      texts.push(...items.map((c) => c.text));
      if (items.length < 100) break;
    }
    const whole = texts.join('\n\n');
    const window = RESULT_CAP - 300;
    let text = whole.slice(start, start + window);
    if (start + window < whole.length) {
      text +=
        `\n\n[Characters ${start.toLocaleString('en')} to ${(start + window).toLocaleString('en')} of ${whole.length.toLocaleString('en')}. ` +
        `To read on: kb://content/${id}?start_index=${start + window}]`;
    }
    return { contents: [{ uri: request.params.uri, mimeType: 'text/plain', text }] };
  });

  // Prompts: ready-made instructions that walk an assistant through the tools.
  const prompts = {
    draft_answer_page: {
      description: 'Draft an answer page for a tracked prompt, grounded in the knowledge base with citations',
      arguments: [{ name: 'prompt', description: 'the question the page should answer', required: true }],
      text: (a: Record<string, string>) =>
        `Draft an answer page for the prompt: "${a.prompt}".\n` +
        'First call the `search` tool with that prompt and read the cited chunks (and kb://content resources for more context). ' +
        'Write a page that answers the prompt directly in the first paragraph, then covers the details. ' +
        'Every factual sentence must carry a [n] citation to a search result; leave out any claim the knowledge base does not support.',
    },
    answer_with_citations: {
      description: 'Answer a question only from the knowledge base, citing sources',
      arguments: [{ name: 'question', description: 'the question', required: true }],
      text: (a: Record<string, string>) =>
        `Answer the question: "${a.question}" using only the knowledge base. Call the \`ask\` tool, ` +
        'then reply with its answer, keeping the [n] citations and listing the cited titles. If nothing relevant was found, say so.',
    },
    visibility_report: {
      description: 'Summarize how answer engines see the brand: overview, share of voice and prompts lost',
      arguments: [],
      text: () =>
        'Call analytics_overview, analytics_share_of_voice and analytics_prompts (sort by lost_count). ' +
        'Summarize visibility, the competitors ahead, and the three prompts most often lost, with one action for each.',
    },
  } as const;

  server.setRequestHandler(ListPromptsRequestSchema, async () => ({
    prompts: Object.entries(prompts).map(([name, p]) => ({ name, description: p.description, arguments: [...p.arguments] })),
  }));
  server.setRequestHandler(GetPromptRequestSchema, async (request) => {
    const prompt = prompts[request.params.name as keyof typeof prompts];
    if (!prompt) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt ${request.params.name}`);
    const args = request.params.arguments ?? {};
    for (const a of prompt.arguments)
      if (a.required && !args[a.name]?.trim()) throw new McpError(ErrorCode.InvalidParams, `Prompt argument ${a.name} is required`);
    return {
      description: prompt.description,
      messages: [{ role: 'user', content: { type: 'text', text: prompt.text(args) } }],
    };
  });

  return server;
}
