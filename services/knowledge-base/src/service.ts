import type { Logger } from 'pino';
import type { Clock, IdGenerator } from '@kb/platform';
import { topics } from '@kb/events';
import { loadProto, serviceConstructor } from '@kb/rpc';
import { grpcServer, startService } from '@kb/runtime';
import type { Subscription } from '@kb/bus';
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
  return startService<KnowledgeBaseConfig>(
    {
      name: SERVICE_NAME,
      topic: topics.knowledgeBase,
      projections: knowledgeBaseProjections,
      async compose(ctx) {
        const { config, store, bus, core, clock, ids, logger } = ctx;
        const categories = createCategoriesService({ store, commands: core.commands, ids, clock });
        const tree = createKbTreeService({ store, commands: core.commands, ids, clock });
        const tags = createTagsService({ store, commands: core.commands, ids, clock, checkFolder: tree.checkFolderAccess });
        const searchFeature = await createSearchFeature({ config, store, bus, commands: core.commands, ids, clock, logger });
        let contentConsumer: Subscription | undefined;

        return {
          server: grpcServer(
            ctx,
            (server) => {
              const proto = loadProto('knowledge_base.proto');
              server.addService(serviceConstructor(proto, 'knowledge_base.v1.CategoryService'), categoryHandlers(categories));
              server.addService(serviceConstructor(proto, 'knowledge_base.v1.KnowledgeBaseTree'), kbTreeHandlers(tree));
              server.addService(serviceConstructor(proto, 'knowledge_base.v1.Tags'), tagHandlers(tags));
              searchFeature.register(server, proto);
            },
            { index: searchFeature.index },
          ),
          parts: [
            // The content lifecycle from ingest: content nodes in the tree, the filing read model, tags.
            {
              start: async () => {
                contentConsumer = await startEventConsumer({
                  bus,
                  store,
                  groupId: CONTENT_CONSUMER_GROUP,
                  topics: [topics.ingest],
                  handlers: contentFilingHandlers({ commands: core.commands, ids, logger }),
                  logger,
                });
              },
              stop: () => contentConsumer?.stop(),
            },
            { start: () => searchFeature.start(), stop: () => searchFeature.stop() },
          ],
        };
      },
    },
    options,
  );
}
