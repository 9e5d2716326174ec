import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeSearchIndexContract } from '@kb/testing';
import { createSqliteSearchIndex } from './sqlite-index.js';

describeSearchIndexContract('sqlite (FTS5 + sqlite-vec bits, rescored floats on disk)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kb-search-'));
  const index = createSqliteSearchIndex({ path: join(dir, 'search.db') });
  return {
    index,
    cleanup: async () => {
      await index.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
