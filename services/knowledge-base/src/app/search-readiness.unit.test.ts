import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { readinessOf, type SearchContentDoc } from './search-indexing.js';

const doc = (over: Partial<SearchContentDoc>): SearchContentDoc => ({
  id: 'c',
  org_id: 'o',
  content_id: 'c',
  version_id: 'v2',
  title: 't',
  category_id: null,
  topic_id: null,
  parent_id: null,
  ...over,
});

describe('search readiness of a content item', () => {
  it('is keyword-ready once a version is indexed, semantic-ready once that version has its vectors', () => {
    assert.deepEqual(readinessOf(undefined, true), { keyword: 'pending', semantic: 'pending' });
    assert.deepEqual(readinessOf(doc({}), true), { keyword: 'pending', semantic: 'pending' });
    assert.deepEqual(readinessOf(doc({ indexed_version_id: 'v2' }), true), { keyword: 'ready', semantic: 'pending' });
    assert.deepEqual(readinessOf(doc({ indexed_version_id: 'v2', vectors_version_id: 'v2' }), true), {
      keyword: 'ready',
      semantic: 'ready',
    });
  });

  it('is semantic-pending again when a newer version is indexed before its vectors, and off without embeddings', () => {
    assert.deepEqual(readinessOf(doc({ indexed_version_id: 'v2', vectors_version_id: 'v1' }), true), {
      keyword: 'ready',
      semantic: 'pending',
    });
    assert.deepEqual(readinessOf(doc({ indexed_version_id: 'v2' }), false), { keyword: 'ready', semantic: 'off' });
  });
});
