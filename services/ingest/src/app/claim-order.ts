import type { JobDoc } from './jobs.js';

/** Queue order: the oldest enqueued first, then by id (the order the queue is read in). */
export const queueOrder = (a: JobDoc, b: JobDoc): number => a.enqueued_at - b.enqueued_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * The jobs a claim looks at, in queue order: the queued ones read a page at a
 * time (at most `scan` of them), with the running jobs whose lease ran out
 * merged in where they belong. Two reads by status follow the (status,
 * enqueued_at) index; one read of both statuses made SQLite sort the whole
 * queue on every claim.
 */
export async function* inQueueOrder(
  expired: readonly JobDoc[],
  queuedPage: (offset: number) => Promise<JobDoc[]>,
  page: number,
  scan: number,
): AsyncGenerator<JobDoc> {
  const taken = [...expired].sort(queueOrder);
  let next = 0;
  for (let offset = 0; offset < scan; offset += page) {
    const jobs = await queuedPage(offset);
    for (const job of jobs) {
      while (next < taken.length && queueOrder(taken[next]!, job) <= 0) yield taken[next++]!;
      yield job;
    }
    if (jobs.length < page) break;
  }
  while (next < taken.length) yield taken[next++]!;
}
