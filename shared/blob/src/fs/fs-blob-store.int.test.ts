import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFsBlobStore } from './fs-blob-store.js';

describe('fs blob store folders', () => {
  it('writes into a folder removed after it was first made (the store remembers the folders it made)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'kb-blobs-'));
    try {
      const blobs = createFsBlobStore({ root, fsync: false });
      await blobs.put('org/a', Buffer.from('a'));
      rmSync(join(root, 'org'), { recursive: true });
      await blobs.put('org/b', Buffer.from('b'));
      assert.equal((await blobs.get('org/b'))?.toString(), 'b');
      rmSync(join(root, 'org'), { recursive: true });
      await blobs.putStream(
        'org/c',
        (async function* () {
          yield Buffer.from('c');
        })(),
      );
      assert.equal((await blobs.get('org/c'))?.toString(), 'c');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
