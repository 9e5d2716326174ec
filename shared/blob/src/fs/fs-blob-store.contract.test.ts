import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeBlobStoreContract } from '@kb/testing';
import { createFsBlobStore } from './fs-blob-store.js';

for (const fsync of [true, false])
  describeBlobStoreContract(`filesystem (DATA_DIR, fsync ${fsync ? 'on' : 'off'})`, async () => {
    const root = mkdtempSync(join(tmpdir(), 'kb-blobs-'));
    return {
      blobs: createFsBlobStore({ root, fsync }),
      cleanup: async () => rmSync(root, { recursive: true, force: true }),
    };
  });
