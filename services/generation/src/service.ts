import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Clock, IdGenerator } from '@kb/platform';
import { topics } from '@kb/events';
import { createRpcClient, loadProto, serviceConstructor } from '@kb/rpc';
import { grpcServer, startService } from '@kb/runtime';
import type { Subscription } from '@kb/bus';
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
import { factCheckJudge, openFactCheckModel } from './fact-check-model.js';
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
  return startService<GenerationConfig>(
    {
      name: SERVICE_NAME,
      topic: topics.generation,
      projections: generationProjections,
      async compose(ctx) {
        const { config, store, bus, core, clock, ids, logger } = ctx;
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
        // The embedded checker stands on its own; a configured chat model judges each sentence's best span.
        const factModel = options.checker ? undefined : await openFactCheckModel(config, logger);
        const judge = options.checker ? undefined : factCheckJudge(config, llm);
        const checker =
          options.checker ??
          createFactChecker({
            ...(judge && { judge, judgeTimeoutMs: config.FACT_CHECK_LLM_TIMEOUT_MS, judgeConcurrency: config.FACT_CHECK_LLM_CONCURRENCY }),
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
        const workersOn = options.worker !== false;
        let consumers: Subscription[] = [];

        return {
          server: grpcServer(ctx, (server) =>
            server.addService(
              serviceConstructor(loadProto('generation.proto'), 'generation.v1.Generation'),
              generationHandlers({ settings, runs, drafts, verify, generate, builder, engine, onRunStarted: () => worker.notify() }),
            ),
          ),
          parts: [
            {
              start: async () => {
                consumers = await startGenerationConsumers({ bus, store, commands: core.commands, logger });
              },
              stop: async () => {
                for (const c of consumers) await c.stop();
              },
            },
            { start: () => (workersOn ? worker.start() : undefined), stop: () => worker.stop() },
            { start: () => (workersOn ? engine.start(config.CONTENT_ENGINE_TICK_MS) : undefined), stop: () => engine.stop() },
          ],
          resources: [() => factModel?.close(), () => search.close(), () => prompts.close()],
          logFields: { llm: llm !== undefined },
        };
      },
    },
    options,
  );
}
