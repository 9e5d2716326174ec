import { Type, type Static } from '@sinclair/typebox';
import { checkAdapterSettings, configFields, defineConfig } from '@kb/platform';
import { mcpServingFields } from './mcp/config-fields.js';

const GrpcAddress = (service: string) =>
  Type.String({ pattern: '^[^\\s:]+:\\d+$', description: `host:port of the ${service} gRPC server` });

export const gatewayConfigSpec = defineConfig(
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
    OTEL_EXPORTER_OTLP_ENDPOINT: configFields.OTEL_EXPORTER_OTLP_ENDPOINT,
    HOST: Type.String({
      default: '0.0.0.0',
      description: 'interface the HTTP server binds (`npm start`: 127.0.0.1 unless HOST is set; `npm run stack`: 127.0.0.1)',
    }),
    PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080, description: 'HTTP port (0 picks a free one)' }),
    BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, default: 1048576, description: 'largest JSON request body' }),
    KNOWLEDGE_BASE_GRPC: GrpcAddress('knowledge-base'),
    ANALYTICS_GRPC: GrpcAddress('analytics'),
    INGEST_GRPC: GrpcAddress('ingest'),
    GENERATION_GRPC: GrpcAddress('generation'),
    PUBLISHING_GRPC: GrpcAddress('publishing'),
    MAX_UPLOAD_BYTES: Type.Integer({
      minimum: 1024,
      default: 52428800,
      description: 'largest uploaded file in bytes (a larger one ends failed)',
    }),
    REQUEST_LOG: Type.Union([Type.Literal('changes'), Type.Literal('all')], {
      default: 'changes',
      description:
        'requests logged at info: `changes` (writes and 4xx; successful reads at debug) or `all`; 5xx always at error; one line per request',
    }),
    CONSOLE_DIR: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'folder of the built web console (web/console/dist), served at /; unset: no console (npm start sets it)',
      }),
    ),
    HOSTED_CACHE_TTL_MS: Type.Integer({
      minimum: 0,
      default: 1000,
      description:
        'how long the gateway keeps a hosted page before asking publishing again (writes through it clear it at once; 0: never keep)',
    }),
    UPLOAD_MAX_REQUEST_BYTES: Type.Integer({
      minimum: 1024,
      default: 104857600,
      description: 'largest multipart upload request in bytes (all its files); a larger one is 413',
    }),
    UPLOAD_INFLIGHT_BYTES: Type.Integer({
      minimum: 1024,
      default: 268435456,
      description:
        'upload bytes the gateway receives at once (declared sizes of the uploads in progress); past it a new upload is 503 with Retry-After',
    }),
    RPC_DEADLINE_MS: Type.Integer({ minimum: 100, default: 10000, description: 'deadline of each internal call' }),
    BOOTSTRAP_ORG_NAME: Type.Optional(Type.String({ minLength: 2, description: 'organization created on first start' })),
    BOOTSTRAP_ADMIN_EMAIL: Type.Optional(Type.String({ pattern: '^[^@\\s]+@[^@\\s]+$', description: 'its admin user' })),
    BOOTSTRAP_ADMIN_PASSWORD: Type.Optional(Type.String({ minLength: 12, description: "the admin's password (12+ characters)" })),
    BOOTSTRAP_API_KEY: Type.Optional(
      Type.String({
        pattern: '^[A-Za-z0-9_\\-.]{20,200}$',
        description: 'an unrestricted API key with exactly this value (20+ of A-Z a-z 0-9 _ - .)',
      }),
    ),
    BOOTSTRAP_CREDITS: Type.Integer({ minimum: 0, default: 1000000, description: 'starting credit balance of the bootstrap organization' }),
    SESSION_TTL_SECONDS: Type.Integer({
      minimum: 60,
      default: 86400,
      description: 'how long a session token from POST /auth/login stays valid',
    }),
    CREDIT_COST_INGEST: Type.Integer({
      minimum: 0,
      default: 1,
      description:
        'credits per ingest unit: one unit per item at acceptance, then one per started CREDIT_INGEST_CHARS stored beyond the first',
    }),
    CREDIT_INGEST_CHARS: Type.Integer({
      minimum: 1000,
      default: 100000,
      description: 'stored characters per ingest unit (what a version costs is metered by the text it stored)',
    }),
    CREDIT_COST_QUERY: Type.Integer({ minimum: 0, default: 1, description: 'credits per search or query' }),
    CREDIT_COST_GENERATION: Type.Integer({ minimum: 0, default: 10, description: 'credits per content generation' }),
    COORDINATION: Type.Union([Type.Literal('store'), Type.Literal('redis')], {
      default: 'store',
      description: 'where login rate limits are counted: the service store (one machine) or Redis (replicas)',
    }),
    REDIS_URL: Type.Optional(
      Type.String({
        pattern: '^rediss?://',
        description: 'Redis for COORDINATION=redis (login limits, the MCP rate limit across replicas)',
      }),
    ),
    LOGIN_FAILURES_PER_ACCOUNT: Type.Integer({
      minimum: 1,
      default: 5,
      description: 'failed logins per account and address before the backoff starts',
    }),
    LOGIN_FAILURES_PER_ADDRESS: Type.Integer({
      minimum: 1,
      default: 20,
      description: 'failed logins per address before the backoff starts',
    }),
    LOGIN_FAILURES_PER_ACCOUNT_ANY_ADDRESS: Type.Integer({
      minimum: 1,
      default: 50,
      description: 'failed logins per account, from addresses it never signed in from, before the backoff starts',
    }),
    LOGIN_BACKOFF_BASE_SECONDS: Type.Integer({ minimum: 1, default: 30, description: 'first login backoff window; each tier doubles it' }),
    LOGIN_BACKOFF_MAX_SECONDS: Type.Integer({ minimum: 1, default: 3840, description: 'longest login backoff window' }),
    CREDIT_HOLD_TTL_SECONDS: Type.Integer({
      minimum: 60,
      default: 3600,
      description:
        'a credit reservation older than this is released (its gateway died before settling it); longer than any metered request',
    }),
    MCP_ENABLED: Type.Boolean({ default: true, description: 'serve the MCP server at /mcp on this port' }),
    ...mcpServingFields,
    MCP_ACCESS_TOKEN_TTL_SECONDS: Type.Integer({ minimum: 60, default: 900, description: 'lifetime of an OAuth access token' }),
    MCP_REFRESH_TOKEN_TTL_SECONDS: Type.Integer({
      minimum: 3600,
      default: 2592000,
      description: 'lifetime of an OAuth refresh token (each use rotates it)',
    }),
    OAUTH_REGISTRATIONS_PER_HOUR: Type.Integer({
      minimum: 1,
      default: 20,
      description: 'OAuth client registrations (anonymous) per client address and hour; more is 429',
    }),
    OAUTH_UNUSED_CLIENT_TTL_SECONDS: Type.Integer({
      minimum: 60,
      default: 86400,
      description: 'an OAuth client that completed no authorization in this time after registering is removed',
    }),
    PUBLIC_URL: Type.Optional(
      Type.String({
        pattern: '^https?://[^\\s"]+$',
        description:
          'public base URL (OAuth issuer, MCP resource, allowed Origin); unset: the loopback address it listens on (localhost or 127.0.0.1 with its port), never a Host header',
      }),
    ),
    OAUTH_RESOURCES: Type.Optional(
      Type.String({
        description:
          "further MCP endpoints (URLs, comma separated, e.g. the mcp process's PUBLIC_URL/mcp) OAuth tokens may be issued for besides PUBLIC_URL/mcp; any other resource is invalid_target",
      }),
    ),
  }),
  (config) => [
    ...checkAdapterSettings(config),
    ...(config.COORDINATION === 'redis' && !config.REDIS_URL ? ['REDIS_URL is required when COORDINATION=redis'] : []),
  ],
);

export type GatewayConfig = Static<typeof gatewayConfigSpec.schema>;
