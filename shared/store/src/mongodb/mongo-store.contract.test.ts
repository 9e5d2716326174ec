import { afterAll } from 'vitest';
import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { describeStoreContract, startMongoForTests, type MongoForTests } from '@kb/testing';
import { createMongoStore } from './mongo-store.js';

// One server per file, started on first use; each test gets its own database.
let mongo: Promise<MongoForTests> | undefined;
const server = () => (mongo ??= startMongoForTests());

afterAll(async () => {
  const started = await mongo;
  if (started && 'stop' in started) await started.stop();
});

async function dropDatabase(url: string, database: string): Promise<void> {
  const client = new MongoClient(url);
  try {
    await client.db(database).dropDatabase();
  } finally {
    await client.close();
  }
}

describeStoreContract('mongodb (replica set)', async () => {
  const started = await server();
  if ('skip' in started) return started;
  const database = `kb_store_test_${randomUUID().replaceAll('-', '')}`;
  const store = await createMongoStore({ url: started.url, database });
  return {
    store,
    cleanup: async () => {
      await store.close();
      await dropDatabase(started.url, database);
    },
  };
});
