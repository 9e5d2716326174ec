import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeBlobStoreContract } from '@kb/testing';
import { createFsBlobStore } from './fs-blob-store.js';

describeBlobStoreContract('filesystem (DATA_DIR)', async () => {
  const root = mkdtempSync(join(tmpdir(), 'kb-blobs-'));
  return {
    blobs: createFsBlobStore({ root }),
    cleanup: async () => rmSync(root, { recursive: true, force: true }),
  };
});
