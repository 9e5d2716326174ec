import { createHash, randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AppError, errors } from '@kb/platform';
import type { RateLimiter } from '@kb/coordination';
import { RESOURCE_HEADER, type Dispatcher } from './dispatcher.js';
import { parseToolSelection, selectTools, type Tool } from './tools.js';
import { createMcpServer } from './server.js';
import { ACCESS_TOKEN_RE, grantIdOfAccessToken } from './oauth-tokens.js';
import { normalizeOrigin, ownBaseUrl } from './public-url.js';
import { createSessionRegistry, type RegisteredSession } from './session-registry.js';

export interface McpHttpOptions {
  tools: Map<string, Tool>;
  dispatcher: Dispatcher;
  /** Sliding-window limiter shared by the replicas (Redis) or the process (store). */
  limiter: RateLimiter;
  /** Requests per window per API key or OAuth grant (spec 8: 60 a minute). */
  limit: number;
  windowMs: number;
  /** Public base URL of this server (metadata and WWW-Authenticate); from the request's Host when absent. */
  publicUrl?: string;
  /** Issuer of OAuth tokens (the gateway); this server's own URL when absent. */
  authorizationServerUrl?: string;
  /** JSON replies instead of event streams to POSTs (both are Streamable HTTP). */
  jsonResponse?: boolean;
  /** The tool groups and read-only mode when the client's URL does not choose (?toolsets=kb,search&read_only=true). */
  toolsets?: readonly string[];
  readOnly?: boolean;
  /**
   * Origins (scheme://host[:port]) whose pages may call /mcp, besides this
   * server's own; a request with another Origin is 403 (DNS rebinding). A
   * request without Origin (an assistant, not a browser) is served.
   */
  allowedOrigins?: readonly string[];
  ids?: () => string;
  /** A session unused for this long is closed (default 30 minutes). */
  sessionIdleMs?: number;
  /** Open sessions per API key or OAuth grant; another closes the least recently used (default 10). */
  sessionsPerCredential?: number;
}

/** What the caller presented, normalized to what the REST routes take. */
interface Presented {
  headers: Record<string, string>;
  /** The rate-limit and session owner: a hash of the API key, or the OAuth grant. */
  owner: string;
  kind: 'api_key' | 'oauth';
  token: string;
}

const API_KEY_AUTH_RE = /^ApiKey +(\S+)$/i;
const BEARER_RE = /^Bearer +(\S+)$/i;
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const single = (h: string | string[] | undefined) => (Array.isArray(h) ? undefined : h?.trim());

/**
 * The three API-key forms (X-API-Key, Authorization: ApiKey, Authorization:
 * Bearer <key>) and OAuth access tokens (Bearer). Undefined when nothing was sent.
 */
export function presentedCredential(request: Pick<FastifyRequest, 'headers'>): Presented | undefined {
  const xKey = request.headers['x-api-key'];
  const authorization = request.headers.authorization;
  if (xKey !== undefined && authorization !== undefined) {
    throw errors.unauthenticated('Send one credential: X-API-Key or Authorization, not both', { code: 'ambiguous_credential' });
  }
  const apiKey = (key: string): Presented => ({ headers: { 'x-api-key': key }, owner: `key:${sha256(key)}`, kind: 'api_key', token: key });
  if (xKey !== undefined) {
    const key = single(xKey);
    if (!key) throw errors.unauthenticated('Malformed API key', { code: 'malformed_credential' });
    return apiKey(key);
  }
  if (authorization === undefined) return undefined;
  const value = single(authorization) ?? '';
  const asKey = API_KEY_AUTH_RE.exec(value)?.[1];
  if (asKey) return apiKey(asKey);
  const bearer = BEARER_RE.exec(value)?.[1];
  if (!bearer) {
    throw errors.unauthenticated('Malformed Authorization header: send Bearer <token or API key> or ApiKey <API key>', {
      code: 'malformed_credential',
    });
  }
  if (ACCESS_TOKEN_RE.test(bearer)) {
    return { headers: { authorization: `Bearer ${bearer}` }, owner: `grant:${grantIdOfAccessToken(bearer)}`, kind: 'oauth', token: bearer };
  }
  return apiKey(bearer);
}

/** MCP_ALLOWED_ORIGINS as a list. */
export const originsOf = (value: string | undefined): string[] =>
  (value ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean);

interface Session extends RegisteredSession {
  transport: StreamableHTTPServerTransport;
  server: Server;
}

/** This server's base URL: configured, else its loopback address (public-url.ts); never a Host it does not own. */
const baseUrlOf = (request: FastifyRequest, configured?: string) => ownBaseUrl(request, configured);

/**
 * Serves MCP over Streamable HTTP at /mcp (POST, GET for the event stream,
 * DELETE to end a session) and the protected resource metadata (RFC 9728).
 * Every request: credential (401 with WWW-Authenticate), then the rate limit
 * (429 with Retry-After), then the session it belongs to.
 */
export async function registerMcpHttp(app: FastifyInstance, options: McpHttpOptions): Promise<{ close(): Promise<void> }> {
  const idleMs = options.sessionIdleMs ?? 1_800_000;
  const sessions = createSessionRegistry<Session>({ idleMs, perOwner: options.sessionsPerCredential ?? 10 });
  const ids = options.ids ?? randomUUID;
  /** Whether a session's credential still authenticates (the same probe every request makes). */
  const stillValid = async (credential: Record<string, string>) =>
    (await options.dispatcher.dispatch({ method: 'GET', path: '/api/v1/org/me', credential })).status !== 401;
  const sweeper = setInterval(
    () => void sessions.sweep(stillValid).catch((err: unknown) => app.log.warn({ err }, 'MCP session sweep failed')),
    Math.min(60_000, Math.max(1000, idleMs / 2)),
  );
  sweeper.unref();

  const resourceMetadata = (request: FastifyRequest) => {
    const base = baseUrlOf(request, options.publicUrl);
    return {
      resource: `${base}/mcp`,
      authorization_servers: [(options.authorizationServerUrl ?? base).replace(/\/+$/, '')],
      bearer_methods_supported: ['header'],
      scopes_supported: ['mcp'],
      resource_name: 'Knowledge base and content generation (MCP)',
    };
  };
  for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
    app.get(path, { config: { auth: { credential: 'none' } } }, async (request) => resourceMetadata(request));
  }

  const allowedOrigins = new Set((options.allowedOrigins ?? []).map(normalizeOrigin));
  /**
   * The MCP spec's MUST: an Origin header names a page allowed to call this
   * server, else 403. Its own origin is the configured public one (or its
   * loopback address), never one taken from Host: a rebinding page's Host is its own.
   */
  function checkOrigin(request: FastifyRequest) {
    const origin = single(request.headers.origin);
    if (origin === undefined) return;
    const own = normalizeOrigin(new URL(baseUrlOf(request, options.publicUrl)).origin);
    const given = normalizeOrigin(origin);
    if (given !== own && !allowedOrigins.has(given)) {
      throw errors.forbidden(`Origin ${origin.slice(0, 200)} may not call this MCP server`, { code: 'origin_not_allowed' });
    }
  }

  async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<Presented> {
    const metadata = `resource_metadata="${baseUrlOf(request, options.publicUrl).replace(/["\\]/g, encodeURIComponent)}/.well-known/oauth-protected-resource/mcp"`;
    // RFC 6750 3.1: no error code when no credential came; invalid_request when malformed; invalid_token when wrong or revoked.
    let challenge = `Bearer ${metadata}`;
    try {
      const presented = presentedCredential(request);
      if (!presented) {
        throw errors.unauthenticated(
          'Missing credential: send an API key (X-API-Key, Authorization: Bearer or ApiKey) or an OAuth access token',
          {
            code: 'missing_credential',
          },
        );
      }
      // An OAuth token is checked against this server's resource URL (RFC 8707) on every dispatched request.
      if (presented.kind === 'oauth') presented.headers[RESOURCE_HEADER] = `${baseUrlOf(request, options.publicUrl)}/mcp`;
      // The same check REST makes: a credential REST refuses is refused here (403 = valid, lacking read:org).
      const probe = await options.dispatcher.dispatch({ method: 'GET', path: '/api/v1/org/me', credential: presented.headers });
      if (probe.status === 401) {
        // A revoked key's sessions go at once (an OAuth token may just have expired: its grant's sessions wait for the sweep).
        if (presented.kind === 'api_key') await sessions.closeOwner(presented.owner);
        const error = (probe.body as { error?: { code?: string; message?: string } }).error;
        const message = error?.message ?? 'Invalid credential';
        challenge = `Bearer error="invalid_token", error_description="${message.replace(/["\\]/g, "'")}", ${metadata}`;
        throw errors.unauthenticated(message, { code: error?.code ?? 'invalid_credential' });
      }
      if (probe.status >= 500) throw errors.unavailable('The gateway did not answer');
      return presented;
    } catch (err) {
      if (err instanceof AppError && err.httpStatus === 401) {
        const malformed = ['malformed_credential', 'ambiguous_credential'].includes(err.code ?? '');
        void reply.header('www-authenticate', malformed ? `Bearer error="invalid_request", ${metadata}` : challenge);
      }
      throw err;
    }
  }

  /** The tools of a new session: the groups and mode its URL names, else the configured ones. */
  const toolsFor = (request: FastifyRequest) => {
    const query = (request.query ?? {}) as Record<string, unknown>;
    const chosen = parseToolSelection(query.toolsets, query.read_only);
    try {
      return selectTools(options.tools, {
        toolsets: chosen.toolsets ?? options.toolsets,
        readOnly: 'read_only' in query ? chosen.readOnly : (options.readOnly ?? false),
      });
    } catch (err) {
      throw errors.validation((err as Error).message, { code: 'validation_failed' });
    }
  };

  const handle = async (request: FastifyRequest, reply: FastifyReply) => {
    checkOrigin(request);
    const presented = await authenticate(request, reply);
    // Every message of a JSON-RPC batch is a request of its own: each counts (the first refused one refuses the batch).
    const messages = Array.isArray(request.body) ? Math.max(1, request.body.length) : 1;
    let decision = await options.limiter.hit(`mcp:${presented.owner}`, options.limit, options.windowMs);
    for (let i = 1; i < messages && decision.allowed; i++) {
      decision = await options.limiter.hit(`mcp:${presented.owner}`, options.limit, options.windowMs);
    }
    const limitHeaders = { 'x-ratelimit-limit': String(options.limit), 'x-ratelimit-remaining': String(decision.remaining) };
    void reply.headers(limitHeaders);
    if (!decision.allowed) {
      throw new AppError(
        'rate_limited',
        `More than ${options.limit} MCP requests in ${Math.round(options.windowMs / 1000)} s; retry after ${decision.retryAfterSeconds} s`,
        { code: 'rate_limited', retryAfterSeconds: decision.retryAfterSeconds },
      );
    }

    const sessionId = single(request.headers['mcp-session-id']);
    let session: Session | undefined;
    if (sessionId) {
      session = sessions.get(sessionId);
      // Another credential's session is as unknown as an ended one.
      if (!session || session.owner !== presented.owner) throw errors.notFound('MCP session', { code: 'session_not_found' });
      // The latest credential of the owner (a refreshed OAuth token) is the one the sweep asks about.
      session.credential = presented.headers;
    } else if (request.method === 'POST') {
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: ids,
        enableJsonResponse: options.jsonResponse ?? false,
        onsessioninitialized: (id) => {
          void sessions.add(id, created);
        },
        onsessionclosed: (id) => {
          sessions.forget(id);
        },
      });
      const server = createMcpServer({ tools: toolsFor(request), dispatcher: options.dispatcher });
      const created: Session = {
        transport,
        server,
        owner: presented.owner,
        credential: presented.headers,
        close: () => server.close(),
      };
      transport.onclose = () => {
        if (transport.sessionId) sessions.forget(transport.sessionId);
      };
      await server.connect(transport);
      session = created;
    } else {
      throw errors.validation('Send Mcp-Session-Id (from the initialize response)', { code: 'session_required' });
    }

    const auth: AuthInfo = {
      token: presented.token,
      clientId: presented.owner,
      scopes: [],
      extra: { headers: presented.headers, kind: presented.kind },
    };
    const raw = Object.assign(request.raw, { auth });
    // The transport writes the answer itself: the limit's headers go on the raw response before it does.
    for (const [name, value] of Object.entries(limitHeaders)) reply.raw.setHeader(name, value);
    reply.hijack();
    await session.transport.handleRequest(raw, reply.raw, request.body);
  };

  const config = { auth: { credential: 'none' as const } };
  app.post('/mcp', { config }, handle);
  app.get('/mcp', { config }, handle);
  app.delete('/mcp', { config }, handle);

  return {
    async close() {
      clearInterval(sweeper);
      await sessions.closeAll();
    },
  };
}
