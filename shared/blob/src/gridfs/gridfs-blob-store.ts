import { GridFSBucket, MongoClient, type Db } from 'mongodb';
import { checkBlobKey, type BlobStore } from '../port.js';

/**
 * MongoDB GridFS, one bucket per service database. The key is the GridFS
 * filename; a put uploads the new file first and then removes older files of the
 * same name, so a reader always finds a complete one.
 */
export async function createGridFsBlobStore(options: { url: string; database: string; bucket?: string }): Promise<BlobStore> {
  const client = new MongoClient(options.url);
  await client.connect();
  const db: Db = client.db(options.database);
  const bucket = new GridFSBucket(db, { bucketName: options.bucket ?? 'blobs' });

  const filesOf = (key: string) => bucket.find({ filename: key }, { sort: { uploadDate: -1, _id: -1 } }).toArray();

  return {
    async put(key, bytes) {
      checkBlobKey(key);
      const older = await filesOf(key);
      await new Promise<void>((resolve, reject) => {
        const upload = bucket.openUploadStream(key);
        upload.once('error', reject);
        upload.once('finish', () => resolve());
        upload.end(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      });
      for (const file of older) await bucket.delete(file._id);
      return { key, size_bytes: bytes.byteLength };
    },
    async putStream(key, source) {
      checkBlobKey(key);
      const older = await filesOf(key);
      const upload = bucket.openUploadStream(key);
      let size = 0;
      try {
        for await (const piece of source) {
          size += piece.byteLength;
          const chunk = Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
          if (!upload.write(chunk)) await new Promise<void>((resolve) => upload.once('drain', () => resolve()));
        }
        await new Promise<void>((resolve, reject) => {
          upload.once('error', reject);
          upload.end(() => resolve());
        });
      } catch (err) {
        await upload.abort().catch(() => undefined);
        throw err;
      }
      for (const file of older) await bucket.delete(file._id);
      return { key, size_bytes: size };
    },
    async get(key) {
      checkBlobKey(key);
      const [latest] = await filesOf(key);
      if (!latest) return undefined;
      const parts: Buffer[] = [];
      for await (const part of bucket.openDownloadStream(latest._id)) parts.push(part as Buffer);
      return Buffer.concat(parts);
    },
    async delete(key) {
      checkBlobKey(key);
      const files = await filesOf(key);
      for (const file of files) await bucket.delete(file._id);
      return files.length > 0;
    },
    async exists(key) {
      checkBlobKey(key);
      return (await filesOf(key)).length > 0;
    },
    async close() {
      await client.close();
    },
  };
}
