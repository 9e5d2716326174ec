import { Type, type Static } from '@sinclair/typebox';
import { checkAdapterSettings, configFields, defineConfig } from '@kb/platform';

export const publishingConfigSpec = defineConfig(
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
    PUBLISHING_SECRET_KEY: Type.String({
      minLength: 16,
      description: 'key (16+ characters) from which destination and webhook secrets are encrypted at rest (AES-256-GCM)',
    }),
    PUBLIC_BASE_URL: Type.String({
      pattern: '^https?://',
      default: 'http://localhost:8080',
      description: 'public URL of the gateway; hosted pages live under <PUBLIC_BASE_URL>/sites/<org slug>/',
    }),
    ANALYTICS_GRPC: Type.String({ pattern: '^[^\\s:]+:\\d+$', description: 'host:port of the analytics gRPC server (closed loop)' }),
    DNS_SERVERS: Type.Optional(
      Type.String({
        pattern: '^[^\\s,]+(,[^\\s,]+)*$',
        description:
          'comma-separated DNS servers (ip or ip:port) for custom-domain TXT lookups and for resolving destination and webhook hosts; default: the system resolver',
      }),
    ),
    DOMAIN_VERIFICATION_TTL_SECONDS: Type.Integer({
      minimum: 60,
      default: 604800,
      description: 'a custom domain not verified this long after its registration can no longer be verified (register it again)',
    }),
    ALLOW_PRIVATE_DESTINATIONS: Type.Boolean({
      default: false,
      description:
        'let destinations and webhooks reach loopback and private addresses (127.0.0.0/8, ::1, RFC 1918, fc00::/7), for development and tests; link-local, metadata and other special-purpose addresses stay refused. Logged at start when on',
    }),
    DELIVERY_TICK_MS: Type.Integer({
      minimum: 20,
      default: 500,
      description: 'how often the webhook delivery worker looks for due deliveries',
    }),
    DELIVERY_BACKOFF_MS: Type.Integer({
      minimum: 10,
      default: 2000,
      description: 'first retry delay of a failed webhook delivery (doubles each attempt)',
    }),
    DELIVERY_MAX_ATTEMPTS: Type.Integer({
      minimum: 1,
      maximum: 20,
      default: 8,
      description: 'attempts before a webhook delivery is given up',
    }),
    DELIVERY_TIMEOUT_MS: Type.Integer({
      minimum: 100,
      default: 10000,
      description:
        'deadline of one webhook or CMS request; the delivery worker lease lasts three times this (how long a dead worker blocks delivery)',
    }),
  }),
  checkAdapterSettings,
);

export type PublishingConfig = Static<typeof publishingConfigSpec.schema>;
