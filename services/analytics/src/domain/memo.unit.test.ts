import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { boundedMemo } from './memo.js';

describe('boundedMemo', () => {
  it('computes a key once while it is remembered, null results included', () => {
    const calls: string[] = [];
    const f = boundedMemo((k) => (calls.push(k), k === 'none' ? null : k.length), 4);
    assert.equal(f('abc'), 3);
    assert.equal(f('none'), null);
    assert.equal(f('abc'), 3);
    assert.equal(f('none'), null);
    assert.deepEqual(calls, ['abc', 'none']);
  });

  it('holds at most two generations: an unused key is computed again, a key in use is kept', () => {
    const calls: string[] = [];
    const f = boundedMemo((k) => (calls.push(k), k.toUpperCase()), 2);
    for (const k of ['a', 'b', 'c', 'd']) f(k); // a, b aged out of the young generation by c, d
    f('a'); // still in the old generation: copied back, not computed
    f('e'); // ages c, d; drops the generation a, b were in
    f('b'); // gone: computed again
    assert.deepEqual(calls, ['a', 'b', 'c', 'd', 'e', 'b']);
  });

  it('always answers what the function answers (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g'), { maxLength: 60 }),
        fc.integer({ min: 1, max: 4 }),
        (keys, size) => {
          const f = boundedMemo((k) => `${k}!`, size);
          for (const k of keys) assert.equal(f(k), `${k}!`);
        },
      ),
    );
  });
});
