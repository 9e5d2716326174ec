import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openBusDatabase } from './database.js';
import { createLog } from './log.js';

describe('embedded log reads', () => {
  it('stop at the byte budget of a batch, and always return at least one message', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kb-log-'));
    const db = openBusDatabase(join(dir, 'bus.db'));
    try {
      const log = createLog(db);
      log.ensureTopics(['t'], 1);
      const big = 'x'.repeat(400);
      log.append(
        't',
        Array.from({ length: 10 }, (_, i) => ({ key: 'k', value: `${i}${big}` })),
        new Date().toISOString(),
      );
      assert.equal(log.read('t', 0, 0, 100).messages.length, 10, 'no budget: the count limit');
      assert.deepEqual(
        log.read('t', 0, 0, 100, 1000).messages.map((m) => m.offset),
        ['0', '1', '2'],
        'stops once 1000 bytes are reached',
      );
      assert.equal(log.read('t', 0, 3, 100, 10).messages.length, 1, 'a message larger than the budget is still read');
      assert.equal(log.read('t', 0, 8, 100, 1000).messages.length, 2, 'the end of the partition comes first');
      assert.deepEqual(log.read('t', 0, 10, 100), { messages: [], end: undefined }, 'nothing after the end');
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('pass over the messages of types the reader does not want, without their values, and say where they ended', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kb-log-'));
    const db = openBusDatabase(join(dir, 'bus.db'));
    try {
      const log = createLog(db);
      log.ensureTopics(['t'], 1);
      const typed = (type: string | undefined, value: string) => ({ key: 'k', value, ...(type && { headers: { type } }) });
      log.append(
        't',
        [typed('a', 'a0'), typed('b', 'b1'), typed(undefined, 'plain2'), typed('a', 'a3'), typed('b', 'b4'), typed('b', 'b5')],
        new Date().toISOString(),
      );
      const wanted = log.read('t', 0, 0, 100, Infinity, ['a']);
      assert.deepEqual(
        wanted.messages.map((m) => [m.offset, m.value]),
        [
          ['0', 'a0'],
          ['2', 'plain2'],
          ['3', 'a3'],
        ],
        'wanted types and messages without a type',
      );
      assert.equal(wanted.end, 6, 'the unwanted messages at the end were looked at too');
      assert.deepEqual(log.read('t', 0, 4, 100, Infinity, ['a']), { messages: [], end: 6 });
      assert.equal(log.read('t', 0, 0, 100, Infinity, ['a', 'b']).messages.length, 6);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
