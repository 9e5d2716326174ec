import { hostname } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock, IdGenerator } from '@kb/platform';
import { topics } from '@kb/events';
import type { BlobStore } from '@kb/blob';
import { loadProto, serviceConstructor } from '@kb/rpc';
import { grpcServer, startService } from '@kb/runtime';
import type { Subscription } from '@kb/bus';
import { startEventConsumer } from '@kb/eventsourcing';
import { extractionPoolOptions, type IngestConfig } from './config.js';
import { createIntake } from './app/intake.js';
import { createProcessor } from './app/processor.js';
import { createContentQueries } from './app/queries.js';
import { JOBS } from './app/jobs.js';
import { createExtractionPool } from './extract/pool.js';
import { ingestProjections } from './projections/index.js';
import { ingestHandlers } from './transport/grpc.js';
import { KB_TREE_CONSUMER_GROUP, kbTreeHandlers } from './transport/kb-tree-events.js';

export const SERVICE_NAME = 'ingest';

/** Lease owners of the ingest processors running in this process (several in tests). */
const liveOwners = new Set<string>();

/**
 * Whether the process that held a lease is gone, as far as this host can tell:
 * owners are `host:pid:random`; on the same host, a pid that no longer runs (or
 * is this process, under an owner this process is not using: a container
 * restarted with the same pid) is gone. Other hosts' leases run out by themselves.
 */
export function isOwnerGone(owner: string): boolean {
  const [host, pidText] = owner.split(':');
  const pid = Number(pidText);
  if (host !== hostname() || !Number.isInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return !liveOwners.has(owner);
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as { code?: string }).code === 'ESRCH';
  }
}

export interface RunningService {
  /** host:port of the gRPC server. */
  address: string;
  stop(): Promise<void>;
}

/** Embedded: files under DATA_DIR/blobs; distributed (STORE=mongodb): GridFS in the service's database. */
async function openBlobStore(config: IngestConfig): Promise<BlobStore> {
  if (config.STORE === 'mongodb') {
    const { createGridFsBlobStore } = await import('@kb/blob/gridfs');
    return createGridFsBlobStore({ url: config.MONGODB_URL!, database: SERVICE_NAME });
  }
  const { createFsBlobStore } = await import('@kb/blob/fs');
  return createFsBlobStore({ root: join(config.DATA_DIR, 'blobs', SERVICE_NAME), fsync: config.BLOB_FSYNC });
}

/** Composition root: adapters from config, intake use cases, the processing loop, gRPC. */
export async function startIngest(options: {
  config: IngestConfig;
  logger: Logger;
  clock?: Clock;
  ids?: IdGenerator;
}): Promise<RunningService> {
  return startService<IngestConfig>(
    {
      name: SERVICE_NAME,
      topic: topics.ingest,
      projections: ingestProjections,
      async compose(ctx) {
        const { config, store, bus, core, clock, ids, logger } = ctx;
        const blobs = await openBlobStore(config);
        await store.ensureIndex(JOBS, ['status', 'enqueued_at']);
        const pool = createExtractionPool(extractionPoolOptions(config));
        // Unique per start: a restarted process must not mistake its predecessor's leases for its own.
        const owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
        liveOwners.add(owner);
        const processor = createProcessor({
          store,
          commands: core.commands,
          blobs,
          pool,
          clock,
          logger,
          owner,
          isOwnerGone,
          // Jobs in hand: one per worker plus those read ahead for it, so no worker waits on the
          // settle-and-claim commit and the file read between two files.
          concurrency: config.INGEST_WORKERS * (1 + config.INGEST_PREFETCH),
          maxAttempts: config.INGEST_MAX_ATTEMPTS,
          retryBaseMs: config.INGEST_RETRY_BASE_MS,
          leaseMs: config.INGEST_LEASE_MS,
          pollMs: config.INGEST_POLL_MS,
          chunking: { targetChars: config.CHUNK_TARGET_CHARS, overlapChars: config.CHUNK_OVERLAP_CHARS },
          maxChunks: config.MAX_CHUNKS,
          // Chunk events are cut to what the bus carries: a large document never makes an event (or a relay batch) the broker refuses.
          maxEventBytes: bus.maxMessageBytes,
        });
        const intake = createIntake({
          store,
          commands: core.commands,
          blobs,
          ids,
          clock,
          maxUploadBytes: config.MAX_UPLOAD_BYTES,
          onQueued: () => processor.notify(),
        });
        const queries = createContentQueries(store);
        let treeConsumer: Subscription | undefined;

        return {
          server: grpcServer(ctx, (server) =>
            server.addService(serviceConstructor(loadProto('ingest.proto'), 'ingest.v1.IngestService'), ingestHandlers(intake, queries)),
          ),
          // Jobs need no bus: uploads accepted while the consumer group (re)joins, or while the broker
          // is away, are extracted meanwhile; their events wait in the outbox.
          early: [
            {
              start: () => processor.start(),
              stop: async () => {
                await processor.stop();
                liveOwners.delete(owner);
              },
            },
          ],
          parts: [
            // Moves and deletions of content nodes in the knowledge-base tree (cascade deletes of folders included).
            {
              start: async () => {
                treeConsumer = await startEventConsumer({
                  bus,
                  store,
                  groupId: KB_TREE_CONSUMER_GROUP,
                  topics: [topics.knowledgeBase],
                  handlers: kbTreeHandlers({ store, commands: core.commands, blobs, logger }),
                  logger,
                });
              },
              stop: () => treeConsumer?.stop(),
            },
          ],
          resources: [() => pool.close(), () => blobs.close()],
        };
      },
    },
    options,
  );
}
