import { MongoDBContainer } from '@testcontainers/mongodb';
import { containerRuntimeAvailable } from './docker.js';

/** Transactions need a replica set; the testcontainers module starts a single-node one. */
const MONGO_IMAGE = 'mongo:8.0';

export type MongoForTests = { url: string; stop: () => Promise<void> } | { skip: string };

/**
 * A MongoDB replica set for contract and integration tests: MONGODB_URL when set,
 * else a container when an engine is reachable, else a reason to skip.
 */
export async function startMongoForTests(): Promise<MongoForTests> {
  const external = process.env.MONGODB_URL;
  if (external) return { url: external, stop: async () => {} };
  if (!(await containerRuntimeAvailable())) {
    return { skip: 'skipped: no Docker engine (set MONGODB_URL to a replica set to run)' };
  }
  const container = await new MongoDBContainer(MONGO_IMAGE).start();
  // The replica set advertises the container's internal host name, which the
  // driver cannot reach; a direct connection talks to the mapped port only.
  const url = container.getConnectionString();
  return {
    url: `${url}${url.includes('?') ? '&' : '?'}directConnection=true`,
    stop: async () => {
      await container.stop();
    },
  };
}
