import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Clock, IdGenerator } from '@kb/platform';
import { topics } from '@kb/events';
import type { LeaseManager } from '@kb/coordination';
import { loadProto, serviceConstructor } from '@kb/rpc';
import { grpcServer, startService } from '@kb/runtime';
import type { Subscription } from '@kb/bus';
import type { Store } from '@kb/store';
import { ANALYTICS_STORE_FILE, type AnalyticsConfig } from './config.js';
import { createAnswersService } from './app/answers.js';
import { createReportsService } from './app/reports.js';
import { createTrackedSourcesService } from './app/tracked-sources.js';
import { createCompetitorsService } from './app/competitors.js';
import { createSettingsService } from './app/settings.js';
import { createOpenAiChatEngine } from './engines/openai-chat.js';
import type { AnswerEngine } from './engines/port.js';
import { analyticsProjections } from './projections/index.js';
import { createFoldThread } from './projections/fold-thread.js';
import { createScheduler } from './scheduler/scheduler.js';
import { startAnalyticsConsumers } from './transport/consumers.js';
import { answerHandlers, competitorHandlers, reportHandlers, runConfigurationHandlers, trackedSourceHandlers } from './transport/grpc.js';

export const SERVICE_NAME = 'analytics';

export interface RunningService {
  /** host:port of the gRPC server. */
  address: string;
  stop(): Promise<void>;
}

/** The one place that picks the lease adapter: the service store, or Redis across replicas. */
async function openLeases(config: AnalyticsConfig, store: Store, clock: Clock): Promise<LeaseManager> {
  if (config.COORDINATION === 'redis') {
    const { createRedisLeaseManager } = await import('@kb/coordination/redis');
    return createRedisLeaseManager({ url: config.REDIS_URL!, prefix: SERVICE_NAME });
  }
  const { createStoreLeaseManager } = await import('@kb/coordination/store');
  return createStoreLeaseManager({ store, clock });
}

/** Composition root: picks adapters from config, wires use cases, serves gRPC, runs the scheduler. */
export async function startAnalytics(options: {
  config: AnalyticsConfig;
  logger: Logger;
  clock?: Clock;
  ids?: IdGenerator;
  /** Overrides the engine the config names (tests). */
  engine?: AnswerEngine | null;
  /** Scheduler off (tests trigger runs explicitly). */
  scheduler?: boolean;
}): Promise<RunningService> {
  return startService<AnalyticsConfig>(
    {
      name: SERVICE_NAME,
      topic: topics.analytics,
      projections: analyticsProjections,
      storeFile: ANALYTICS_STORE_FILE,
      async compose(ctx) {
        const { config, store, bus, core, clock, ids, logger } = ctx;
        await bus.ensureTopics([topics.answers]);
        const leases = await openLeases(config, store, clock);
        const engine =
          options.engine !== undefined
            ? options.engine
            : config.ANSWER_ENGINE_BASE_URL
              ? createOpenAiChatEngine({
                  baseUrl: config.ANSWER_ENGINE_BASE_URL,
                  apiKey: config.ANSWER_ENGINE_API_KEY,
                  timeoutMs: config.ANSWER_ENGINE_TIMEOUT_MS,
                })
              : null;

        const deps = { store, commands: core.commands, ids, clock };
        // The embedded store's import merges count rows on a second core (the thread reads the store file).
        const foldThread = config.STORE === 'sqlite' && config.FOLD_THREAD_MIN_ANSWERS > 0 ? createFoldThread({ logger }) : undefined;
        const answers = createAnswersService({
          ...deps,
          ...(foldThread && { foldThread: { thread: foldThread, minAnswers: config.FOLD_THREAD_MIN_ANSWERS } }),
        });
        const reports = createReportsService({ store, clock });
        const sources = createTrackedSourcesService(deps);
        const competitors = createCompetitorsService(deps);
        const settings = createSettingsService(deps);
        const scheduler = createScheduler({
          store,
          commands: core.commands,
          answers,
          leases,
          engine,
          clock,
          logger,
          owner: `${hostname()}:${process.pid}:${ids.uuid()}`,
          tickMs: config.SCHEDULER_TICK_MS,
        });
        let consumers: Subscription[] = [];

        return {
          server: grpcServer(ctx, (server) => {
            const proto = loadProto('analytics.proto');
            server.addService(serviceConstructor(proto, 'analytics.v1.AnswerService'), answerHandlers(answers));
            server.addService(serviceConstructor(proto, 'analytics.v1.ReportService'), reportHandlers(reports));
            server.addService(serviceConstructor(proto, 'analytics.v1.TrackedSourceService'), trackedSourceHandlers(sources));
            server.addService(serviceConstructor(proto, 'analytics.v1.CompetitorService'), competitorHandlers(competitors));
            server.addService(
              serviceConstructor(proto, 'analytics.v1.RunConfigurationService'),
              runConfigurationHandlers(settings, scheduler),
            );
          }),
          parts: [
            {
              start: async () => {
                consumers = await startAnalyticsConsumers({ bus, store, logger });
              },
              stop: async () => {
                for (const c of consumers) await c.stop();
              },
            },
            { start: () => (options.scheduler !== false ? scheduler.start() : undefined), stop: () => scheduler.stop() },
          ],
          resources: [() => foldThread?.close(), () => leases.close()],
          logFields: { engine: engine !== null },
        };
      },
    },
    options,
  );
}
