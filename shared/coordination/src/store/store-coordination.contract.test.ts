import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteStore } from '@kb/store/sqlite';
import { describeCoordinationContract } from '../testing/contract.js';
import { createStoreLeaseManager, createStoreRateLimiter, createStoreSlidingRateLimiter } from './index.js';

describeCoordinationContract('store (sqlite)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kb-coordination-'));
  const store = createSqliteStore({ path: join(dir, 'store.db') });
  return {
    leases: createStoreLeaseManager({ store }),
    limiter: createStoreRateLimiter({ store }),
    sliding: createStoreSlidingRateLimiter({ store }),
    cleanup: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
