import { Type, type Static } from '@sinclair/typebox';
import { checkAdapterSettings, configFields, defineConfig } from '@kb/platform';
import type { StoreFileOptions } from '@kb/runtime';

/**
 * The embedded store's file: 16 KB pages instead of SQLite's 4 KB. Every import
 * rewrites roll-up rows of tens of kilobytes and thousands of smaller rows, and
 * its commit writes each changed page to the WAL as a frame of its own (and the
 * checkpoint copies it again): larger pages are fewer frames for the same rows.
 * Measured in docs/performance.md. A store file made before keeps its 4 KB
 * pages (docs/analytics.md says how to convert one).
 */
export const ANALYTICS_STORE_FILE: StoreFileOptions = { pageSize: 16_384 };

export const analyticsConfigSpec = defineConfig(
  Type.Object({
    LOG_LEVEL: configFields.LOG_LEVEL,
    DATA_DIR: configFields.DATA_DIR,
    STORE: configFields.STORE,
    BUS: configFields.BUS,
    MONGODB_URL: configFields.MONGODB_URL,
    KAFKA_BROKERS: configFields.KAFKA_BROKERS,
    KAFKA_SESSION_TIMEOUT_MS: configFields.KAFKA_SESSION_TIMEOUT_MS,
    BUS_MAX_MESSAGE_BYTES: configFields.BUS_MAX_MESSAGE_BYTES,
    KAFKA_COMPRESSION: configFields.KAFKA_COMPRESSION,
    OUTBOX_LAG_ALERT_MS: configFields.OUTBOX_LAG_ALERT_MS,
    INTERNAL_TOKEN: configFields.INTERNAL_TOKEN,
    GRPC_HOST: configFields.GRPC_HOST,
    GRPC_PORT: configFields.GRPC_PORT,
    OTEL_EXPORTER_OTLP_ENDPOINT: configFields.OTEL_EXPORTER_OTLP_ENDPOINT,
    COORDINATION: Type.Union([Type.Literal('store'), Type.Literal('redis')], {
      default: 'store',
      description: 'where leases for scheduled runs live: the service store (one machine) or Redis (replicas)',
    }),
    REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://', description: 'Redis for COORDINATION=redis' })),
    ANSWER_ENGINE_BASE_URL: Type.Optional(
      Type.String({
        pattern: '^https?://',
        description: 'OpenAI-compatible chat endpoint scheduled runs ask (without it runs report "no answer engine configured")',
      }),
    ),
    ANSWER_ENGINE_API_KEY: Type.Optional(Type.String({ minLength: 1, description: 'bearer token for the answer engine' })),
    ANSWER_ENGINE_TIMEOUT_MS: Type.Integer({ minimum: 1000, default: 60000, description: 'deadline of one answer engine call' }),
    SCHEDULER_TICK_MS: Type.Integer({ minimum: 1000, default: 60000, description: 'how often the scheduler looks for due runs' }),
    FOLD_THREAD_MIN_ANSWERS: Type.Integer({
      minimum: 0,
      default: 100,
      description:
        'an import of at least this many answers merges its count rows on a second thread while it appends them (STORE=sqlite; 0: never)',
    }),
  }),
  (config) => [
    ...checkAdapterSettings(config),
    ...(config.COORDINATION === 'redis' && !config.REDIS_URL ? ['REDIS_URL is required when COORDINATION=redis'] : []),
  ],
);

export type AnalyticsConfig = Static<typeof analyticsConfigSpec.schema>;
