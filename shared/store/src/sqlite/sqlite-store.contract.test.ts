import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeStoreContract } from '@kb/testing';
import { createSqliteStore } from './sqlite-store.js';

describeStoreContract('sqlite (file, WAL)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kb-store-'));
  const store = createSqliteStore({ path: join(dir, 'store.db') });
  return {
    store,
    cleanup: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
