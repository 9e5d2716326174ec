import type { Logger } from 'pino';
import { contextFromTraceparent, endSpan, SpanKind, startSpan, type Clock } from '@kb/platform';
import type { Store } from '@kb/store';
import { DEFAULT_MAX_MESSAGE_BYTES } from '@kb/bus';
import type { BlobStore } from '@kb/blob';
import type { CommandBus, CommandSession } from '@kb/eventsourcing';
import { startHeartbeat } from '@kb/coordination';
import { batchChunks, contentDecider, contentStream } from '../domain/content.js';
import { chunkBlocks, type ChunkingOptions } from '../domain/chunking.js';
import type { ExtractionPool } from '../extract/pool.js';
import { ExtractionError, FORMAT_NAMES } from '../extract/types.js';
import { JOBS, type JobDoc } from './jobs.js';
import { inQueueOrder } from './claim-order.js';

export interface ProcessorOptions {
  store: Store;
  commands: CommandBus;
  blobs: BlobStore;
  pool: ExtractionPool;
  clock: Clock;
  logger: Logger;
  /** Identifies this process in job leases. */
  owner: string;
  /**
   * Jobs held at once: those the extraction workers are on and those claimed and read
   * ahead for them (waiting in the pool's queue; their leases are renewed like the others').
   */
  concurrency: number;
  maxAttempts: number;
  retryBaseMs: number;
  /** A job's lease: short, renewed by a heartbeat (a third of it) while its worker lives. */
  leaseMs: number;
  /**
   * Whether the process that owns a lease is known to be gone (a previous start of this
   * process on the same host): its running jobs are taken at once on start instead of
   * when their lease runs out.
   */
  isOwnerGone?: (owner: string) => boolean;
  pollMs: number;
  chunking: ChunkingOptions;
  /** Most chunks one item may be stored as; more fails the item. */
  maxChunks?: number;
  /** Most bytes of one content.chunks_added event on the bus (the bus's message limit; default 1,000,000). */
  maxEventBytes?: number;
}

const SCAN = 200;
const PAGE = 20;

type Outcome = { chunks: ReturnType<typeof chunkBlocks>; characters: number; format: string } | { error: ExtractionError };

/** When a job may be taken: queued and due, or running under a lease that has run out (its worker died). */
export const isDue = (job: JobDoc, now: number): boolean =>
  job.status === 'queued' ? job.available_at <= now : (job.lease_expires_at ?? 0) <= now;

/** Delay before the next attempt: base, 2 x base, 4 x base, ... */
export const retryDelay = (attempts: number, baseMs: number): number => baseMs * 2 ** Math.max(0, attempts - 1);

/**
 * The processing loop: claims due jobs under a lease (processing_started),
 * extracts in the worker pool, chunks, and records the outcome (chunks_added +
 * extracted, or failed). Transient failures go back to the queue with
 * exponential backoff until the attempts run out; permanent ones fail at once.
 * A job's lease is short and renewed by a heartbeat while its worker lives, so
 * a job whose worker died is taken again within one lease (by this process after
 * a restart, or by another replica); on start, jobs of a previous start of this
 * process are taken at once. Nothing stays queued or processing for ever.
 */
export function createProcessor(options: ProcessorOptions) {
  const { store, commands, blobs, pool, clock, logger } = options;
  let running = false;
  let inflight = 0;
  const active = new Set<Promise<void>>();
  let wake: (() => void) | undefined;
  let loop: Promise<void> | undefined;

  /** The context of the job's events: its organization, and the trace of the request that queued it (or of the span given). */
  const system = (job: Pick<JobDoc, 'org_id' | 'trace'>, trace = job.trace) => ({
    metadata: { org_id: job.org_id, actor: `system:ingest`, ...(trace && { trace }) },
  });

  /**
   * A span of the job's life in the trace of the request that queued it. `startTime` when it
   * began earlier (its time in the queue); ended by the caller.
   */
  const jobSpan = (job: JobDoc, step: 'queued' | 'extracting' | 'stored', startTime?: number) =>
    startSpan(
      `ingest job ${step}`,
      {
        kind: SpanKind.INTERNAL,
        attributes: { 'kb.content_id': job.content_id, 'kb.version_id': job.version_id, 'kb.job.attempt': job.attempts },
        ...(startTime !== undefined && { startTime }),
      },
      contextFromTraceparent(job.trace),
    );

  /**
   * Inside an open transaction: takes the oldest due job, marks it running under
   * this process's lease and records the attempt (its events carry the job's
   * organization). Reads the queue a page at a time: the due job is nearly always
   * among the first, and a long queue made every claim parse SCAN documents.
   */
  async function claimWithin(session: CommandSession): Promise<JobDoc | undefined> {
    const now = clock.now().getTime();
    const byEnqueued = [{ field: 'enqueued_at', order: 'asc' as const }];
    // Running jobs are few (the worker slots of live processes, and any abandoned); due once their lease ran out.
    const expired = (await session.tx.find<JobDoc>(JOBS, { where: { status: 'running' } })).filter((job) => isDue(job, now));
    const queuedPage = (offset: number) =>
      session.tx.find<JobDoc>(JOBS, { where: { status: 'queued' }, sort: byEnqueued, limit: PAGE, offset });
    for await (const job of inQueueOrder(expired, queuedPage, PAGE, SCAN)) {
      if (!isDue(job, now)) continue;
      const attempt = job.attempts + 1;
      // Its wait in the queue (since it was queued, or since its last attempt was due), ending as processing starts.
      const queued = jobSpan({ ...job, attempts: attempt }, 'queued', job.attempts === 0 ? job.enqueued_at : job.available_at);
      const { events } = await session
        .withContext(system(job, queued.traceparent))
        .execute(contentDecider, contentStream(job.content_id), {
          type: 'start_processing',
          version_id: job.version_id,
          attempt,
          at: new Date(now).toISOString(),
        })
        .finally(() => endSpan(queued.span));
      if (events.length === 0) {
        // Deleted content, or a version already finished: nothing left to do.
        await session.tx.delete(JOBS, job.id);
        continue;
      }
      const next: JobDoc = {
        ...job,
        status: 'running',
        attempts: attempt,
        lease_owner: options.owner,
        lease_expires_at: now + options.leaseMs,
      };
      await session.tx.put(JOBS, next);
      return next;
    }
    return undefined;
  }

  /** Takes the oldest due job in a transaction of its own (when a worker slot is free). */
  const claim = (): Promise<JobDoc | undefined> => commands.transaction(system({ org_id: '' }), claimWithin);

  /**
   * Records the outcome, only while this process still holds the job's lease, and
   * takes the next due job for the freed worker slot in the same transaction (one
   * commit per file instead of two); none once stopping.
   */
  async function settle(job: JobDoc, outcome: Outcome): Promise<JobDoc | undefined> {
    // The outcome's events (chunks_added, extracted, failed) carry this span; the next job claimed here its own trace.
    const stored = jobSpan(job, 'stored');
    const context = system(job, stored.traceparent);
    let failure: unknown;
    try {
      return await commands.transaction(context, async (session) => {
        await record(session, job, outcome);
        return running ? claimWithin(session) : undefined;
      });
    } catch (err) {
      // Whatever failed (the claim, perhaps), the outcome is still recorded on its own.
      logger.warn({ err, version_id: job.version_id }, 'ingest settle with the next claim failed; settling alone');
      try {
        await commands.transaction(context, (session) => record(session, job, outcome));
      } catch (error) {
        failure = error;
        throw error;
      }
      return undefined;
    } finally {
      endSpan(stored.span, failure);
    }
  }

  async function record(session: CommandSession, job: JobDoc, outcome: Outcome): Promise<void> {
    const current = await session.tx.get<JobDoc>(JOBS, job.id);
    if (!current || current.lease_owner !== options.owner || current.attempts !== job.attempts) return;
    const at = clock.now();
    const stream = contentStream(job.content_id);
    if ('chunks' in outcome) {
      await session.execute(contentDecider, stream, {
        type: 'complete',
        version_id: job.version_id,
        chunks: outcome.chunks,
        characters: outcome.characters,
        format: outcome.format,
        max_event_bytes: options.maxEventBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
        at: at.toISOString(),
      });
      await session.tx.delete(JOBS, job.id);
      return;
    }
    const { error } = outcome;
    if (error.permanent || job.attempts >= options.maxAttempts) {
      const reason = error.permanent ? error.message : `${error.message} (gave up after ${job.attempts} attempts)`;
      await session.execute(contentDecider, stream, {
        type: 'fail',
        version_id: job.version_id,
        reason,
        attempts: job.attempts,
        at: at.toISOString(),
      });
      await session.tx.delete(JOBS, job.id);
      return;
    }
    const retry: JobDoc = {
      ...current,
      status: 'queued',
      available_at: at.getTime() + retryDelay(job.attempts, options.retryBaseMs),
      last_error: error.message,
    };
    delete retry.lease_owner;
    delete retry.lease_expires_at;
    await session.tx.put(JOBS, retry);
  }

  /** Extends the job's lease while this worker still holds this attempt of it. */
  const renewLease = (job: JobDoc) => () =>
    store.transaction(async (tx) => {
      const current = await tx.get<JobDoc>(JOBS, job.id);
      if (!current || current.status !== 'running' || current.lease_owner !== options.owner || current.attempts !== job.attempts)
        return false;
      await tx.put(JOBS, { ...current, lease_expires_at: clock.now().getTime() + options.leaseMs });
      return true;
    });

  /** Makes the running jobs of owners known to be gone due now (called on start). */
  async function recover(): Promise<number> {
    if (!options.isOwnerGone) return 0;
    const running = await store.find<JobDoc>(JOBS, { where: { status: 'running' } });
    let taken = 0;
    for (const job of running) {
      if (!job.lease_owner || job.lease_owner === options.owner || !options.isOwnerGone(job.lease_owner)) continue;
      const freed = await store.transaction(async (tx) => {
        const current = await tx.get<JobDoc>(JOBS, job.id);
        if (!current || current.status !== 'running' || current.lease_owner !== job.lease_owner) return false;
        await tx.put(JOBS, { ...current, lease_expires_at: 0 });
        return true;
      });
      if (freed) taken++;
    }
    if (taken > 0) logger.info({ jobs: taken }, 'ingest jobs of a previous process taken over');
    return taken;
  }

  /** Works through jobs in one worker slot: each settle hands over the next job it claimed. */
  async function process(first: JobDoc): Promise<void> {
    for (let job: JobDoc | undefined = first; job;) job = await processOne(job);
  }

  async function processOne(job: JobDoc): Promise<JobDoc | undefined> {
    const heartbeat = startHeartbeat({
      renew: renewLease(job),
      ttlMs: options.leaseMs,
      clock,
      onLost: () => logger.warn({ version_id: job.version_id }, 'ingest job lease lost; another worker has taken the job'),
      onError: (err) => logger.warn({ err, version_id: job.version_id }, 'ingest job lease renewal failed'),
    });
    try {
      return await attempt(job);
    } finally {
      await heartbeat.stop();
    }
  }

  /**
   * The job's original for the pool: where it lies when the blob store keeps files on this
   * machine's disk (the worker reads it, so this thread neither reads nor copies it, and a
   * job read ahead holds no bytes), else its bytes.
   */
  async function fileOf(job: JobDoc): Promise<{ path: string } | { bytes: Buffer }> {
    if (blobs.localPath) return { path: blobs.localPath(job.blob_key) };
    const bytes = await blobs.get(job.blob_key);
    if (!bytes) throw new ExtractionError('The uploaded file is missing from storage', true);
    return { bytes };
  }

  async function attempt(job: JobDoc): Promise<JobDoc | undefined> {
    let outcome: Outcome;
    const extracting = jobSpan(job, 'extracting');
    try {
      const result = await pool.extract({
        ...(await fileOf(job)),
        filename: job.filename,
        ...(job.claimed_format && { format: job.claimed_format }),
      });
      if (job.allowed_formats && !job.allowed_formats.includes(result.format)) {
        throw new ExtractionError(`"${job.filename}" is ${FORMAT_NAMES[result.format]}, which is not accepted here`, true);
      }
      const chunks = chunkBlocks(result.blocks, options.chunking);
      if (options.maxChunks !== undefined && chunks.length > options.maxChunks) {
        throw new ExtractionError(
          `The file would be stored as ${chunks.length.toLocaleString('en-US')} chunks, over the limit of ${options.maxChunks.toLocaleString('en-US')} per file; split it into smaller files`,
          true,
        );
      }
      // Cut into events here, so a chunk no event can carry fails the item instead of its recording.
      try {
        batchChunks(chunks, options.maxEventBytes ?? DEFAULT_MAX_MESSAGE_BYTES);
      } catch (err) {
        throw new ExtractionError((err as Error).message, true);
      }
      const characters = result.blocks.reduce((n, b) => n + b.text.length, 0);
      outcome = { chunks, characters, format: result.format };
    } catch (err) {
      const error = err instanceof ExtractionError ? err : new ExtractionError(`Processing failed: ${(err as Error).message}`, false);
      logger.info(
        { content_id: job.content_id, version_id: job.version_id, attempt: job.attempts, reason: error.message },
        'ingest attempt failed',
      );
      outcome = { error };
    }
    if ('error' in outcome) extracting.span.setAttribute('kb.job.error', outcome.error.message);
    endSpan(extracting.span);
    return settle(job, outcome);
  }

  function track(job: JobDoc) {
    inflight++;
    const task = process(job)
      .catch((err: unknown) =>
        logger.error({ err, version_id: job.version_id }, 'ingest job could not be settled; its lease will expire and it is retried'),
      )
      .finally(() => {
        inflight--;
        active.delete(task);
        wake?.();
      });
    active.add(task);
  }

  async function run(): Promise<void> {
    while (running) {
      let claimed = false;
      try {
        while (running && inflight < options.concurrency) {
          const job = await claim();
          if (!job) break;
          claimed = true;
          track(job);
        }
      } catch (err) {
        logger.error({ err }, 'ingest claim failed');
      }
      if (!running) break;
      if (claimed && inflight < options.concurrency) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, options.pollMs);
        wake = () => {
          clearTimeout(timer);
          wake = undefined;
          resolve();
        };
      });
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      loop = recover()
        .catch((err: unknown) => logger.error({ err }, 'ingest recovery of abandoned jobs failed'))
        .then(() => run());
    },
    /** New work was queued: look now instead of at the next poll. */
    notify() {
      wake?.();
    },
    /** Stops claiming and waits for the jobs in hand. */
    async stop() {
      running = false;
      wake?.();
      await loop;
      await Promise.allSettled([...active]);
    },
  };
}

export type Processor = ReturnType<typeof createProcessor>;
