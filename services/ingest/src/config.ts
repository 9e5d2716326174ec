import { Type, type Static } from '@sinclair/typebox';
import { checkAdapterSettings, configFields, defineConfig } from '@kb/platform';
import type { ExtractionPoolOptions } from './extract/pool.js';

export const ingestConfigSpec = defineConfig(
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
    MAX_UPLOAD_BYTES: Type.Integer({
      minimum: 1024,
      default: 52428800,
      description: 'largest accepted file in bytes (larger files end failed)',
    }),
    MAX_UNCOMPRESSED_BYTES: Type.Integer({
      minimum: 1024,
      default: 209715200,
      description:
        'largest total decompressed size of one file: all entries of a zip-based file (DOCX, XLSX, PPTX) or all Flate streams of a PDF; more is treated as a decompression bomb',
    }),
    MAX_COMPRESSION_RATIO: Type.Integer({ minimum: 10, default: 200, description: 'largest unpacked/packed ratio of a big zip entry' }),
    MAX_STREAM_BYTES: Type.Integer({
      minimum: 1024,
      default: 67108864,
      description: 'largest decompressed size of one stream: one zip entry (DOCX, XLSX, PPTX part) or one PDF stream',
    }),
    MAX_EXTRACTED_CHARS: Type.Integer({ minimum: 1000, default: 10000000, description: 'most characters of text one file may yield' }),
    MAX_CHUNKS: Type.Integer({ minimum: 1, default: 20000, description: 'most chunks one file may be stored as' }),
    MAX_PDF_PAGES: Type.Integer({ minimum: 1, default: 3000, description: 'most pages of one PDF' }),
    CHUNK_TARGET_CHARS: Type.Integer({ minimum: 100, default: 1200, description: 'target size of a chunk in characters' }),
    CHUNK_OVERLAP_CHARS: Type.Integer({
      minimum: 0,
      default: 150,
      description: 'characters repeated between consecutive chunks of a section',
    }),
    INGEST_WORKERS: Type.Integer({ minimum: 1, maximum: 64, default: 2, description: 'files extracted at the same time (worker threads)' }),
    INGEST_PREFETCH: Type.Integer({
      minimum: 0,
      maximum: 8,
      default: 1,
      description:
        'files claimed and read ahead for each extraction worker, so a worker starts its next file as soon as it finishes one (0: a file is claimed only once a worker is free); each holds its file in memory while it waits',
    }),
    INGEST_WORKER_NICE: Type.Integer({
      minimum: 0,
      maximum: 19,
      default: 10,
      description:
        'scheduling priority (nice value) of the extraction worker threads: above 0 they yield the CPU to request handling and commits when the cores are busy, and use all of it otherwise; 0: the same as the rest of the process',
    }),
    INGEST_WORKER_BACKGROUND_COMPILE: Type.Boolean({
      default: false,
      description:
        "let V8's shared helper threads, at the process's priority, compile the extraction workers' hot code (V8's default); off: each worker compiles on its own thread at INGEST_WORKER_NICE, so a busy machine gives request handling the CPU first",
    }),
    INGEST_TIMEOUT_MS: Type.Integer({ minimum: 1000, default: 120000, description: 'longest extraction of one file before it is stopped' }),
    INGEST_WORKER_MEMORY_MB: Type.Integer({ minimum: 64, default: 1024, description: 'heap limit of each extraction worker thread' }),
    INGEST_MAX_ATTEMPTS: Type.Integer({
      minimum: 1,
      maximum: 20,
      default: 4,
      description: 'attempts before a transient failure fails the item',
    }),
    INGEST_RETRY_BASE_MS: Type.Integer({ minimum: 10, default: 2000, description: 'first retry delay; doubles on each attempt' }),
    INGEST_LEASE_MS: Type.Integer({
      minimum: 1000,
      maximum: 600000,
      default: 15000,
      description:
        'lease of a claimed job, renewed by a heartbeat every third of it while its worker lives; a dead worker’s job is taken again within it',
    }),
    INGEST_POLL_MS: Type.Integer({ minimum: 10, default: 1000, description: 'how often idle workers look for due jobs' }),
    BLOB_FSYNC: Type.Boolean({
      default: false,
      description:
        'flush each stored original file to the disk before acknowledging it (survives power loss); off, it survives any process crash, as the SQLite store (synchronous=NORMAL) does',
    }),
  }),
  (c) => checkAdapterSettings(c),
);

export type IngestConfig = Static<typeof ingestConfigSpec.schema>;

/** The extraction pool's settings in the service's configuration (the service's pool, and the benchmark's pool-alone baseline). */
export function extractionPoolOptions(config: IngestConfig): ExtractionPoolOptions {
  return {
    size: config.INGEST_WORKERS,
    timeoutMs: config.INGEST_TIMEOUT_MS,
    memoryMb: config.INGEST_WORKER_MEMORY_MB,
    nice: config.INGEST_WORKER_NICE,
    compileOnOwnThread: !config.INGEST_WORKER_BACKGROUND_COMPILE,
    limits: {
      maxUncompressedBytes: config.MAX_UNCOMPRESSED_BYTES,
      maxCompressionRatio: config.MAX_COMPRESSION_RATIO,
      maxStreamBytes: config.MAX_STREAM_BYTES,
      maxCharacters: config.MAX_EXTRACTED_CHARS,
      maxPages: config.MAX_PDF_PAGES,
    },
  };
}
