import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { DEFAULT_FUSION } from '@kb/search';
import { checkSearchSettings } from './search-config.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@kb/platform';
import { fusionOf, openEmbeddings } from './search-adapters.js';
import { knowledgeBaseConfigSpec, type KnowledgeBaseConfig } from './config.js';

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

describe('the embeddings the settings pick', () => {
  const config = (over: Partial<KnowledgeBaseConfig>): KnowledgeBaseConfig => ({
    ...loadConfig(knowledgeBaseConfigSpec, { INTERNAL_TOKEN: 'x'.repeat(32) }),
    ...over,
  });
  const logger = () => {
    const lines: string[] = [];
    return {
      lines,
      info: (m: unknown, s?: string) => lines.push(String(s ?? m)),
      warn: (m: unknown, s?: string) => lines.push(String(s ?? m)),
    };
  };

  it('serves keyword search and says why when the model is missing; EMBEDDINGS=none turns it off without a warning', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kb-no-model-'));
    try {
      const log = logger();
      assert.equal(await openEmbeddings(config({ EMBEDDINGS_MODEL_DIR: dir }), log as never), undefined);
      assert.match(log.lines.join('\n'), /keyword only, the embeddings model is missing: model\.onnx, tokenizer\.json not in/);
      const off = logger();
      assert.equal(await openEmbeddings(config({ EMBEDDINGS: 'none', EMBEDDINGS_MODEL_DIR: dir }), off as never), undefined);
      assert.deepEqual(off.lines, ['search: keyword only (EMBEDDINGS=none)']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('defaults to the local model folder npm start fills', () => {
    assert.equal(knowledgeBaseConfigSpec.schema.properties.EMBEDDINGS_MODEL_DIR.default, '.models/bge-small-en-v1.5-q');
  });
});
