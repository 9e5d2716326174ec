import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { loadConfig, type Clock, type IdGenerator } from '@kb/platform';
import { gatewayConfigSpec, startGateway, type RunningGateway } from '@kb/gateway';
import { knowledgeBaseConfigSpec, startKnowledgeBase } from '@kb/knowledge-base';
import { ingestConfigSpec, startIngest, type RunningService } from '@kb/ingest';
import { analyticsConfigSpec, startAnalytics } from '@kb/analytics';
import { generationConfigSpec, startGeneration } from '@kb/generation';
import { publishingConfigSpec, startPublishing } from '@kb/publishing';
import { setInProcessCalls } from '@kb/rpc';

/** What `npm start` uses for anything not set, so one command gives a working service. */
export const developmentDefaults = {
  BOOTSTRAP_ORG_NAME: 'Development',
  BOOTSTRAP_ADMIN_EMAIL: 'admin@example.com',
  BOOTSTRAP_ADMIN_PASSWORD: 'development-password',
  BOOTSTRAP_API_KEY: 'kb_dev_0000000000000000000000000000',
  PUBLISHING_SECRET_KEY: 'development-publishing-secret-key',
} as const;

/**
 * Where hosted pages say they live when PUBLIC_BASE_URL is not set: the gateway's PUBLIC_URL
 * when that is set (one public address for OAuth, MCP and the hosted pages' links), else on
 * this machine at the gateway's port (`PORT=3000 npm start` links to :3000, not to
 * publishing's default :8080). Unknown for PORT=0 (the port is picked when the gateway
 * listens, after publishing starts): publishing's default then holds.
 */
export function defaultPublicBaseUrl(env: Record<string, string | undefined>): string | undefined {
  if (env.PUBLIC_BASE_URL) return env.PUBLIC_BASE_URL;
  if (env.PUBLIC_URL) return env.PUBLIC_URL.replace(/\/+$/, '');
  const port = env.PORT?.trim();
  return port && /^\d+$/.test(port) && Number(port) > 0 ? `http://localhost:${Number(port)}` : undefined;
}

/**
 * The interface the embedded gateway listens on: loopback unless HOST says
 * otherwise. `npm start` is a developer's tool (with a known development API
 * key), so it is not reachable from other machines by default; containers set
 * HOST=0.0.0.0 (infra/Dockerfile, compose, Kubernetes).
 */
export function embeddedListenHost(env: Record<string, string | undefined>): string {
  return env.HOST?.trim() || '127.0.0.1';
}

/** Stands in for the gRPC addresses known only once each service listens. */
const PENDING_ADDRESS = '127.0.0.1:1';

/**
 * Every service's settings, checked before any service starts: a bad value (PORT=eighty)
 * stops the start with one message instead of after five services came up. Throws the
 * first ConfigError.
 */
export function checkSettings(env: Record<string, string | undefined>): void {
  const grpc = { GRPC_HOST: '127.0.0.1', GRPC_PORT: '0' };
  loadConfig(knowledgeBaseConfigSpec, { ...env, ...grpc });
  loadConfig(ingestConfigSpec, { ...env, ...grpc });
  loadConfig(analyticsConfigSpec, { ...env, ...grpc });
  loadConfig(generationConfigSpec, { ...env, ...grpc, KNOWLEDGE_BASE_GRPC: PENDING_ADDRESS });
  const publicBaseUrl = defaultPublicBaseUrl(env);
  loadConfig(publishingConfigSpec, {
    ...env,
    ...grpc,
    ...(publicBaseUrl && { PUBLIC_BASE_URL: publicBaseUrl }),
    ANALYTICS_GRPC: PENDING_ADDRESS,
  });
  loadConfig(gatewayConfigSpec, {
    ...env,
    KNOWLEDGE_BASE_GRPC: PENDING_ADDRESS,
    INGEST_GRPC: PENDING_ADDRESS,
    ANALYTICS_GRPC: PENDING_ADDRESS,
    GENERATION_GRPC: PENDING_ADDRESS,
    PUBLISHING_GRPC: PENDING_ADDRESS,
  });
}

export interface RunningSystem {
  url: string;
  gateway: RunningGateway;
  stop(): Promise<void>;
}

/**
 * Every service in one process on the embedded adapters (or whatever the
 * environment picks). Each service still listens for gRPC on loopback, but
 * calls between them take the in-process transport (same serialization,
 * metadata, internal token, spans, deadlines and errors; no HTTP/2), unless
 * RPC_IN_PROCESS=false. The internal token is random per start unless set:
 * nothing outside this process needs it.
 */
export async function startSystem(options: {
  env?: Record<string, string | undefined>;
  logger: Logger;
  clock?: Clock;
  ids?: IdGenerator;
}): Promise<RunningSystem> {
  const env: Record<string, string | undefined> = {
    ...developmentDefaults,
    INTERNAL_TOKEN: randomBytes(24).toString('hex'),
    ...(options.env ?? process.env),
  };
  for (const [k, v] of Object.entries(developmentDefaults)) if (!env[k]) env[k] = v;
  if (!env.INTERNAL_TOKEN) env.INTERNAL_TOKEN = randomBytes(24).toString('hex');
  env.HOST = embeddedListenHost(env);
  if (env.RPC_IN_PROCESS !== undefined && !['true', 'false'].includes(env.RPC_IN_PROCESS))
    throw new Error(`RPC_IN_PROCESS must be true or false, not ${env.RPC_IN_PROCESS}`);
  setInProcessCalls(env.RPC_IN_PROCESS !== 'false');

  checkSettings(env);

  const extra = { ...(options.clock && { clock: options.clock }), ...(options.ids && { ids: options.ids }) };
  const kbConfig = loadConfig(knowledgeBaseConfigSpec, { ...env, GRPC_HOST: '127.0.0.1', GRPC_PORT: '0' });
  const knowledgeBase = await startKnowledgeBase({ config: kbConfig, logger: options.logger, ...extra });
  let ingest: RunningService | undefined;
  let analytics: RunningService | undefined;
  let generation: RunningService | undefined;
  let publishing: RunningService | undefined;
  try {
    const ingestConfig = loadConfig(ingestConfigSpec, { ...env, GRPC_HOST: '127.0.0.1', GRPC_PORT: '0' });
    ingest = await startIngest({ config: ingestConfig, logger: options.logger, ...extra });
    const analyticsConfig = loadConfig(analyticsConfigSpec, { ...env, GRPC_HOST: '127.0.0.1', GRPC_PORT: '0' });
    analytics = await startAnalytics({ config: analyticsConfig, logger: options.logger, ...extra });
    const generationConfig = loadConfig(generationConfigSpec, {
      ...env,
      GRPC_HOST: '127.0.0.1',
      GRPC_PORT: '0',
      KNOWLEDGE_BASE_GRPC: knowledgeBase.address,
    });
    generation = await startGeneration({ config: generationConfig, logger: options.logger, ...extra });
    const publicBaseUrl = defaultPublicBaseUrl(env);
    const publishingConfig = loadConfig(publishingConfigSpec, {
      ...env,
      ...(publicBaseUrl && { PUBLIC_BASE_URL: publicBaseUrl }),
      GRPC_HOST: '127.0.0.1',
      GRPC_PORT: '0',
      ANALYTICS_GRPC: analytics.address,
    });
    publishing = await startPublishing({ config: publishingConfig, logger: options.logger, ...extra });
    const gatewayConfig = loadConfig(gatewayConfigSpec, {
      ...env,
      KNOWLEDGE_BASE_GRPC: knowledgeBase.address,
      INGEST_GRPC: ingest.address,
      ANALYTICS_GRPC: analytics.address,
      GENERATION_GRPC: generation.address,
      PUBLISHING_GRPC: publishing.address,
    });
    const gateway = await startGateway({ config: gatewayConfig, logger: options.logger, ...extra });
    const started = ingest;
    const startedAnalytics = analytics;
    const startedGeneration = generation;
    const startedPublishing = publishing;
    return {
      url: gateway.url,
      gateway,
      async stop() {
        await gateway.stop();
        await startedPublishing.stop();
        await started.stop();
        await startedAnalytics.stop();
        await startedGeneration.stop();
        await knowledgeBase.stop();
      },
    };
  } catch (err) {
    await publishing?.stop();
    await ingest?.stop();
    await analytics?.stop();
    await generation?.stop();
    await knowledgeBase.stop();
    throw err;
  }
}
