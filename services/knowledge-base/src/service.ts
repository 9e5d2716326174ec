import type { Logger } from 'pino';
import { randomIds, systemClock, type Clock, type IdGenerator } from '@kb/platform';
import { topics } from '@kb/events';
import { createRpcServer, loadProto, serviceConstructor } from '@kb/rpc';
import { createEventSourcedCore, openBus, openStore } from '@kb/runtime';
import type { KnowledgeBaseConfig } from './config.js';
import { createCategoriesService } from './app/categories.js';
import { knowledgeBaseProjections } from './projections/index.js';
import { categoryHandlers } from './transport/grpc.js';

export const SERVICE_NAME = 'knowledge-base';

export interface RunningService {
  /** host:port of the gRPC server. */
  address: string;
  stop(): Promise<void>;
}

/** Composition root: picks adapters from config, wires use cases, serves gRPC. */
export async function startKnowledgeBase(options: {
  config: KnowledgeBaseConfig;
  logger: Logger;
  clock?: Clock;
  ids?: IdGenerator;
}): Promise<RunningService> {
  const { config } = options;
  const logger = options.logger.child({ service: SERVICE_NAME });
  const clock = options.clock ?? systemClock;
  const ids = options.ids ?? randomIds;

  const store = await openStore(config, SERVICE_NAME, clock, logger);
  const bus = await openBus(config, SERVICE_NAME, logger);
  const core = await createEventSourcedCore({
    service: SERVICE_NAME,
    topic: topics.knowledgeBase,
    store,
    bus,
    projections: knowledgeBaseProjections,
    ids,
    clock,
    logger,
  });
  const categories = createCategoriesService({ store, commands: core.commands, ids, clock });

  const server = createRpcServer({ internalToken: config.INTERNAL_TOKEN, logger });
  const proto = loadProto('knowledge_base.proto');
  server.addService(serviceConstructor(proto, 'knowledge_base.v1.CategoryService'), categoryHandlers(categories));
  const port = await server.listen(config.GRPC_HOST, config.GRPC_PORT);
  await core.start();
  logger.info({ port }, 'knowledge-base listening');

  return {
    address: `${config.GRPC_HOST}:${port}`,
    async stop() {
      await server.shutdown();
      await core.stop();
      await bus.close();
      await store.close();
    },
  };
}
