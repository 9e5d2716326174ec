import type { FastifyInstance } from 'fastify';

/**
 * How the MCP server reaches the REST API: every tool call becomes one request
 * to the gateway's route with the caller's own credential, so permissions,
 * folder scope, credits and validation are those of REST, enforced by the same
 * code. Two adapters: in process (fastify inject) and over HTTP.
 */
export interface DispatchRequest {
  method: string;
  /** Path under the API root, e.g. /api/v1/org/search, with the query string. */
  path: string;
  /** The credential headers to forward (x-api-key, or authorization with an OAuth access token). */
  credential: Record<string, string>;
  json?: unknown;
  /** A raw body with its content type (multipart uploads). */
  raw?: { contentType: string; payload: Buffer };
}

export interface DispatchResponse {
  status: number;
  headers: Record<string, string>;
  /** Parsed JSON when the answer is JSON, else the text. */
  body: unknown;
}

export interface Dispatcher {
  dispatch(request: DispatchRequest): Promise<DispatchResponse>;
}

/** The header only the MCP dispatcher sets: it proves the request comes from the MCP server (OAuth tokens are accepted only then). */
export const DISPATCH_HEADER = 'x-kb-mcp-dispatch';
/** The MCP server's own resource URL (RFC 8707): an OAuth token bound to another server is refused. Trusted only with DISPATCH_HEADER. */
export const RESOURCE_HEADER = 'x-kb-mcp-resource';

function headersFor(request: DispatchRequest, secret: string): Record<string, string> {
  const headers: Record<string, string> = { ...request.credential, ...(secret && { [DISPATCH_HEADER]: secret }) };
  if (request.raw) headers['content-type'] = request.raw.contentType;
  else if (request.json !== undefined) headers['content-type'] = 'application/json';
  return headers;
}

const parse = (contentType: string, text: string): unknown => {
  if (contentType.includes('application/json') && text) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
};

/** In process: the gateway's own app answers through inject, every hook included. */
export function injectDispatcher(app: () => FastifyInstance, secret: string): Dispatcher {
  return {
    async dispatch(request) {
      const res = await app().inject({
        method: request.method as 'GET',
        url: request.path,
        headers: headersFor(request, secret),
        ...(request.raw ? { payload: request.raw.payload } : request.json !== undefined && { payload: JSON.stringify(request.json) }),
      });
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k] = String(v);
      return { status: res.statusCode, headers, body: parse(headers['content-type'] ?? '', res.body) };
    },
  };
}

/** Over HTTP: an MCP process of its own calls the gateway at baseUrl. */
export function httpDispatcher(baseUrl: string, secret: string, fetchImpl: typeof fetch = fetch): Dispatcher {
  const base = baseUrl.replace(/\/+$/, '');
  return {
    async dispatch(request) {
      const res = await fetchImpl(`${base}${request.path}`, {
        method: request.method,
        headers: headersFor(request, secret),
        ...(request.raw
          ? { body: new Uint8Array(request.raw.payload) }
          : request.json !== undefined && { body: JSON.stringify(request.json) }),
      });
      const text = await res.text();
      const headers: Record<string, string> = {};
      res.headers.forEach((v, k) => (headers[k] = v));
      return { status: res.status, headers, body: parse(headers['content-type'] ?? '', text) };
    },
  };
}
