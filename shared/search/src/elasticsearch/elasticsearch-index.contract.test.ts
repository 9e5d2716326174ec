import { afterAll } from 'vitest';
import { randomUUID } from 'node:crypto';
import { containerRuntimeAvailable, describeSearchIndexContract } from '@kb/testing';
import { GenericContainer, Wait, type StartedTestContainer } from 'testcontainers';
import { createElasticsearchIndex } from './elasticsearch-index.js';

// One server per file: ELASTICSEARCH_URL when set, else a container when an engine is reachable, else skipped.
let server: Promise<{ url: string; container?: StartedTestContainer } | { skip: string }> | undefined;
const start = () =>
  (server ??= (async () => {
    if (process.env.ELASTICSEARCH_URL) return { url: process.env.ELASTICSEARCH_URL };
    if (!(await containerRuntimeAvailable())) return { skip: 'skipped: no Docker engine (set ELASTICSEARCH_URL to run)' };
    const container = await new GenericContainer('docker.elastic.co/elasticsearch/elasticsearch:8.19.2')
      .withEnvironment({ 'discovery.type': 'single-node', 'xpack.security.enabled': 'false', ES_JAVA_OPTS: '-Xms512m -Xmx512m' })
      .withExposedPorts(9200)
      .withWaitStrategy(Wait.forHttp('/_cluster/health?wait_for_status=yellow', 9200))
      .withStartupTimeout(180_000)
      .start();
    return { url: `http://${container.getHost()}:${container.getMappedPort(9200)}`, container };
  })());

afterAll(async () => {
  const started = await server;
  if (started && 'container' in started && started.container) await started.container.stop();
});

describeSearchIndexContract('elasticsearch (BM25 + dense_vector kNN)', async () => {
  const started = await start();
  if ('skip' in started) return started;
  const index = createElasticsearchIndex({ url: started.url, index: `kb-test-${randomUUID()}`, refresh: true });
  return { index, cleanup: async () => index.close() };
});
