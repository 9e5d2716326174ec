import type { Logger } from 'pino';
import { randomIds, systemClock, type Clock, type IdGenerator } from '@kb/platform';
import type { EventBus } from '@kb/bus';
import type { Projection } from '@kb/eventsourcing';
import { createRpcServer } from '@kb/rpc';
import type { Store } from '@kb/store';
import { openBus, openStore, type AdapterSettings, type StoreFileOptions } from './adapters.js';
import { createEventSourcedCore, type EventSourcedCore } from './event-sourced-service.js';
import { checkDependencies, dependencyChecks, type DependencyCheck } from './health.js';

/**
 * The one way a service is put together (its composition root declares the
 * parts; the kit starts and stops them in the same order everywhere):
 *
 *   start: store, bus, the event-sourced core (projections' indexes) -> compose
 *          -> the server listens (unless it listens last) -> `early` parts (work
 *          that needs no bus) -> the outbox relay -> `parts` in order (consumers,
 *          workers) -> the server listens (if last) -> "<service> listening"
 *   stop:  the server stops taking requests and drains -> `parts` in reverse ->
 *          `early` parts in reverse -> the relay (flushes) -> `resources` in
 *          order -> bus -> store
 */

/** What the service's own code builds on: its adapters, its command bus, its settings. */
export interface ServiceContext<C> {
  config: C;
  logger: Logger;
  clock: Clock;
  ids: IdGenerator;
  store: Store;
  bus: EventBus;
  core: EventSourcedCore;
}

/** Something the service runs: a consumer, a worker, a scheduler. */
export interface ServicePart {
  start?(): void | Promise<void>;
  stop?(): void | Promise<void>;
}

/** The server a service answers on: gRPC (`grpcServer`) or the gateway's HTTP app. */
export interface ServiceServer {
  /** Starts listening; the address and port it got. */
  listen(): Promise<{ address: string; port: number }>;
  /** Stops taking requests and answers the ones in flight. */
  shutdown(): Promise<void>;
  /** Listen only once every part has started (the gateway: no request before its consumers run). */
  listenLast?: boolean;
}

export interface Composition {
  server: ServiceServer;
  /** Started as soon as the server listens, before the outbox relay (work that needs no bus). */
  early?: ServicePart[];
  /** Started in order after the relay; stopped in reverse once the server has stopped. */
  parts?: ServicePart[];
  /** Closed after the relay has stopped, in order (clients, pools, leases, blob stores). */
  resources?: (() => void | Promise<void>)[];
  /** Extra fields of the "listening" log line. */
  logFields?: Record<string, unknown>;
}

export interface ServiceDefinition<C> {
  name: string;
  /** The topic the service's outbox relay publishes to. */
  topic: string;
  projections: Projection[];
  /** How the embedded store's file is laid out. */
  storeFile?: StoreFileOptions;
  compose(ctx: ServiceContext<C>): Promise<Composition>;
}

type RpcServer = ReturnType<typeof createRpcServer>;

export interface StartedService {
  address: string;
  port: number;
  stop(): Promise<void>;
}

export async function startService<C extends AdapterSettings>(
  definition: ServiceDefinition<C>,
  options: { config: C; logger: Logger; clock?: Clock; ids?: IdGenerator },
): Promise<StartedService> {
  const { config } = options;
  const name = definition.name;
  const logger = options.logger.child({ service: name });
  const clock = options.clock ?? systemClock;
  const ids = options.ids ?? randomIds;

  const store = await openStore(config, name, clock, logger, definition.storeFile);
  const bus = await openBus(config, name, logger);
  const core = await createEventSourcedCore({
    service: name,
    topic: definition.topic,
    store,
    bus,
    projections: definition.projections,
    ids,
    clock,
    logger,
    ...(config.OUTBOX_LAG_ALERT_MS !== undefined && { lagAlertMs: config.OUTBOX_LAG_ALERT_MS }),
  });
  const {
    server,
    early = [],
    parts = [],
    resources = [],
    logFields = {},
  } = await definition.compose({
    config,
    logger,
    clock,
    ids,
    store,
    bus,
    core,
  });

  let listening: { address: string; port: number } | undefined;
  if (!server.listenLast) listening = await server.listen();
  for (const part of early) await part.start?.();
  await core.start();
  for (const part of parts) await part.start?.();
  if (server.listenLast) listening = await server.listen();
  logger.info({ port: listening!.port, ...logFields }, `${name} listening`);

  return {
    address: listening!.address,
    port: listening!.port,
    async stop() {
      await server.shutdown();
      for (const part of [...parts].reverse()) await part.stop?.();
      for (const part of [...early].reverse()) await part.stop?.();
      await core.stop();
      for (const close of resources) await close();
      await bus.close();
      await store.close();
    },
  };
}

/**
 * A service's gRPC server: its services registered by `register`, and the
 * standard health service, ready while the store, the bus, every consumer, the
 * outbox relay (events flow) and the `checks` given answer.
 */
export function grpcServer(
  ctx: Pick<ServiceContext<{ INTERNAL_TOKEN: string; GRPC_HOST: string; GRPC_PORT: number }>, 'config' | 'logger' | 'store' | 'bus'> &
    Partial<Pick<ServiceContext<unknown>, 'core'>>,
  register: (server: RpcServer) => void,
  checks: { index?: { countChunks(org_id: string): Promise<number> } } = {},
): ServiceServer {
  const { config, logger, store, bus, core } = ctx;
  const server = createRpcServer({ internalToken: config.INTERNAL_TOKEN, logger });
  register(server);
  const health: Record<string, DependencyCheck> = dependencyChecks({ store, bus, ...(core && { relay: core.relay }), ...checks });
  // With its checks: the gateway's readiness (presenting the internal token) learns why the service is not ready.
  server.addHealth((budgetMs) => checkDependencies(health, budgetMs));
  return {
    async listen() {
      const port = await server.listen(config.GRPC_HOST, config.GRPC_PORT);
      return { address: `${config.GRPC_HOST}:${port}`, port };
    },
    shutdown: () => server.shutdown(),
  };
}
