import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';
import { contextFromHeaders, endSpan, SpanKind, startSpan, type StartedSpan } from '@kb/platform';
import type { IdentityService } from '../app/identity.js';
import type { OrganizationService } from '../app/organizations.js';
import type { ApiKeyService } from '../app/api-keys.js';
import type { CreditsService } from '../app/credits.js';
import type { LoginThrottle } from '../app/login-throttle.js';
import { registerMeter } from './meter.js';
import { HEALTH_PREFIX, registerHealth, type HealthDeps } from './health.js';
import { createUploadBudget } from './intake-support.js';
import { createAuthHook } from './auth-hook.js';
import { sendError } from './errors.js';
import { ErrorBody } from './schemas.js';
import { createValidatorCompiler } from './validation.js';
import { boundJsonDepth, checkWindow, hardenRouteSchema, hasWindow } from './hardening.js';
import { registerRoutes } from './routes/index.js';
import { registerRequestLog, type RequestLogMode } from './request-log.js';
import { settleUnreadBodies } from './early-answer.js';
import { registerConsole } from './console.js';
import { API_REFERENCE_PATH, registerApiReference } from './api-reference.js';
import { createHostedCache, registerHostedSite } from './hosted.js';
import type { ServiceClients } from '../clients.js';
import type { RouteAuth } from './route-auth.js';
import { requestSchemaOf, type RouteRequestSchema } from '../mcp/route-schema.js';
import type { RateLimiter } from '@kb/coordination';
import { injectDispatcher } from '../mcp/dispatcher.js';
import { registerMcpHttp } from '../mcp/http.js';
import { buildTools } from '../mcp/tools.js';
import type { OAuthService } from '../mcp/oauth.js';
import { oauthRoutes } from '../mcp/oauth-routes.js';
import { SERVICE_VERSION } from '../version.js';

export interface HttpDeps {
  /** Dependency checks behind GET /health/ready. */
  health?: HealthDeps;
  identity: IdentityService;
  organizations: OrganizationService;
  apiKeys: ApiKeyService;
  credits: CreditsService;
  loginThrottle: LoginThrottle;
  clients: ServiceClients;
  logger: Logger;
  /** Largest accepted request body in bytes. */
  bodyLimit?: number;
  /** Largest uploaded file in bytes (multipart intake routes). */
  maxUploadBytes?: number;
  /** Upload budgets: per request and in flight over all requests (bytes). */
  uploads?: { maxRequestBytes: number; inflightBytes: number };
  /** Which requests log at info (request-log.ts); default `changes`. */
  requestLog?: RequestLogMode;
  /** Built web console to serve at / (static files; the console calls the public API only). */
  consoleDir?: string;
  /** Serve the MCP server at /mcp (its tools dispatch to these routes in process). */
  mcp?: GatewayMcpOptions;
  /** How long the gateway keeps a hosted page (0: ask publishing every time). */
  hostedCacheTtlMs?: number;
}

export interface GatewayMcpOptions {
  limiter: RateLimiter;
  limit: number;
  windowMs: number;
  /** Proves a request comes from the MCP dispatcher (the internal token). */
  dispatchSecret: string;
  oauth: OAuthService;
  /** Counts client registrations per address (a fixed window of an hour). */
  registrationLimiter?: RateLimiter;
  registrationsPerHour?: number;
  publicUrl?: string;
  /** Further MCP endpoints (the mcp process's) OAuth tokens may be issued for. */
  resources?: readonly string[];
  jsonResponse?: boolean;
  sessionIdleMs?: number;
  sessionsPerCredential?: number;
  /** Origins whose pages may call /mcp besides its own. */
  allowedOrigins?: readonly string[];
  /** Tool groups and read-only mode when the client's URL does not choose. */
  toolsets?: readonly string[];
  readOnly?: boolean;
}

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's server span (a no-op span when telemetry is off). */
    traceSpan?: StartedSpan;
  }
}

export interface RouteEntry {
  method: string;
  url: string;
  auth: RouteAuth;
  /** The route's request schemas with every $ref inlined (the MCP tools publish them as input schemas). */
  schema?: RouteRequestSchema;
}

/** The public HTTP surface: everything under /api/v1. */
export async function buildHttpApp(deps: HttpDeps): Promise<{ app: FastifyInstance; routes: RouteEntry[] }> {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: deps.bodyLimit ?? 1024 * 1024,
    // A client's request id is kept when it is sane, so its logs and ours line up.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID_RE.test(given) ? given : randomUUID();
    },
    return503OnClosing: true,
    // One line per request from request-log.ts instead of fastify's two
    // (errors.ts logs every 5xx with its cause).
    logController: new LogController({ disableRequestLogging: true }),
    // Through the schema controller, so every encapsulated context (each calls addSchema) gets it.
    // (fastify's typing of the factory is narrower than its runtime contract.)
    schemaController: { compilersFactory: { buildValidator: createValidatorCompiler() as never } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  const routes: RouteEntry[] = [];
  app.addHook('onRoute', function (route) {
    // The API reference's pages are public documents beside the API, not operations of it.
    if (route.url.startsWith('/api/v1') && !route.url.startsWith(API_REFERENCE_PATH) && route.method !== 'HEAD') {
      const auth = route.config?.auth;
      if (!auth) throw new Error(`Route ${String(route.method)} ${route.url} declares no auth requirement`);
      const requestSchema = requestSchemaOf(route.schema, this.getSchemas());
      for (const method of [route.method].flat()) routes.push({ method, url: route.url, auth, schema: requestSchema });
      // The requirement is part of the published description.
      const schema = (route.schema ??= {}) as Record<string, unknown>;
      hardenRouteSchema(schema, route.url);
      if (hasWindow(schema)) route.preHandler = [checkWindow, ...[route.preHandler ?? []].flat()];
      if (auth.credential === 'none') schema.security = [];
      else {
        schema.security = auth.credential === 'user' ? [{ BearerSession: [] }] : [{ ApiKey: [] }, { BearerSession: [] }];
        if (auth.permission) schema['x-permission'] = auth.permission;
      }
    }
  });

  app.addHook('onRequest', async (request, reply) => {
    void reply.header('x-request-id', request.id);
    // Probes come every few seconds and cause nothing: they make no traces.
    if (request.url.startsWith(HEALTH_PREFIX)) return;
    // The server span continues a client's W3C traceparent; with telemetry off
    // nothing is read, recorded or passed on.
    request.traceSpan = startSpan(
      `${request.method} ${request.routeOptions.url ?? 'unmatched'}`,
      {
        kind: SpanKind.SERVER,
        attributes: { 'http.request.method': request.method, 'url.path': request.url.split('?')[0] ?? '', 'kb.request_id': request.id },
      },
      contextFromHeaders(request.headers),
    );
  });
  app.addHook(
    'onRequest',
    createAuthHook(
      deps.identity,
      deps.apiKeys,
      deps.mcp && { secret: deps.mcp.dispatchSecret, resolveAccessToken: deps.mcp.oauth.resolveAccessToken },
    ),
  );
  app.addHook('preValidation', boundJsonDepth);
  // After authentication, before anything calls a service: internal calls carry the span.
  app.addHook('preParsing', async (request) => {
    const traceparent = request.traceSpan?.traceparent;
    if (request.caller && traceparent) request.caller = { ...request.caller, trace: traceparent };
  });
  // Before the shutdown hook below, which closes connections whatever this keeps.
  settleUnreadBodies(app as unknown as FastifyInstance);
  // Graceful shutdown: requests in flight when close() starts are answered, and
  // their keep-alive connections end with them. Otherwise a client that honours
  // the server's keep-alive timeout (72 s) would hold the process open that long.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    if (closing) void reply.header('connection', 'close');
    return payload;
  });
  app.addHook('onResponse', async (request, reply) => {
    const span = request.traceSpan?.span;
    if (!span) return;
    span.setAttribute('http.response.status_code', reply.statusCode);
    endSpan(span, reply.statusCode >= 500 ? new Error(`HTTP ${reply.statusCode}`) : undefined);
  });
  registerRequestLog(app as unknown as FastifyInstance, deps.requestLog ?? 'changes');
  // Before any route: a route keeps the error handler in place when it is registered (the probes included).
  app.setErrorHandler((err, request, reply) => sendError(request as FastifyRequest, reply as FastifyReply, err as Error));
  registerHealth(app as unknown as FastifyInstance, deps.health ?? { checks: {} });
  if (deps.consoleDir) await registerConsole(app as unknown as FastifyInstance, deps.consoleDir);
  registerMeter(app as unknown as FastifyInstance, deps.credits);
  // A GET no route matched may be a page of a verified custom domain (by Host).
  const hostedCache = createHostedCache(deps.hostedCacheTtlMs ?? 1000);
  const hosted: { fallback?: ReturnType<typeof registerHostedSite> } = {};
  app.setNotFoundHandler(async (request, reply) => {
    const served = hosted.fallback ? await hosted.fallback(request as FastifyRequest, reply as FastifyReply) : undefined;
    return served ?? reply.status(404).type('text/plain; charset=utf-8').send('Not Found');
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Knowledge Base and Content Generation Service',
        version: SERVICE_VERSION,
        description:
          'Organization API (/api/v1/org/...) and category/topic API (/api/v1/search, /content, /categories, /prompts). ' +
          'Every operation names the permission it needs in x-permission.',
      },
      servers: [{ url: '/' }],
      components: {
        securitySchemes: {
          ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          BearerSession: { type: 'http', scheme: 'bearer', description: 'Session token from POST /api/v1/auth/login' },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  app.addSchema(ErrorBody);
  await registerApiReference(app as unknown as FastifyInstance);

  await app.register(
    async (api) => {
      api.get('/openapi.json', { config: { auth: { credential: 'none' } }, schema: { hide: true } }, async () => app.swagger());
      await registerRoutes(api as unknown as FastifyInstance, {
        clients: deps.clients,
        identity: deps.identity,
        organizations: deps.organizations,
        apiKeys: deps.apiKeys,
        credits: deps.credits,
        loginThrottle: deps.loginThrottle,
        maxUploadBytes: deps.maxUploadBytes ?? 52428800,
        onSiteChange: () => hostedCache.clear(),
        uploadBudget: createUploadBudget(deps.uploads ?? { maxRequestBytes: 104857600, inflightBytes: 268435456 }),
      });
    },
    { prefix: '/api/v1' },
  );

  if (deps.mcp) {
    const { mcp } = deps;
    const self = app as unknown as FastifyInstance;
    const served = await registerMcpHttp(self, {
      tools: buildTools(routes),
      dispatcher: injectDispatcher(() => self, mcp.dispatchSecret),
      limiter: mcp.limiter,
      limit: mcp.limit,
      windowMs: mcp.windowMs,
      ...(mcp.publicUrl && { publicUrl: mcp.publicUrl }),
      ...(mcp.jsonResponse !== undefined && { jsonResponse: mcp.jsonResponse }),
      ...(mcp.sessionIdleMs !== undefined && { sessionIdleMs: mcp.sessionIdleMs }),
      ...(mcp.sessionsPerCredential !== undefined && { sessionsPerCredential: mcp.sessionsPerCredential }),
      ...(mcp.allowedOrigins && { allowedOrigins: mcp.allowedOrigins }),
      ...(mcp.toolsets && { toolsets: mcp.toolsets }),
      ...(mcp.readOnly !== undefined && { readOnly: mcp.readOnly }),
    });
    app.addHook('preClose', () => served.close());
    await app.register(
      oauthRoutes({
        oauth: mcp.oauth,
        identity: deps.identity,
        kbTree: deps.clients.kbTree,
        ...(mcp.publicUrl && { publicUrl: mcp.publicUrl }),
        ...(mcp.resources && { resources: mcp.resources }),
        ...(mcp.registrationLimiter && {
          registrations: { limiter: mcp.registrationLimiter, perHour: mcp.registrationsPerHour ?? 20 },
        }),
      }),
    );
  }
  hosted.fallback = registerHostedSite(app as unknown as FastifyInstance, deps.clients.sites, hostedCache);

  await app.ready();
  return { app: app as unknown as FastifyInstance, routes };
}
