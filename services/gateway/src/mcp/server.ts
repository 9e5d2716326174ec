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

export const MCP_SERVER_NAME = 'kb-content-service';
export const MCP_SERVER_VERSION = '0.2.0';

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

function toolResult(res: DispatchResponse, pick?: readonly string[]): CallToolResult {
  const body = res.status === 204 ? { ok: true } : res.body;
  const object = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : { items: body };
  const structured = pick ? Object.fromEntries(pick.filter((k) => k in object).map((k) => [k, object[k]])) : object;
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
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
const MAX_RESOURCES = 500;
const CONTENT_URI = /^kb:\/\/content\/([0-9a-f-]{36})$/i;

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
        'Knowledge base, analytics and prompts of one organization. Start with `search` or `ask` for cited answers; ' +
        'browse with kb_tree / kb_folder and read documents as kb://content/{content_id} resources.',
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [...tools.values()].map((t) => ({
      name: t.row.name,
      title: t.row.title,
      description: t.row.description,
      inputSchema: t.inputSchema,
      outputSchema: t.outputSchema,
      annotations: { title: t.row.title, ...t.row.annotations },
    })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = tools.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${request.params.name}`);
    const credential = credentialOf(extra.authInfo);
    const args = { ...tool.row.defaults, ...request.params.arguments };
    if (tool.row.multipart) {
      const raw = multipartFor(args as UploadArgs);
      if (typeof raw === 'string')
        return toolError({ status: 400, headers: {}, body: { error: { code: 'validation_failed', message: raw } } });
      return finish(await dispatcher.dispatch({ method: tool.row.method, path: `/api/v1${tool.row.path}`, credential, raw }), tool);
    }
    const { path, json } = requestFor(tool, args);
    if (!path) {
      const missing = [...tool.params].find((p) => typeof args[p] !== 'string' || args[p] === '');
      return toolError({ status: 400, headers: {}, body: { error: { code: 'validation_failed', message: `${missing} is required` } } });
    }
    return finish(await dispatcher.dispatch({ method: tool.row.method, path, credential, ...(json !== undefined && { json }) }), tool);
  });

  const finish = (res: DispatchResponse, tool: Tool) => (res.status >= 400 ? toolError(res) : toolResult(res, tool.row.pick));

  // Resources: the content items of the knowledge base the caller can see. GET /content
  // lists exactly those (a folder-scoped credential: the items under its folders).
  server.setRequestHandler(ListResourcesRequestSchema, async (_request, extra) => {
    const credential = credentialOf(extra.authInfo);
    const resources: { uri: string; name: string; mimeType: string }[] = [];
    for (let offset = 0; resources.length < MAX_RESOURCES; offset += RESOURCE_PAGE) {
      const page = await dispatcher.dispatch({
        method: 'GET',
        path: `/api/v1/content?limit=${RESOURCE_PAGE}&offset=${offset}`,
        credential,
      });
      // A key scoped to no folder sees no document.
      if (page.status === 403 && isRestError(page.body) && page.body.error.code === 'folder_scope') break;
      if (page.status >= 400) {
        const err = isRestError(page.body) ? page.body.error : { code: `http_${page.status}`, message: `HTTP ${page.status}` };
        throw new McpError(ErrorCode.InvalidRequest, `${err.code}: ${err.message}`, { status: page.status, error: err });
      }
      const items = (page.body as { items?: { id: string; title: string }[] }).items ?? [];
      for (const item of items) resources.push({ uri: `kb://content/${item.id}`, name: item.title, mimeType: 'text/plain' });
      if (items.length < RESOURCE_PAGE) break;
    }
    return { resources: resources.slice(0, MAX_RESOURCES) };
  });

  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [
      {
        uriTemplate: 'kb://content/{content_id}',
        name: 'Knowledge-base document',
        mimeType: 'text/plain',
        description: 'The text of a content item',
      },
    ],
  }));

  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const credential = credentialOf(extra.authInfo);
    const id = CONTENT_URI.exec(request.params.uri)?.[1];
    if (!id) throw new McpError(ErrorCode.InvalidParams, `Unknown resource ${request.params.uri}`);
    const item = await dispatcher.dispatch({ method: 'GET', path: `/api/v1/org/kb/content/${id}`, credential });
    if (item.status >= 400) {
      const err = isRestError(item.body) ? item.body.error : { code: `http_${item.status}`, message: `HTTP ${item.status}` };
      throw new McpError(ErrorCode.InvalidParams, `${err.code}: ${err.message}`, { status: item.status, error: err });
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
    return { contents: [{ uri: request.params.uri, mimeType: 'text/plain', text: texts.join('\n\n') }] };
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
