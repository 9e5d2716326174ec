import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeEventBusContract } from '@kb/testing';
import { createSqliteEventBus, type SqliteEventBusOptions } from './index.js';

await describeEventBusContract('sqlite (file, WAL)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kb-sqlite-bus-'));
  const options: SqliteEventBusOptions = {
    path: join(dir, 'bus.db'),
    pollIntervalMs: 10,
    retryBackoffMs: { initial: 20, max: 200 },
  };
  const bus = createSqliteEventBus(options);
  return {
    bus,
    // A second connection to the same file stands in for another process.
    newBus: async () => createSqliteEventBus(options),
    cleanup: async () => {
      await bus.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
