import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { randomIds, systemClock, type Clock, type IdGenerator } from '@kb/platform';
import { topics } from '@kb/events';
import { createRpcClient, createRpcServer, loadProto, serviceConstructor } from '@kb/rpc';
import { checkDependencies, createEventSourcedCore, dependencyChecks, openBus, openStore } from '@kb/runtime';
import { createFactChecker, createOpenAiChat, type FactChecker, type Llm } from '@kb/ai';
import type { GenerationConfig } from './config.js';
import { generationProjections } from './projections/index.js';
import { createSettingsService } from './app/settings.js';
import { createRunsService } from './app/runs.js';
import { createDraftsService } from './app/drafts.js';
import { createVerifyService } from './app/verify.js';
import { createGenerateService } from './app/generate.js';
import { createBuilderService } from './app/builder.js';
import { createContentEngine } from './engine/engine.js';
import { createRunWorker, createStoreRunLeases, type RunLeases } from './app/worker.js';
import { createKnowledgeBaseRetriever } from './retrieval.js';
import { openFactCheckModel } from './fact-check-model.js';
import { generationHandlers } from './transport/grpc.js';
import { startGenerationConsumers } from './transport/consumers.js';

export const SERVICE_NAME = 'generation';

export interface RunningService {
  /** host:port of the gRPC server. */
  address: string;
  stop(): Promise<void>;
}

/** Composition root: adapters from config, use cases, gRPC, bus consumers and the run worker. */
export async function startGeneration(options: {
  config: GenerationConfig;
  logger: Logger;
  clock?: Clock;
  ids?: IdGenerator;
  /** Overrides the fact checker (tests). */
  checker?: FactChecker;
  /** Overrides the chat model the config names (tests); null: none. */
  llm?: Llm | null;
  /** Overrides the run leases (tests; the heartbeat lease of harden-crash later). */
  leases?: RunLeases;
  /** Who holds run leases (default host:pid). */
  workerId?: string;
  /** Worker off (tests drive it). */
  worker?: boolean;
}): Promise<RunningService> {
  const { config } = options;
  const logger = options.logger.child({ service: SERVICE_NAME });
  const clock = options.clock ?? systemClock;
  const ids = options.ids ?? randomIds;

  const store = await openStore(config, SERVICE_NAME, clock, logger);
  const bus = await openBus(config, SERVICE_NAME, logger);
  const core = await createEventSourcedCore({
    service: SERVICE_NAME,
    topic: topics.generation,
    store,
    bus,
    projections: generationProjections,
    ids,
    clock,
    logger,
  });
  const kb = loadProto('knowledge_base.proto');
  const kbClient = (service: string) =>
    createRpcClient(serviceConstructor(kb, `knowledge_base.v1.${service}`), {
      address: config.KNOWLEDGE_BASE_GRPC,
      internalToken: config.INTERNAL_TOKEN,
      deadlineMs: config.RPC_DEADLINE_MS,
      name: 'knowledge-base',
    });
  const search = kbClient('Search');
  const prompts = kbClient('Prompts');
  const retriever = createKnowledgeBaseRetriever(search);
  const llm =
    options.llm !== undefined
      ? (options.llm ?? undefined)
      : config.LLM_URL
        ? createOpenAiChat({
            baseUrl: config.LLM_URL,
            model: config.LLM_MODEL,
            timeoutMs: config.LLM_TIMEOUT_MS,
            ...(config.LLM_API_KEY && { apiKey: config.LLM_API_KEY }),
          })
        : undefined;
  // The embedded checker stands on its own; the chat model adds a second opinion only when asked to.
  const factModel = options.checker ? undefined : await openFactCheckModel(config, logger);
  const checker =
    options.checker ??
    createFactChecker({
      ...(llm && config.FACT_CHECK_LLM_JUDGE && { judge: llm }),
      ...(factModel && { embeddings: factModel }),
    });

  const settings = createSettingsService({ store, commands: core.commands, ids, clock });
  const runs = createRunsService({ store, commands: core.commands, ids, clock, settings, retriever, prompts, checker, llm, logger });
  const drafts = createDraftsService({ store, commands: core.commands, clock });
  const verify = createVerifyService({ checker, retriever });
  const generate = createGenerateService({ checker, retriever, llm });
  const builder = createBuilderService({ store, commands: core.commands, ids, clock, settings, retriever, checker, llm });
  // Stable for the process: a restart in place takes its runs back at once; another process waits out the lease.
  const owner = options.workerId ?? `${hostname()}:${process.pid}`;
  const worker = createRunWorker({
    pending: runs.pending,
    execute: runs.execute,
    leases: options.leases ?? createStoreRunLeases({ store, owner, ttlMs: config.RUN_LEASE_MS, clock }),
    logger,
    tickMs: config.RUN_WORKER_TICK_MS,
  });

  const engine = createContentEngine({
    store,
    commands: core.commands,
    ids,
    clock,
    settings,
    logger,
    onRunsStarted: () => worker.notify(),
  });

  const server = createRpcServer({ internalToken: config.INTERNAL_TOKEN, logger });
  // Ready only while its store and bus answer (grpc.health.v1, the readiness probe of the deployment).
  server.addHealth(async (budgetMs) => (await checkDependencies(dependencyChecks({ store, bus }), budgetMs)).ready);
  const proto = loadProto('generation.proto');
  server.addService(
    serviceConstructor(proto, 'generation.v1.Generation'),
    generationHandlers({ settings, runs, drafts, verify, generate, builder, engine, onRunStarted: () => worker.notify() }),
  );
  const port = await server.listen(config.GRPC_HOST, config.GRPC_PORT);
  await core.start();
  const consumers = await startGenerationConsumers({ bus, store, commands: core.commands, logger });
  if (options.worker !== false) {
    worker.start();
    engine.start(config.CONTENT_ENGINE_TICK_MS);
  }
  logger.info({ port, llm: llm !== undefined }, 'generation listening');

  return {
    address: `${config.GRPC_HOST}:${port}`,
    async stop() {
      engine.stop();
      await worker.stop();
      await server.shutdown();
      for (const c of consumers) await c.stop();
      await core.stop();
      await factModel?.close();
      search.close();
      prompts.close();
      await bus.close();
      await store.close();
    },
  };
}
