import { afterAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { containerRuntimeAvailable, describeSearchIndexContract, skippedTest } from '@kb/testing';
import { GenericContainer, Wait, type StartedTestContainer } from 'testcontainers';
import { createElasticsearchIndex, type ElasticsearchAnalysis } from './elasticsearch-index.js';

// One server per file: ELASTICSEARCH_URL when set (CI starts one with scripts/elasticsearch.sh),
// else a container when an engine is reachable, else skipped.
let server: Promise<{ url: string; container?: StartedTestContainer } | { skip: string }> | undefined;
const start = () =>
  (server ??= (async () => {
    if (process.env.ELASTICSEARCH_URL) return { url: process.env.ELASTICSEARCH_URL };
    if (!(await containerRuntimeAvailable()))
      return { skip: 'skipped: ELASTICSEARCH_URL is not set and no Docker engine (scripts/elasticsearch.sh start starts a node)' };
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

/** A fresh index per test, dropped afterwards (the node outlives the suite). */
const factory = (analysis?: ElasticsearchAnalysis) => async () => {
  const started = await start();
  if ('skip' in started) return started;
  const name = `kb-test-${randomUUID()}`;
  const index = createElasticsearchIndex({ url: started.url, index: name, refresh: true, ...(analysis && { analysis }) });
  return {
    index,
    cleanup: async () => {
      await index.close();
      await fetch(`${started.url}/${name}`, { method: 'DELETE' });
    },
  };
};

// Porter stemming by the node where it has analysis-common, client stems where it has not.
describeSearchIndexContract('elasticsearch (BM25 + dense_vector kNN)', factory());
// The fallback, on any node.
describeSearchIndexContract('elasticsearch with client stems (a node without analysis-common)', factory('client-stems'));

describe('elasticsearch index analysis', async () => {
  const started = await start();
  if ('skip' in started) {
    skippedTest('picks the analysis the node supports', started.skip);
    return;
  }
  it('stems by the node when it has porter_stem, else by the client, and says which', async () => {
    const probe = await fetch(`${started.url}/_analyze`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tokenizer: 'standard', filter: ['porter_stem'], text: 'running' }),
    });
    const name = `kb-test-${randomUUID()}`;
    const index = createElasticsearchIndex({ url: started.url, index: name, refresh: true });
    try {
      assert.equal(await index.analysis(), probe.ok ? 'porter' : 'client-stems');
      // Either way a stemmed form finds the other.
      await index.indexVersion({
        org_id: 'o',
        content_id: 'c',
        version_id: 'v',
        title: 'Runner notes',
        category_id: null,
        topic_id: null,
        tags: [],
        folder_path: [],
        chunks: [{ chunk_index: 0, text: 'She was running the connections.' }],
      });
      const res = await index.search({ org_id: 'o', query: 'connected runs', filters: { folder_scope: null }, limit: 5 });
      assert.equal(res.hits.length, 1);
    } finally {
      await index.close();
      await fetch(`${started.url}/${name}`, { method: 'DELETE' });
    }
  });
});
