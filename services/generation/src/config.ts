import { Type, type Static } from '@sinclair/typebox';
import { checkAdapterSettings, configFields, defineConfig } from '@kb/platform';

export const generationConfigSpec = defineConfig(
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
    KNOWLEDGE_BASE_GRPC: Type.String({
      pattern: '^[^\\s:]+:\\d+$',
      description: 'host:port of the knowledge-base gRPC server (retrieval, prompts)',
    }),
    RPC_DEADLINE_MS: Type.Integer({ minimum: 100, default: 10000, description: 'deadline of each call to knowledge-base' }),
    LLM_URL: Type.Optional(
      Type.String({
        pattern: '^https?://',
        description: 'OpenAI-compatible chat endpoint (with /v1) that drafts and repairs; without it the deterministic composer drafts',
      }),
    ),
    LLM_MODEL: Type.String({ default: 'gpt-4o-mini', description: 'chat model name' }),
    LLM_API_KEY: Type.Optional(Type.String({ description: 'bearer key of the chat endpoint' })),
    LLM_TIMEOUT_MS: Type.Integer({ minimum: 1000, default: 60000, description: 'deadline of one chat call' }),
    FACT_CHECK_LLM_JUDGE: Type.Boolean({
      default: true,
      description:
        'with FACT_CHECK_LLM_URL or LLM_URL, a chat model judges each sentence against its best source span (the embedded checks still veto); false: the embedded checker alone',
    }),
    FACT_CHECK_LLM_URL: Type.Optional(
      Type.String({
        pattern: '^https?://',
        description: 'OpenAI-compatible chat endpoint (with /v1) of the fact-check judge, when it is not LLM_URL',
      }),
    ),
    FACT_CHECK_LLM_MODEL: Type.Optional(Type.String({ minLength: 1, description: 'the fact-check judge model (default LLM_MODEL)' })),
    FACT_CHECK_LLM_API_KEY: Type.Optional(
      Type.String({ description: 'bearer key of FACT_CHECK_LLM_URL (LLM_API_KEY is only ever sent to LLM_URL)' }),
    ),
    FACT_CHECK_LLM_TIMEOUT_MS: Type.Integer({
      minimum: 100,
      default: 20000,
      description: 'most milliseconds one fact-check question may take; past it the embedded verdict stands',
    }),
    FACT_CHECK_LLM_CONCURRENCY: Type.Integer({
      minimum: 1,
      maximum: 32,
      default: 4,
      description: 'sentences the fact-check judge is asked about at once',
    }),
    FACT_CHECK_MODEL: Type.Union([Type.Literal('local'), Type.Literal('off')], {
      default: 'local',
      description:
        'local: the fact checker recognises claims worded differently from their sources with the sentence-embedding model in FACT_CHECK_MODEL_DIR (run in-process; lexical only, with a warning, when the folder is missing); off: lexical only',
    }),
    FACT_CHECK_MODEL_DIR: Type.String({
      minLength: 1,
      default: '.models/bge-small-en-v1.5-q',
      description:
        "the fact checker's model folder (model.onnx, tokenizer.json, config.json: scripts/fetch-embedding-model.sh), relative to the working directory",
    }),
    CONTENT_ENGINE_TICK_MS: Type.Integer({
      minimum: 100,
      default: 60000,
      description: 'how often the content engine looks for rules due to fire',
    }),
    RUN_WORKER_TICK_MS: Type.Integer({ minimum: 50, default: 1000, description: 'how often the run worker looks for queued runs' }),
    RUN_LEASE_MS: Type.Integer({
      minimum: 500,
      default: 10000,
      description: 'a run worker holds its run this long between heartbeats; a crashed worker’s run is taken again after it',
    }),
  }),
  (config) => checkAdapterSettings(config),
);

export type GenerationConfig = Static<typeof generationConfigSpec.schema>;
