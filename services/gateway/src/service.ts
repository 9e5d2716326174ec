import type { Logger } from 'pino';
import { randomIds, systemClock, type Clock, type IdGenerator } from '@kb/platform';
import { topics } from '@kb/events';
import { createServiceClients } from './clients.js';
import { createEventSourcedCore, openBus, openStore } from '@kb/runtime';
import type { GatewayConfig } from './config.js';
import { createIdentityService } from './app/identity.js';
import { createOrganizationService } from './app/organizations.js';
import { createApiKeyService } from './app/api-keys.js';
import { createCreditsService, type CreditsService } from './app/credits.js';
import { identityProjection } from './projections/identity.js';
import { creditsProjection } from './projections/credits.js';
import { buildHttpApp, type RouteEntry } from './http/app.js';

export const SERVICE_NAME = 'gateway';
export const gatewayProjections = [identityProjection, creditsProjection];

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

export async function startGateway(options: {
  config: GatewayConfig;
  logger: Logger;
  clock?: Clock;
  ids?: IdGenerator;
}): Promise<RunningGateway> {
  const { config } = options;
  const logger = options.logger.child({ service: SERVICE_NAME });
  const clock = options.clock ?? systemClock;
  const ids = options.ids ?? randomIds;

  const store = await openStore(config, SERVICE_NAME, clock, logger);
  const bus = await openBus(config, SERVICE_NAME, logger);
  const core = await createEventSourcedCore({
    service: SERVICE_NAME,
    topic: topics.gateway,
    store,
    bus,
    projections: gatewayProjections,
    ids,
    clock,
    logger,
  });
  const deps = { store, commands: core.commands, ids, clock };
  const identity = createIdentityService({ ...deps, logger, sessionTtlSeconds: config.SESSION_TTL_SECONDS });
  const organizations = createOrganizationService(deps);
  const apiKeys = createApiKeyService(deps);
  const credits = createCreditsService({
    ...deps,
    costs: { ingest: config.CREDIT_COST_INGEST, query: config.CREDIT_COST_QUERY, generation: config.CREDIT_COST_GENERATION },
  });
  const bootstrap = await identity.bootstrap(config);

  const clients = createServiceClients(config);

  const { app, routes } = await buildHttpApp({
    identity,
    organizations,
    apiKeys,
    credits,
    clients,
    logger,
    bodyLimit: config.BODY_LIMIT_BYTES,
    maxUploadBytes: config.MAX_UPLOAD_BYTES,
    uploads: { maxRequestBytes: config.UPLOAD_MAX_REQUEST_BYTES, inflightBytes: config.UPLOAD_INFLIGHT_BYTES },
  });
  await core.start();
  const sweeper = startCreditSweeper(credits, config.CREDIT_HOLD_TTL_SECONDS * 1000, logger);
  await app.listen({ host: config.HOST, port: config.PORT });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? '127.0.0.1' : config.HOST;

  return {
    url: `http://${host}:${port}`,
    port,
    routes,
    ...(bootstrap.org_id && { bootstrapOrgId: bootstrap.org_id }),
    async stop() {
      await app.close();
      await sweeper.stop();
      clients.close();
      await core.stop();
      await bus.close();
      await store.close();
    },
  };
}
