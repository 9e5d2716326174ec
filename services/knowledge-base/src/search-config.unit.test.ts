import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { DEFAULT_FUSION } from '@kb/search';
import { checkSearchSettings } from './search-config.js';
import { fusionOf } from './search-adapters.js';
import { knowledgeBaseConfigSpec } from './config.js';

describe('search settings', () => {
  it('requires the model folder for local embeddings and the URL for an OpenAI-compatible provider', () => {
    assert.deepEqual(checkSearchSettings({ SEARCH_INDEX: 'sqlite', EMBEDDINGS: 'local' }), [
      'EMBEDDINGS_MODEL_DIR is required when EMBEDDINGS=local',
    ]);
    assert.deepEqual(checkSearchSettings({ SEARCH_INDEX: 'sqlite', EMBEDDINGS: 'local', EMBEDDINGS_MODEL_DIR: '.models/x' }), []);
    assert.deepEqual(checkSearchSettings({ SEARCH_INDEX: 'sqlite', EMBEDDINGS: 'openai' }), [
      'EMBEDDINGS_URL is required when EMBEDDINGS=openai',
    ]);
    assert.deepEqual(checkSearchSettings({ SEARCH_INDEX: 'sqlite' }), []);
  });

  it('turns the fusion settings into the index option, defaulting to the cross-validated fusion', () => {
    assert.deepEqual(fusionOf({ SEARCH_FUSION: 'convex', SEARCH_DENSE_WEIGHT: 0.4, SEARCH_RRF_K: 60 }), {
      method: 'convex',
      denseWeight: 0.4,
    });
    assert.deepEqual(fusionOf({ SEARCH_FUSION: 'rrf', SEARCH_DENSE_WEIGHT: 0.6, SEARCH_RRF_K: 20 }), {
      method: 'rrf',
      k: 20,
      denseWeight: 0.6,
    });
    const props = knowledgeBaseConfigSpec.schema.properties;
    const defaults = fusionOf({
      SEARCH_FUSION: props.SEARCH_FUSION.default,
      SEARCH_DENSE_WEIGHT: props.SEARCH_DENSE_WEIGHT.default,
      SEARCH_RRF_K: props.SEARCH_RRF_K.default,
    });
    assert.deepEqual(defaults, DEFAULT_FUSION);
  });
});
