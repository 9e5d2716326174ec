import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { bestSetting, crossValidate, meanOver, splitQueries } from './cross-validation.js';

describe('held-out split and k-fold cross-validation', () => {
  const ids = Array.from({ length: 1000 }, (_, i) => `q${i}`);

  it('splits every query exactly once, about the share held out, the same way every time', () => {
    const { heldOut, folds } = splitQueries(ids, { heldOutShare: 0.2, folds: 5 });
    const all = [...heldOut, ...folds.flat()];
    assert.equal(new Set(all).size, ids.length);
    assert.equal(all.length, ids.length);
    assert.ok(heldOut.length > 150 && heldOut.length < 250, `${heldOut.length} held out`);
    for (const f of folds) assert.ok(f.length > 120 && f.length < 200, `fold of ${f.length}`);
    assert.deepEqual(splitQueries(ids, { heldOutShare: 0.2, folds: 5 }), { heldOut, folds });
  });

  it('chooses each fold setting without looking at that fold', () => {
    const folds = [['a'], ['b'], ['c']];
    // Setting x wins on a and b, y only on c, by a lot: c's choice must still be x.
    const perSetting = [
      {
        setting: 'x',
        scores: new Map([
          ['a', 1],
          ['b', 1],
          ['c', 0],
        ]),
      },
      {
        setting: 'y',
        scores: new Map([
          ['a', 0],
          ['b', 0.5],
          ['c', 1],
        ]),
      },
    ];
    const cv = crossValidate(perSetting, folds);
    assert.deepEqual(
      cv.map((f) => [f.setting, f.heldOutScore]),
      [
        ['y', 0],
        ['x', 1],
        ['x', 0],
      ],
    );
    assert.equal(bestSetting(perSetting, ['a', 'b', 'c']).setting, 'x');
    assert.equal(meanOver(perSetting[1]!.scores, ['b', 'c']), 0.75);
  });

  it('keeps the first (simplest) setting on a tie', () => {
    const same = new Map([['a', 0.5]]);
    assert.equal(
      bestSetting(
        [
          { setting: 1, scores: same },
          { setting: 2, scores: new Map(same) },
        ],
        ['a'],
      ).setting,
      1,
    );
  });
});
