import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { fuseRanked, reciprocalRankFusion } from './fusion.js';

const list = (...pairs: [string, number][]) => pairs.map(([item, score]) => ({ item, score }));
const ids = (xs: { item: string }[]) => xs.map((x) => x.item);

describe('fusion of BM25 and dense candidates', () => {
  const lex = list(['a', 9], ['b', 5], ['c', 1]);
  const dense = list(['c', 0.9], ['d', 0.8], ['a', 0.1]);

  it('rrf with weight 0.5 is plain reciprocal rank fusion', () => {
    const fused = fuseRanked(lex, dense, (x) => x, { method: 'rrf', k: 60, denseWeight: 0.5 });
    const plain = reciprocalRankFusion([ids(lex), ids(dense)], (x) => x);
    assert.deepEqual(ids(fused), ids(plain));
    fused.forEach((f, i) => assert.ok(Math.abs(f.score - plain[i]!.score) < 1e-12));
  });

  it('weight 0 keeps the BM25 order and weight 1 the dense order for the items each list has', () => {
    assert.deepEqual(ids(fuseRanked(lex, dense, (x) => x, { method: 'rrf', k: 10, denseWeight: 0 })).slice(0, 3), ['a', 'b', 'c']);
    assert.deepEqual(ids(fuseRanked(lex, dense, (x) => x, { method: 'convex', denseWeight: 1 })).slice(0, 3), ['c', 'd', 'a']);
  });

  it('convex fusion scales each list to [0, 1] and mixes them', () => {
    const fused = fuseRanked(lex, dense, (x) => x, { method: 'convex', denseWeight: 0.5 });
    const score = Object.fromEntries(fused.map((f) => [f.item, f.score]));
    assert.ok(Math.abs(score.a! - 0.5) < 1e-12, 'a: bm25 1, dense 0');
    assert.ok(Math.abs(score.c! - 0.5) < 1e-12, 'c: bm25 0, dense 1');
    assert.ok(Math.abs(score.b! - 0.25) < 1e-12, 'b: bm25 0.5, no dense');
    assert.ok(Math.abs(score.d! - 0.5 * (0.7 / 0.8)) < 1e-12);
    // A list whose scores are all equal counts fully for each of its items; empty lists are fine.
    assert.deepEqual(ids(fuseRanked(list(['x', 3], ['y', 3]), [], (x) => x, { method: 'convex', denseWeight: 0.3 })), ['x', 'y']);
    assert.deepEqual(
      fuseRanked([], [], (x: string) => x, { method: 'convex', denseWeight: 0.3 }),
      [],
    );
  });

  it('a stronger rank in either list lifts an item above one found by one list only', () => {
    const fused = fuseRanked(lex, dense, (x) => x, { method: 'rrf', k: 60, denseWeight: 0.5 });
    assert.deepEqual(ids(fused).slice(0, 2).sort(), ['a', 'c']);
  });
});
