import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { loadConfig } from '@kb/platform';
import { extractionPoolOptions, ingestConfigSpec } from './config.js';

describe('the extraction pool settings of the ingest configuration', () => {
  it('carry each setting to its option: workers, time, memory, priority, compilation and the extraction limits', () => {
    const config = loadConfig(ingestConfigSpec, {
      INTERNAL_TOKEN: 'a-token-of-sixteen-chars',
      INGEST_WORKERS: '3',
      INGEST_TIMEOUT_MS: '5000',
      INGEST_WORKER_MEMORY_MB: '256',
      INGEST_WORKER_NICE: '5',
      INGEST_WORKER_BACKGROUND_COMPILE: 'true',
      MAX_UNCOMPRESSED_BYTES: '2048',
      MAX_COMPRESSION_RATIO: '50',
      MAX_STREAM_BYTES: '4096',
      MAX_EXTRACTED_CHARS: '7000',
      MAX_PDF_PAGES: '9',
    });
    assert.deepEqual(extractionPoolOptions(config), {
      size: 3,
      timeoutMs: 5000,
      memoryMb: 256,
      nice: 5,
      compileOnOwnThread: false,
      limits: { maxUncompressedBytes: 2048, maxCompressionRatio: 50, maxStreamBytes: 4096, maxCharacters: 7000, maxPages: 9 },
    });
  });

  it("by default compile the workers' code on their own threads", () => {
    const config = loadConfig(ingestConfigSpec, { INTERNAL_TOKEN: 'a-token-of-sixteen-chars' });
    assert.equal(extractionPoolOptions(config).compileOnOwnThread, true);
  });
});
