import type { Logger } from 'pino';
import { randomIds, systemClock, type Clock, type IdGenerator } from '@kb/platform';
import { topics } from '@kb/events';
import { createRpcServer, loadProto, serviceConstructor } from '@kb/rpc';
import { checkDependencies, createEventSourcedCore, dependencyChecks, openBus, openStore } from '@kb/runtime';
import type { KnowledgeBaseConfig } from './config.js';
import { createCategoriesService } from './app/categories.js';
import { knowledgeBaseProjections } from './projections/index.js';
import { categoryHandlers } from './transport/grpc.js';
import { startEventConsumer } from '@kb/eventsourcing';
import { createKbTreeService } from './app/kb-tree.js';
import { createTagsService } from './app/tags.js';
import { CONTENT_CONSUMER_GROUP, contentFilingHandlers } from './app/content-filing.js';
import { kbTreeHandlers } from './transport/kb-tree-grpc.js';
import { tagHandlers } from './transport/tags-grpc.js';
import { createSearchFeature } from './search-feature.js';

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

  const tree = createKbTreeService({ store, commands: core.commands, ids, clock });
  const tags = createTagsService({ store, commands: core.commands, ids, clock, checkFolder: tree.checkFolderAccess });

  const searchFeature = await createSearchFeature({ config, store, bus, commands: core.commands, ids, clock, logger });

  const server = createRpcServer({ internalToken: config.INTERNAL_TOKEN, logger });
  const proto = loadProto('knowledge_base.proto');
  server.addService(serviceConstructor(proto, 'knowledge_base.v1.CategoryService'), categoryHandlers(categories));
  server.addService(serviceConstructor(proto, 'knowledge_base.v1.KnowledgeBaseTree'), kbTreeHandlers(tree));
  server.addService(serviceConstructor(proto, 'knowledge_base.v1.Tags'), tagHandlers(tags));
  searchFeature.register(server, proto);
  server.addHealth(
    async (budgetMs) => (await checkDependencies(dependencyChecks({ store, bus, index: searchFeature.index }), budgetMs)).ready,
  );
  const port = await server.listen(config.GRPC_HOST, config.GRPC_PORT);
  await core.start();
  // The content lifecycle from ingest: content nodes in the tree, the filing read model, tags.
  const contentConsumer = await startEventConsumer({
    bus,
    store,
    groupId: CONTENT_CONSUMER_GROUP,
    topics: [topics.ingest],
    handlers: contentFilingHandlers({ commands: core.commands, ids, logger }),
    logger,
  });
  await searchFeature.start();
  logger.info({ port }, 'knowledge-base listening');

  return {
    address: `${config.GRPC_HOST}:${port}`,
    async stop() {
      await server.shutdown();
      await contentConsumer.stop();
      await searchFeature.stop();
      await core.stop();
      await bus.close();
      await store.close();
    },
  };
}
