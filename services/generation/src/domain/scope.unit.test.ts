import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { drawsWithin, requireWithin, runFolders } from './scope.js';

describe('folder scope on drafts and runs', () => {
  it('an unscoped caller sees everything; a scoped one only what was drawn entirely from its folders', () => {
    assert.equal(drawsWithin([], null), true);
    assert.equal(drawsWithin(['f2'], null), true);
    assert.equal(drawsWithin(['f1'], ['f1', 'f1-child']), true);
    assert.equal(drawsWithin(['f1', 'f1-child'], ['f1', 'f1-child']), true);
    assert.equal(drawsWithin(['f1', 'f2'], ['f1']), false);
    assert.equal(drawsWithin(['f2'], ['f1']), false);
    assert.equal(drawsWithin([], ['f1']), false, 'no source folder is the whole knowledge base');
    assert.equal(drawsWithin(['f1'], []), false);
  });

  it('403 folder_scope by id', () => {
    assert.throws(
      () => requireWithin(['f2'], ['f1'], 'a draft'),
      (e: { code?: string; kind?: string }) => e.code === 'folder_scope' && e.kind === 'forbidden',
    );
    assert.doesNotThrow(() => requireWithin(['f1'], ['f1'], 'a draft'));
  });

  it('a run drew on the folders it named, else on the scope of the key that started it', () => {
    assert.deepEqual(runFolders({ scope: { folder_ids: ['a'] }, caller_folder_scope: ['a', 'b'] }), ['a']);
    assert.deepEqual(runFolders({ scope: { folder_ids: [] }, caller_folder_scope: ['a', 'b'] }), ['a', 'b']);
    assert.deepEqual(runFolders({ scope: { folder_ids: [] }, caller_folder_scope: null }), []);
  });
});
