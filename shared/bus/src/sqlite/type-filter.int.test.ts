import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventBus } from '../port.js';
import { createSqliteEventBus } from './index.js';
import { waitFor } from '@kb/testing';

/** The embedded bus passes over the messages of types a group does not want (SubscribeOptions.types). */

let dir: string;
let bus: EventBus;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'kb-bus-types-'));
  bus = createSqliteEventBus({ path: join(dir, 'bus.db'), partitions: 1, pollIntervalMs: 10 });
});
afterAll(async () => {
  await bus.close();
  rmSync(dir, { recursive: true, force: true });
});

const typed = (type: string | undefined, value: string) => ({ key: 'k', value, ...(type && { headers: { type } }) });

describe('sqlite bus type filter', () => {
  it('delivers the wanted types and untyped messages only, and commits past the others', async () => {
    await bus.ensureTopics(['typed']);
    await bus.publish('typed', [typed('a', 'a0'), typed('b', 'b1'), typed(undefined, 'plain2'), typed('a', 'a3'), typed('b', 'b4')]);
    const seen: string[] = [];
    const batches: string[][] = [];
    const first = await bus.subscribe({
      groupId: 'g',
      topics: ['typed'],
      types: ['a'],
      handler: async (m) => void seen.push(m.value),
      batchHandler: async (messages) => {
        batches.push(messages.map((m) => m.value));
        seen.push(...messages.map((m) => m.value));
        return { handled: messages.length };
      },
    });
    await waitFor(() => seen.length >= 3, 'the wanted messages');
    await bus.publish('typed', [typed('b', 'b5')]);
    await sleep(100);
    await first.stop();
    assert.deepEqual(seen, ['a0', 'plain2', 'a3']);
    assert.deepEqual(batches, [['a0', 'plain2', 'a3']], 'one batch, without the unwanted messages');

    // The same group without a filter: everything up to b5 was committed, so only what follows arrives.
    const later: string[] = [];
    const second = await bus.subscribe({ groupId: 'g', topics: ['typed'], handler: async (m) => void later.push(m.value) });
    await bus.publish('typed', [typed('b', 'b6')]);
    await waitFor(() => later.length >= 1, 'the next message');
    await sleep(50);
    await second.stop();
    assert.deepEqual(later, ['b6']);
  });
});
