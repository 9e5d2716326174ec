import type { DocumentWriter } from '@kb/store';
import { traceparentOf } from '@kb/platform';
import type { Format } from '../extract/types.js';

/**
 * The processing queue: one job per accepted version, written in the same
 * transaction as the version's event, removed when the version completes or
 * fails. Not a projection: leases and retry times are operational state.
 */
export const JOBS = 'ingest_jobs';

export interface JobDoc {
  id: string;
  content_id: string;
  version_id: string;
  org_id: string;
  blob_key: string;
  filename: string;
  /** The format the name (or the raw intake) claims; the bytes decide. */
  claimed_format?: Format;
  /** Formats the intake surface accepts; a file whose bytes are another format fails. */
  allowed_formats?: Format[];
  /** queued: waiting (possibly for a retry time); running: leased by a worker. */
  status: 'queued' | 'running';
  attempts: number;
  /** Epoch ms before which a queued job is not taken (retry backoff). */
  available_at: number;
  lease_owner?: string;
  /** Epoch ms after which a running job is considered abandoned and taken again. */
  lease_expires_at?: number;
  last_error?: string;
  enqueued_at: number;
  /** W3C traceparent of the request that queued it: the job's spans and events continue its trace. */
  trace?: string;
}

export async function enqueueJob(
  tx: DocumentWriter,
  job: Pick<JobDoc, 'content_id' | 'version_id' | 'org_id' | 'blob_key' | 'filename' | 'claimed_format' | 'allowed_formats'>,
  now: number,
): Promise<void> {
  const doc: JobDoc = { id: job.version_id, ...job, status: 'queued', attempts: 0, available_at: now, enqueued_at: now };
  if (doc.claimed_format === undefined) delete doc.claimed_format;
  // Queued inside the request's span (the gRPC call that accepted the upload), when telemetry is on.
  const trace = traceparentOf();
  if (trace) doc.trace = trace;
  await tx.insert(JOBS, doc);
}
