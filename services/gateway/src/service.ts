import type { Logger } from 'pino';
import type { Clock, IdGenerator } from '@kb/platform';
import { topics } from '@kb/events';
import { createServiceClients } from './clients.js';
import { dependencyChecks, startService } from '@kb/runtime';
import type { GatewayConfig } from './config.js';
import { createIdentityService } from './app/identity.js';
import { createOrganizationService } from './app/organizations.js';
import { createApiKeyService } from './app/api-keys.js';
import { createCreditsService, type CreditsService } from './app/credits.js';
import { startIngestMetering } from './app/ingest-metering.js';
import { grpcServing } from './http/health.js';
import { identityProjection } from './projections/identity.js';
import { creditsProjection } from './projections/credits.js';
import { oauthProjection } from './projections/oauth.js';
import { buildHttpApp, type RouteEntry } from './http/app.js';
import { createLoginThrottle } from './app/login-throttle.js';
import type { RateLimiter } from '@kb/coordination';
import type { Store } from '@kb/store';

/** The login rate limits' counters: the gateway's store, or Redis shared by replicas. */
async function openRateLimiter(config: GatewayConfig, store: Store, clock: Clock): Promise<RateLimiter> {
  if (config.COORDINATION === 'redis') {
    const { createRedisRateLimiter } = await import('@kb/coordination/redis');
    return createRedisRateLimiter({ url: config.REDIS_URL!, prefix: 'gateway' });
  }
  const { createStoreRateLimiter } = await import('@kb/coordination/store');
  return createStoreRateLimiter({ store, clock });
}
import { createOAuthService, type OAuthService } from './mcp/oauth.js';
import { originsOf } from './mcp/http.js';
import { urlsOf } from './mcp/public-url.js';
import { parseToolSelection } from './mcp/tools.js';

export const SERVICE_NAME = 'gateway';
export const gatewayProjections = [identityProjection, creditsProjection, oauthProjection];

export interface RunningGateway {
  url: string;
  port: number;
  routes: RouteEntry[];
  bootstrapOrgId?: string;
  stop(): Promise<void>;
}

/** How often abandoned credit reservations are looked for. */
const SWEEP_INTERVAL_MS = 60_000;

/**
 * Releases credit reservations a crashed gateway never settled, at start and then
 * every minute. Every gateway replica may run it: a release is decided on the
 * credits stream, so one already released is skipped.
 */
function startCreditSweeper(credits: CreditsService, ttlMs: number, logger: Logger) {
  let running: Promise<void> = Promise.resolve();
  const sweep = () => {
    running = credits
      .releaseAbandoned(ttlMs)
      .then((n) => {
        if (n > 0) logger.warn({ released: n }, 'released abandoned credit reservations');
      })
      .catch((err: unknown) => logger.error({ err }, 'credit reservation sweep failed'));
  };
  sweep();
  const timer = setInterval(sweep, SWEEP_INTERVAL_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

/** Removes OAuth clients that never completed a flow, at start and then every few minutes (at most every ttl/4). */
function startUnusedClientSweeper(oauth: OAuthService, ttlSeconds: number, logger: Logger) {
  let running: Promise<void> = Promise.resolve();
  const sweep = () => {
    running = oauth
      .expireUnusedClients(ttlSeconds)
      .then((n) => {
        if (n > 0) logger.info({ expired: n }, 'removed OAuth clients that never completed an authorization');
      })
      .catch((err: unknown) => logger.error({ err }, 'OAuth client sweep failed'));
  };
  sweep();
  const timer = setInterval(sweep, Math.min(SWEEP_INTERVAL_MS * 10, (ttlSeconds * 1000) / 4));
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

export async function startGateway(options: {
  config: GatewayConfig;
  logger: Logger;
  clock?: Clock;
  ids?: IdGenerator;
}): Promise<RunningGateway> {
  let routes: RouteEntry[] = [];
  let bootstrapOrgId: string | undefined;
  let url = '';
  const running = await startService<GatewayConfig>(
    {
      name: SERVICE_NAME,
      topic: topics.gateway,
      projections: gatewayProjections,
      async compose(ctx) {
        const { config, store, bus, core, clock, ids, logger } = ctx;
        const deps = { store, commands: core.commands, ids, clock };
        const identity = createIdentityService({ ...deps, logger, sessionTtlSeconds: config.SESSION_TTL_SECONDS });
        const oauth = createOAuthService({
          store,
          commands: core.commands,
          clock,
          accessTtlSeconds: config.MCP_ACCESS_TOKEN_TTL_SECONDS,
          refreshTtlSeconds: config.MCP_REFRESH_TOKEN_TTL_SECONDS,
          isMember: async (orgId, userId) => (await identity.memberPermissions(orgId, userId)) !== undefined,
        });
        const organizations = createOrganizationService({
          ...deps,
          onMemberRemoved: async (orgId, userId) => {
            await oauth.revokeGrantsOfMember(orgId, userId);
          },
        });
        const apiKeys = createApiKeyService(deps);
        const credits = createCreditsService({
          ...deps,
          costs: { ingest: config.CREDIT_COST_INGEST, query: config.CREDIT_COST_QUERY, generation: config.CREDIT_COST_GENERATION },
        });
        const bootstrap = await identity.bootstrap(config);
        if (config.MCP_ENABLED && !config.PUBLIC_URL && !['127.0.0.1', 'localhost', '::1'].includes(config.HOST)) {
          logger.warn(
            { host: config.HOST },
            'PUBLIC_URL is unset: OAuth issues tokens for the loopback address only; set it to the address assistants use',
          );
        }
        const limiter = await openRateLimiter(config, store, clock);
        const loginThrottle = createLoginThrottle(limiter, {
          perAccount: config.LOGIN_FAILURES_PER_ACCOUNT,
          perAddress: config.LOGIN_FAILURES_PER_ADDRESS,
          perAccountAnyAddress: config.LOGIN_FAILURES_PER_ACCOUNT_ANY_ADDRESS,
          backoffBaseSeconds: config.LOGIN_BACKOFF_BASE_SECONDS,
          backoffMaxSeconds: Math.max(config.LOGIN_BACKOFF_BASE_SECONDS, config.LOGIN_BACKOFF_MAX_SECONDS),
        });

        const clients = createServiceClients(config);
        const mcpLimiter =
          config.COORDINATION === 'redis' && config.REDIS_URL
            ? (await import('@kb/coordination/redis')).createRedisSlidingRateLimiter({ url: config.REDIS_URL, prefix: SERVICE_NAME })
            : (await import('@kb/coordination/store')).createStoreSlidingRateLimiter({ store, clock });

        const built = await buildHttpApp({
          identity,
          organizations,
          apiKeys,
          credits,
          loginThrottle,
          clients,
          logger,
          bodyLimit: config.BODY_LIMIT_BYTES,
          maxUploadBytes: config.MAX_UPLOAD_BYTES,
          requestLog: config.REQUEST_LOG,
          ...(config.CONSOLE_DIR && { consoleDir: config.CONSOLE_DIR }),
          ...(config.MCP_ENABLED && {
            mcp: {
              limiter: mcpLimiter,
              limit: config.MCP_RATE_LIMIT,
              windowMs: config.MCP_RATE_WINDOW_MS,
              dispatchSecret: config.INTERNAL_TOKEN,
              oauth,
              registrationLimiter: limiter,
              registrationsPerHour: config.OAUTH_REGISTRATIONS_PER_HOUR,
              jsonResponse: config.MCP_JSON_RESPONSE,
              sessionIdleMs: config.MCP_SESSION_IDLE_SECONDS * 1000,
              sessionsPerCredential: config.MCP_SESSIONS_PER_CREDENTIAL,
              allowedOrigins: originsOf(config.MCP_ALLOWED_ORIGINS),
              ...parseToolSelection(config.MCP_TOOLSETS, config.MCP_READ_ONLY),
              ...(config.PUBLIC_URL && { publicUrl: config.PUBLIC_URL }),
              resources: urlsOf(config.OAUTH_RESOURCES),
            },
          }),
          hostedCacheTtlMs: config.HOSTED_CACHE_TTL_MS,
          health: {
            checks: {
              ...dependencyChecks({ store, bus, relay: core.relay }),
              knowledge_base: grpcServing(config.KNOWLEDGE_BASE_GRPC, config.INTERNAL_TOKEN),
              ingest: grpcServing(config.INGEST_GRPC, config.INTERNAL_TOKEN),
              analytics: grpcServing(config.ANALYTICS_GRPC, config.INTERNAL_TOKEN),
              generation: grpcServing(config.GENERATION_GRPC, config.INTERNAL_TOKEN),
              publishing: grpcServing(config.PUBLISHING_GRPC, config.INTERNAL_TOKEN),
            },
            internalToken: config.INTERNAL_TOKEN,
          },
          uploads: { maxRequestBytes: config.UPLOAD_MAX_REQUEST_BYTES, inflightBytes: config.UPLOAD_INFLIGHT_BYTES },
        });
        routes = built.routes;
        bootstrapOrgId = bootstrap.org_id;
        const { app } = built;
        let ingestMetering: { stop(): Promise<void> } | undefined;
        let sweeper: { stop(): Promise<void> } | undefined;
        let clientSweeper: { stop(): Promise<void> } | undefined;

        return {
          // No request before the consumers run: the gateway listens last.
          server: {
            listenLast: true,
            async listen() {
              await app.listen({ host: config.HOST, port: config.PORT });
              const address = app.server.address();
              const port = typeof address === 'object' && address ? address.port : config.PORT;
              const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? '127.0.0.1' : config.HOST;
              url = `http://${host}:${port}`;
              return { address: `${host}:${port}`, port };
            },
            shutdown: () => app.close(),
          },
          parts: [
            {
              start: async () => {
                ingestMetering = await startIngestMetering({
                  bus,
                  store,
                  credits,
                  costPerUnit: config.CREDIT_COST_INGEST,
                  charsPerUnit: config.CREDIT_INGEST_CHARS,
                  logger,
                  clock,
                });
              },
              stop: () => ingestMetering?.stop(),
            },
            {
              start: () => {
                sweeper = startCreditSweeper(credits, config.CREDIT_HOLD_TTL_SECONDS * 1000, logger);
              },
              stop: () => sweeper?.stop(),
            },
            {
              start: () => {
                if (config.MCP_ENABLED) clientSweeper = startUnusedClientSweeper(oauth, config.OAUTH_UNUSED_CLIENT_TTL_SECONDS, logger);
              },
              stop: () => clientSweeper?.stop(),
            },
          ],
          resources: [() => mcpLimiter.close(), () => clients.close(), () => limiter.close()],
        };
      },
    },
    options,
  );

  return {
    url,
    port: running.port,
    routes,
    ...(bootstrapOrgId && { bootstrapOrgId }),
    stop: running.stop,
  };
}
