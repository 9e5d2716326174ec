import Fastify, { type FastifyBaseLogger } from 'fastify';
import type { Logger } from 'pino';
import { Type, type Static } from '@sinclair/typebox';
import { configFields, defineConfig, systemClock, type Clock } from '@kb/platform';
import type { RateLimiter } from '@kb/coordination';
import { sendError } from '../http/errors.js';
import { httpDispatcher } from './dispatcher.js';
import { registerMcpHttp } from './http.js';
import { gatewayRouteTable } from './route-table.js';
import { buildTools, parseToolSelection } from './tools.js';
import { originsOf } from './http.js';
import { mcpServingFields } from './config-fields.js';

export const MCP_SERVICE_NAME = 'mcp';

export const mcpConfigSpec = defineConfig(
  Type.Object({
    LOG_LEVEL: configFields.LOG_LEVEL,
    DATA_DIR: configFields.DATA_DIR,
    INTERNAL_TOKEN: configFields.INTERNAL_TOKEN,
    HOST: Type.String({ default: '0.0.0.0', description: 'interface the HTTP server binds' }),
    PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8090, description: 'HTTP port of /mcp (0 picks a free one)' }),
    GATEWAY_URL: Type.String({ pattern: '^https?://', description: 'the gateway the tools dispatch to (its REST API)' }),
    OAUTH_ISSUER: Type.Optional(
      Type.String({ pattern: '^https?://', description: 'public URL of the gateway (the OAuth issuer); GATEWAY_URL when unset' }),
    ),
    PUBLIC_URL: Type.Optional(
      Type.String({
        pattern: '^https?://[^\\s"]+$',
        description: 'public base URL of this server (MCP resource, allowed Origin); unset: the loopback address it listens on',
      }),
    ),
    ...mcpServingFields,
    REDIS_URL: Type.Optional(
      Type.String({
        pattern: '^rediss?://',
        description: 'Redis for the rate limit shared with the gateway replicas (a local SQLite file when unset)',
      }),
    ),
  }),
);

export type McpConfig = Static<typeof mcpConfigSpec.schema>;

export interface RunningMcp {
  url: string;
  port: number;
  stop(): Promise<void>;
}

async function openLimiter(config: McpConfig, clock: Clock): Promise<{ limiter: RateLimiter; close(): Promise<void> }> {
  if (config.REDIS_URL) {
    // The gateway's prefix: an MCP process and the gateway's own /mcp count into one budget.
    const limiter = (await import('@kb/coordination/redis')).createRedisSlidingRateLimiter({ url: config.REDIS_URL, prefix: 'gateway' });
    return { limiter, close: () => limiter.close() };
  }
  const { mkdirSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { createSqliteStore } = await import('@kb/store/sqlite');
  mkdirSync(config.DATA_DIR, { recursive: true });
  const store = createSqliteStore({ path: join(config.DATA_DIR, 'mcp.db') });
  const limiter = (await import('@kb/coordination/store')).createStoreSlidingRateLimiter({ store, clock });
  return { limiter, close: () => store.close() };
}

/** The MCP server as a process of its own: /mcp over HTTP, tools dispatched to the gateway over HTTP. */
export async function startMcpServer(options: { config: McpConfig; logger: Logger; clock?: Clock }): Promise<RunningMcp> {
  const { config } = options;
  const logger = options.logger.child({ service: MCP_SERVICE_NAME });
  const { limiter, close } = await openLimiter(config, options.clock ?? systemClock);
  const app = Fastify({ loggerInstance: logger as FastifyBaseLogger, bodyLimit: 1024 * 1024, return503OnClosing: true });
  app.setErrorHandler((err, request, reply) => sendError(request, reply, err as Error));
  const served = await registerMcpHttp(app, {
    tools: buildTools(await gatewayRouteTable()),
    dispatcher: httpDispatcher(config.GATEWAY_URL, config.INTERNAL_TOKEN),
    limiter,
    limit: config.MCP_RATE_LIMIT,
    windowMs: config.MCP_RATE_WINDOW_MS,
    jsonResponse: config.MCP_JSON_RESPONSE,
    sessionIdleMs: config.MCP_SESSION_IDLE_SECONDS * 1000,
    sessionsPerCredential: config.MCP_SESSIONS_PER_CREDENTIAL,
    ...parseToolSelection(config.MCP_TOOLSETS, config.MCP_READ_ONLY),
    allowedOrigins: originsOf(config.MCP_ALLOWED_ORIGINS),
    authorizationServerUrl: config.OAUTH_ISSUER ?? config.GATEWAY_URL,
    ...(config.PUBLIC_URL && { publicUrl: config.PUBLIC_URL }),
  });
  app.get('/health', { config: { auth: { credential: 'none' } } }, async () => ({ status: 'ok' }));
  app.addHook('preClose', () => served.close());
  await app.listen({ host: config.HOST, port: config.PORT });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? '127.0.0.1' : config.HOST;
  return {
    url: `http://${host}:${port}`,
    port,
    async stop() {
      await app.close();
      await close();
    },
  };
}
