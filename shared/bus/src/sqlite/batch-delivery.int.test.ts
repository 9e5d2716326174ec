import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { BatchOutcome, EventBus, ReceivedMessage } from '../port.js';
import { createSqliteEventBus } from './index.js';
import { waitFor } from '@kb/testing';

/** The embedded bus's batch handler: batches of a partition in order, partial progress, failures as for `handler`. */

let dir: string;
let bus: EventBus;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'kb-bus-batch-'));
  bus = createSqliteEventBus({ path: join(dir, 'bus.db'), partitions: 1, pollIntervalMs: 10, retryBackoffMs: { initial: 50, max: 100 } });
});
afterAll(async () => {
  await bus.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A topic holding `n` messages (values 0..n-1) before anyone subscribes, so the first read finds them all. */
async function topicWith(n: number): Promise<string> {
  const topic = `batch.${randomUUID()}`;
  await bus.ensureTopics([topic]);
  await bus.publish(
    topic,
    Array.from({ length: n }, (_, i) => ({ key: 'k', value: String(i) })),
  );
  return topic;
}

describe('sqlite bus batch delivery', () => {
  it('hands the messages in hand to the batch handler in order, continuing after partial progress', async () => {
    const topic = await topicWith(10);
    const batches: string[][] = [];
    const singles: string[] = [];
    const sub = await bus.subscribe({
      groupId: 'g',
      topics: [topic],
      handler: async (m) => void singles.push(m.value),
      // Takes three at a time at most.
      batchHandler: async (messages): Promise<BatchOutcome> => {
        batches.push(messages.map((m) => m.value));
        return { handled: Math.min(3, messages.length) };
      },
    });
    try {
      await waitFor(() => [...batches.flatMap((b) => b.slice(0, 3)), ...singles].length >= 10, 'every message');
      await sleep(100);
      const handled = [...batches.flatMap((b) => b.slice(0, 3)), ...singles];
      assert.deepEqual(
        handled,
        Array.from({ length: 10 }, (_, i) => String(i)),
        'each once, in order',
      );
      assert.deepEqual(batches[0], handled, 'the first batch offered is the whole read');
      assert.deepEqual(batches[1]?.[0], '3', 'the next one starts after the handled part');
      assert.deepEqual(singles, ['9'], 'a lone message goes to handler');
    } finally {
      await sub.stop();
    }
    // Committed: the group resumes after the last message.
    const again: ReceivedMessage[] = [];
    const resumed = await bus.subscribe({ groupId: 'g', topics: [topic], handler: async (m) => void again.push(m) });
    await sleep(150);
    await resumed.stop();
    assert.equal(again.length, 0);
  });

  it('redelivers the failed message after a backoff, keeping what was handled before it', async () => {
    const topic = await topicWith(6);
    const seen: { values: string[]; at: number }[] = [];
    let failures = 0;
    const handled: string[] = [];
    const sub = await bus.subscribe({
      groupId: 'g',
      topics: [topic],
      handler: async (m) => void handled.push(m.value),
      batchHandler: async (messages) => {
        seen.push({ values: messages.map((m) => m.value), at: Date.now() });
        failures++;
        if (failures === 1) {
          const failAt = messages.findIndex((m) => m.value === '2');
          handled.push(...messages.slice(0, failAt).map((m) => m.value));
          return { handled: failAt, error: new Error('message 2 failed') };
        }
        // Then a rejection of the whole batch once: nothing of it is handled.
        if (failures === 2) throw new Error('the store is busy');
        handled.push(...messages.map((m) => m.value));
        return { handled: messages.length };
      },
    });
    try {
      await waitFor(() => handled.length >= 6, 'every message');
      await sleep(100);
      assert.deepEqual(handled, ['0', '1', '2', '3', '4', '5'], 'each handled once, in order');
      assert.deepEqual(
        seen.map((s) => s.values[0]),
        ['0', '2', '2'],
        'after the failure and the rejection the batch starts at the failed message',
      );
      assert.ok(seen[1]!.at - seen[0]!.at >= 40, 'after a backoff');
      assert.ok(seen[2]!.at - seen[1]!.at >= 40, 'after a backoff');
    } finally {
      await sub.stop();
    }
  });
});
