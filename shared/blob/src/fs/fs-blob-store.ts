import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { checkBlobKey, type BlobStore } from '../port.js';

const isMissing = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

/**
 * Files under a root directory (DATA_DIR/blobs). A write goes to a temporary file
 * that is renamed into place, so a crash never leaves a half blob under the
 * final name. With `fsync` (the default) the file is flushed to the disk before
 * the rename, so it also survives power loss; without, it survives any process
 * crash (the kernel holds the written pages), as the SQLite store does with
 * synchronous=NORMAL, and a write costs no disk flush.
 */
export function createFsBlobStore(options: { root: string; fsync?: boolean }): BlobStore {
  const fsync = options.fsync ?? true;
  const pathOf = (key: string) => {
    checkBlobKey(key);
    return join(options.root, ...key.split('/'));
  };
  // Folders this store made or found: an organization's files share one, and a
  // mkdir per write was a syscall (and a thread-pool round trip) per upload.
  const folders = new Set<string>();
  /** Opens a new file for writing, making its folder the first time (and again if it was removed since). */
  async function create(path: string) {
    const folder = dirname(path);
    if (!folders.has(folder)) {
      await mkdir(folder, { recursive: true });
      if (folders.size >= 10_000) folders.clear();
      folders.add(folder);
    }
    const temp = `${path}.${randomUUID()}.part`;
    try {
      return { temp, handle: await open(temp, 'w') };
    } catch (err) {
      if (!isMissing(err)) throw err;
      folders.delete(folder);
      await mkdir(folder, { recursive: true });
      return { temp, handle: await open(temp, 'w') };
    }
  }
  return {
    async put(key, bytes) {
      const path = pathOf(key);
      const { temp, handle } = await create(path);
      try {
        await handle.writeFile(bytes);
        if (fsync) await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, path);
      return { key, size_bytes: bytes.byteLength };
    },
    async putStream(key, source) {
      const path = pathOf(key);
      const { temp, handle } = await create(path);
      let size = 0;
      try {
        for await (const piece of source) {
          await handle.write(piece);
          size += piece.byteLength;
        }
        if (fsync) await handle.sync();
      } catch (err) {
        await handle.close();
        await rm(temp, { force: true });
        throw err;
      }
      await handle.close();
      await rename(temp, path);
      return { key, size_bytes: size };
    },
    async get(key) {
      try {
        return await readFile(pathOf(key));
      } catch (err) {
        if (isMissing(err)) return undefined;
        throw err;
      }
    },
    async delete(key) {
      const path = pathOf(key);
      try {
        await stat(path);
      } catch (err) {
        if (isMissing(err)) return false;
        throw err;
      }
      await rm(path, { force: true });
      return true;
    },
    async exists(key) {
      try {
        return (await stat(pathOf(key))).isFile();
      } catch (err) {
        if (isMissing(err)) return false;
        throw err;
      }
    },
    localPath: pathOf,
    async close() {},
  };
}
