import { describe, it, beforeEach, afterEach } from 'vitest';
import { skippedTest } from './skip.js';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import type { BlobStore } from '@kb/blob';

export type BlobStoreFactory = () => Promise<{ blobs: BlobStore; cleanup: () => Promise<void> } | { skip: string }>;

/** The one contract every BlobStore adapter passes (DESIGN section 8.3). */
export function describeBlobStoreContract(name: string, factory: BlobStoreFactory): void {
  describe(`BlobStore contract: ${name}`, async () => {
    const probe = await factory();
    if ('skip' in probe) {
      skippedTest('runs against this adapter', probe.skip);
      return;
    }
    await probe.cleanup();

    let blobs: BlobStore;
    let cleanup: () => Promise<void>;
    beforeEach(async () => {
      const made = await factory();
      if ('skip' in made) throw new Error(made.skip);
      ({ blobs, cleanup } = made);
    });
    afterEach(async () => cleanup());

    it('streams pieces into one blob; a source that fails stores nothing', async () => {
      const pieces = [randomBytes(100_000), randomBytes(1), randomBytes(250_000)];
      async function* source() {
        for (const p of pieces) yield p;
      }
      const info = await blobs.putStream('org-1/streamed', source());
      assert.deepEqual(info, { key: 'org-1/streamed', size_bytes: 350_001 });
      assert.deepEqual(await blobs.get('org-1/streamed'), Buffer.concat(pieces));
      async function* broken() {
        yield randomBytes(10);
        throw new Error('client went away');
      }
      await assert.rejects(blobs.putStream('org-1/broken', broken()), /client went away/);
      assert.equal(await blobs.exists('org-1/broken'), false);
    });

    it('stores bytes and reads back exactly the same bytes', async () => {
      const bytes = randomBytes(300_000);
      const info = await blobs.put('org-1/v-1', bytes);
      assert.deepEqual(info, { key: 'org-1/v-1', size_bytes: bytes.length });
      const read = await blobs.get('org-1/v-1');
      assert.ok(read);
      assert.ok(Buffer.from(bytes).equals(read));
      assert.equal(await blobs.exists('org-1/v-1'), true);
    });

    it('a local path, where the store offers one, holds what was stored under the key and names nothing once it is deleted', async (t) => {
      if (!blobs.localPath) return t.skip('this store keeps no files on the local disk');
      const bytes = randomBytes(50_000);
      await blobs.put('org-1/on-disk', bytes);
      const path = blobs.localPath('org-1/on-disk');
      assert.ok(readFileSync(path).equals(bytes));
      await blobs.delete('org-1/on-disk');
      assert.equal(existsSync(path), false);
      assert.throws(() => blobs.localPath!('../escape'), /Invalid blob key/);
    });

    it('stores an empty blob', async () => {
      await blobs.put('empty', new Uint8Array(0));
      const read = await blobs.get('empty');
      assert.ok(read);
      assert.equal(read.length, 0);
    });

    it('answers undefined and false for a key never written', async () => {
      assert.equal(await blobs.get('nothing/here'), undefined);
      assert.equal(await blobs.exists('nothing/here'), false);
      assert.equal(await blobs.delete('nothing/here'), false);
    });

    it('replaces the bytes of a key written twice', async () => {
      await blobs.put('k', Buffer.from('first version'));
      await blobs.put('k', Buffer.from('second'));
      assert.equal((await blobs.get('k'))?.toString(), 'second');
    });

    it('keeps keys apart', async () => {
      await blobs.put('a/1', Buffer.from('one'));
      await blobs.put('a/2', Buffer.from('two'));
      assert.equal((await blobs.get('a/1'))?.toString(), 'one');
      assert.equal((await blobs.get('a/2'))?.toString(), 'two');
    });

    it('deletes a blob', async () => {
      await blobs.put('gone', Buffer.from('x'));
      assert.equal(await blobs.delete('gone'), true);
      assert.equal(await blobs.get('gone'), undefined);
      assert.equal(await blobs.exists('gone'), false);
    });

    it('rejects keys that could escape the store', async () => {
      for (const key of ['../etc/passwd', 'a/../../b', '/abs', '', 'a//b', 'a/./b']) {
        await assert.rejects(blobs.put(key, Buffer.from('x')), /Invalid blob key/, key);
      }
    });
  });
}
