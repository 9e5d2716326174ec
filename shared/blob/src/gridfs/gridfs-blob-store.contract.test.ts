import { afterAll } from 'vitest';
import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { describeBlobStoreContract, startMongoForTests, type MongoForTests } from '@kb/testing';
import { createGridFsBlobStore } from './gridfs-blob-store.js';

// One server per file, started on first use; each test gets its own database.
let mongo: Promise<MongoForTests> | undefined;
const server = () => (mongo ??= startMongoForTests());

afterAll(async () => {
  const started = await mongo;
  if (started && 'stop' in started) await started.stop();
});

describeBlobStoreContract('mongodb GridFS', async () => {
  const started = await server();
  if ('skip' in started) return started;
  const database = `kb_blob_test_${randomUUID().replaceAll('-', '')}`;
  const blobs = await createGridFsBlobStore({ url: started.url, database });
  return {
    blobs,
    cleanup: async () => {
      await blobs.close();
      const client = new MongoClient(started.url);
      try {
        await client.db(database).dropDatabase();
      } finally {
        await client.close();
      }
    },
  };
});
