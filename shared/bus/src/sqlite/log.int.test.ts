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
      assert.equal(log.read('t', 0, 0, 100).length, 10, 'no budget: the count limit');
      assert.deepEqual(
        log.read('t', 0, 0, 100, 1000).map((m) => m.offset),
        ['0', '1', '2'],
        'stops once 1000 bytes are reached',
      );
      assert.equal(log.read('t', 0, 3, 100, 10).length, 1, 'a message larger than the budget is still read');
      assert.equal(log.read('t', 0, 8, 100, 1000).length, 2, 'the end of the partition comes first');
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
