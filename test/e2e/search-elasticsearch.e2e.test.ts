import { afterAll } from 'vitest';
import { randomUUID } from 'node:crypto';
import { describeOrSkip } from '@kb/testing';
import { describeSearchApi } from './search-api-suite.js';

/**
 * The search API end to end with SEARCH_INDEX=elasticsearch, on the node named by
 * ELASTICSEARCH_URL (CI starts one with scripts/elasticsearch.sh), in an index of its own.
 */
const url = process.env.ELASTICSEARCH_URL;
const index = `kb-e2e-${randomUUID()}`;

async function es(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${url}${path}`, {
    method,
    ...(body !== undefined && { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

describeOrSkip(
  'search on Elasticsearch',
  url
    ? false
    : 'skipped: ELASTICSEARCH_URL is not set (CI starts a node with scripts/elasticsearch.sh; run `scripts/elasticsearch.sh start` and export ELASTICSEARCH_URL)',
  () => {
    afterAll(async () => {
      await fetch(`${url}/${index}`, { method: 'DELETE' });
    });
    describeSearchApi({
      env: { SEARCH_INDEX: 'elasticsearch', ELASTICSEARCH_URL: url ?? '', ELASTICSEARCH_INDEX: index },
      async loseIndex() {
        // Every chunk deleted by id (the node may have no _delete_by_query); the index itself stays.
        for (;;) {
          const found = await es('POST', `/${index}/_search`, { size: 1000, _source: false, query: { match_all: {} } });
          const hits: { _id: string }[] = found.hits.hits;
          if (hits.length === 0) return;
          const lines = hits.map((h) => JSON.stringify({ delete: { _index: index, _id: h._id } })).join('\n') + '\n';
          const res = await fetch(`${url}/_bulk?refresh=true`, {
            method: 'POST',
            headers: { 'content-type': 'application/x-ndjson' },
            body: lines,
          });
          if (!res.ok) throw new Error(`bulk delete: ${res.status} ${await res.text()}`);
        }
      },
    });
  },
);
