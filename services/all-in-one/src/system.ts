import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { loadConfig, type Clock, type IdGenerator } from '@kb/platform';
import { gatewayConfigSpec, startGateway, type RunningGateway } from '@kb/gateway';
import { knowledgeBaseConfigSpec, startKnowledgeBase } from '@kb/knowledge-base';

/** What `npm start` uses for anything not set, so one command gives a working service. */
export const developmentDefaults = {
  BOOTSTRAP_ORG_NAME: 'Development',
  BOOTSTRAP_ADMIN_EMAIL: 'admin@example.com',
  BOOTSTRAP_ADMIN_PASSWORD: 'development-password',
  BOOTSTRAP_API_KEY: 'kb_dev_0000000000000000000000000000',
} as const;

export interface RunningSystem {
  url: string;
  gateway: RunningGateway;
  stop(): Promise<void>;
}

/**
 * Every service in one process on the embedded adapters (or whatever the
 * environment picks), talking real gRPC on loopback. The internal token is
 * random per start unless set: nothing outside this process needs it.
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

  const extra = { ...(options.clock && { clock: options.clock }), ...(options.ids && { ids: options.ids }) };
  const kbConfig = loadConfig(knowledgeBaseConfigSpec, { ...env, GRPC_HOST: '127.0.0.1', GRPC_PORT: '0' });
  const knowledgeBase = await startKnowledgeBase({ config: kbConfig, logger: options.logger, ...extra });
  try {
    const gatewayConfig = loadConfig(gatewayConfigSpec, { ...env, KNOWLEDGE_BASE_GRPC: knowledgeBase.address });
    const gateway = await startGateway({ config: gatewayConfig, logger: options.logger, ...extra });
    return {
      url: gateway.url,
      gateway,
      async stop() {
        await gateway.stop();
        await knowledgeBase.stop();
      },
    };
  } catch (err) {
    await knowledgeBase.stop();
    throw err;
  }
}
