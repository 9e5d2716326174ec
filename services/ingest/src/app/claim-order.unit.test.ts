import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import type { JobDoc } from './jobs.js';
import { inQueueOrder } from './claim-order.js';

const job = (id: string, enqueued_at: number, status: JobDoc['status'] = 'queued'): JobDoc => ({
  id,
  content_id: id,
  version_id: id,
  org_id: 'o',
  blob_key: id,
  filename: `${id}.txt`,
  status,
  attempts: 0,
  available_at: 0,
  enqueued_at,
});

async function collect(gen: AsyncGenerator<JobDoc>, limit = 100): Promise<string[]> {
  const out: string[] = [];
  for await (const j of gen) {
    out.push(j.id);
    if (out.length >= limit) break;
  }
  return out;
}

describe('claim order', () => {
  const queued = [job('q1', 10), job('q2', 20), job('q3', 20), job('q4', 40), job('q5', 50)];
  const pages = (size: number) => {
    const reads: number[] = [];
    const read = async (offset: number) => (reads.push(offset), queued.slice(offset, offset + size));
    return { reads, read };
  };

  it('merges the expired running jobs into the queued ones by enqueue time, then id', async () => {
    const { read } = pages(2);
    const expired = [job('r2', 45, 'running'), job('r1', 5, 'running'), job('q2x', 20, 'running')];
    assert.deepEqual(await collect(inQueueOrder(expired, read, 2, 100)), ['r1', 'q1', 'q2', 'q2x', 'q3', 'q4', 'r2', 'q5']);
  });

  it('reads pages only as far as the claim looks, and at most `scan` queued jobs', async () => {
    const lazy = pages(2);
    assert.deepEqual(await collect(inQueueOrder([], lazy.read, 2, 100), 1), ['q1']);
    assert.deepEqual(lazy.reads, [0], 'one page for the first job');
    const capped = pages(2);
    const late = job('r9', 99, 'running');
    assert.deepEqual(await collect(inQueueOrder([late], capped.read, 2, 4)), ['q1', 'q2', 'q3', 'q4', 'r9']);
    assert.deepEqual(capped.reads, [0, 2], 'stops after `scan` queued jobs; the expired ones still come');
  });

  it('gives the expired jobs alone when nothing is queued', async () => {
    const empty = async () => [];
    assert.deepEqual(await collect(inQueueOrder([job('r1', 3, 'running'), job('r0', 1, 'running')], empty, 20, 200)), ['r0', 'r1']);
  });
});
