import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeSearchIndexContract } from '@kb/testing';
import { createSqliteSearchIndex } from './sqlite-index.js';

describeSearchIndexContract('sqlite (FTS5, sign bits scanned, floats on disk rescored)', async () => {
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
