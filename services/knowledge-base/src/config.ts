import { Type, type Static } from '@sinclair/typebox';
import { checkAdapterSettings, configFields, defineConfig } from '@kb/platform';
import { checkSearchSettings, searchConfigFields } from './search-config.js';

export const knowledgeBaseConfigSpec = defineConfig(
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
    ...searchConfigFields,
  }),
  (c) => [...checkAdapterSettings(c), ...checkSearchSettings(c)],
);

export type KnowledgeBaseConfig = Static<typeof knowledgeBaseConfigSpec.schema>;
