import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { developmentDefaults } from '@kb/all-in-one';

/**
 * The distributed runtime on one machine, as data: every service its own OS
 * process (its own entry point, DATA_DIR, embedded store and index), the bus on
 * Kafka. scripts/stack.ts starts it for operators; the multi-process suite
 * (test/e2e/multiprocess-harness.ts) starts the same processes with the same
 * settings.
 */

export interface ServiceSpec {
  /** Service name; a gRPC service's address reaches the others as <NAME>_GRPC. */
  name: string;
  kind: 'grpc' | 'http';
  /** Settings of its own, on top of the shared ones. */
  env?: Record<string, string>;
}

/** The gateway's share of npm start's development values: its bootstrap organization, admin and key. */
export const BOOTSTRAP_SETTINGS: Record<string, string> = Object.fromEntries(
  Object.entries(developmentDefaults).filter(([k]) => k.startsWith('BOOTSTRAP_')),
);

/** Every service of the distributed runtime that takes part in the bus, in start order (the gateway, which calls the others, last). */
export const SERVICES: ServiceSpec[] = [
  { name: 'knowledge-base', kind: 'grpc' },
  { name: 'ingest', kind: 'grpc' },
  { name: 'analytics', kind: 'grpc' },
  { name: 'generation', kind: 'grpc' },
  { name: 'publishing', kind: 'grpc', env: { PUBLISHING_SECRET_KEY: developmentDefaults.PUBLISHING_SECRET_KEY } },
  { name: 'gateway', kind: 'http', env: BOOTSTRAP_SETTINGS },
];

/**
 * Deployed processes outside the bus: the MCP server's own process (services/mcp)
 * holds no state and joins no bus; it forwards to the gateway's REST API.
 */
export const STATELESS_FRONTS = ['mcp'];

/** What every process shares: the bus on Kafka, stores and index embedded (one data folder per service). */
export const SHARED_SETTINGS = { STORE: 'sqlite', BUS: 'kafka' } as const;

/** The gateway's port: PORT, else 8080, the address of `npm start` and of every example in the docs. */
export function gatewayPort(env: Record<string, string | undefined>): number {
  const given = env.PORT?.trim();
  if (!given) return 8080;
  if (!/^\d+$/.test(given) || Number(given) > 65535) throw new Error(`PORT=${JSON.stringify(env.PORT)} is invalid: expected a port number`);
  return Number(given);
}

/**
 * What makes the stack's gateway serve what `npm start` serves: the built console at /
 * (when it is there), and hosted pages that link to the public URL (PUBLIC_BASE_URL, else
 * PUBLIC_URL, else the gateway's own address).
 */
export function publicSettings(
  env: Record<string, string | undefined>,
  gateway: { host: string; port: number; consoleDir: string },
): Record<string, string> {
  const publicUrl = (env.PUBLIC_BASE_URL || env.PUBLIC_URL || `http://${gateway.host}:${gateway.port}`).replace(/\/+$/, '');
  return {
    PUBLIC_BASE_URL: publicUrl,
    ...(!env.CONSOLE_DIR && existsSync(join(gateway.consoleDir, 'index.html')) && { CONSOLE_DIR: gateway.consoleDir }),
  };
}

/** The variable through which the others find a gRPC service. */
export const grpcVariable = (service: string) => `${service.toUpperCase().replace(/-/g, '_')}_GRPC`;

/** A service's entry point: its TypeScript source (run under tsx) or its build (`npm run build`). */
export const entryOf = (service: string, from: 'source' | 'dist') =>
  from === 'source' ? `services/${service}/src/main.ts` : `services/${service}/dist/main.js`;

/** The node arguments that run a service from its source or its build. */
export const nodeArgsOf = (service: string, from: 'source' | 'dist') =>
  from === 'source' ? ['--conditions=source', '--import', 'tsx', entryOf(service, 'source')] : [entryOf(service, 'dist')];

/**
 * The environment of one service process: the shared settings, its own data folder
 * and listening address, the gRPC address of every other service, then its own settings.
 */
export function serviceEnv(
  spec: ServiceSpec,
  where: {
    /** Settings every process gets: KAFKA_BROKERS, INTERNAL_TOKEN, LOG_LEVEL, OTEL_EXPORTER_OTLP_ENDPOINT, ... */
    shared: Record<string, string>;
    dataDir: string;
    host: string;
    port: number;
    /** host:port of each gRPC service by name. */
    addresses: Map<string, string>;
  },
): Record<string, string> {
  const env: Record<string, string> = { ...SHARED_SETTINGS, ...where.shared, DATA_DIR: where.dataDir };
  if (spec.kind === 'grpc') Object.assign(env, { GRPC_HOST: where.host, GRPC_PORT: String(where.port) });
  else Object.assign(env, { HOST: where.host, PORT: String(where.port) });
  // Every process finds the others' gRPC services (generation asks the knowledge base, publishing asks analytics).
  for (const [name, address] of where.addresses) if (name !== spec.name) env[grpcVariable(name)] = address;
  return { ...env, ...spec.env };
}
