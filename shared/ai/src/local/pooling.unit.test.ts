import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { l2normalize, padBatch, poolHidden } from './pooling.js';

const close = (a: number[], b: number[]) => a.forEach((x, i) => assert.ok(Math.abs(x - b[i]!) < 1e-6, `${a} vs ${b}`));

describe('pooling of a hidden state', () => {
  // batch 2, seq 3, dim 2
  const hidden = new Float32Array([3, 0, 1, 2, 100, 100, 0, 4, 0, 0, 0, 0]);
  const mask = [1, 1, 0, 1, 0, 0];

  it('mean pooling averages the unmasked tokens only, then normalises', () => {
    const [a, b] = poolHidden(hidden, mask, { batch: 2, seq: 3, dim: 2 }, 'mean');
    close(a!, l2normalize([2, 1]));
    close(b!, [0, 1]);
  });

  it('cls pooling takes the first token of each row, normalised', () => {
    const [a, b] = poolHidden(hidden, mask.map(BigInt), { batch: 2, seq: 3, dim: 2 }, 'cls');
    close(a!, [1, 0]);
    close(b!, [0, 1]);
  });

  it('refuses a hidden state of the wrong shape; a zero vector stays zero', () => {
    assert.throws(() => poolHidden(new Float32Array(5), [1], { batch: 1, seq: 1, dim: 2 }, 'mean'), /not 1x1x2/);
    assert.deepEqual(l2normalize([0, 0]), [0, 0]);
  });

  it('pads rows to the longest with a mask of the real tokens', () => {
    const p = padBatch(
      [
        [101, 7, 102],
        [101, 102],
      ],
      0,
    );
    assert.equal(p.seq, 3);
    assert.deepEqual([...p.ids], [101n, 7n, 102n, 101n, 102n, 0n]);
    assert.deepEqual([...p.mask], [1n, 1n, 1n, 1n, 1n, 0n]);
    assert.deepEqual([...p.types], [0n, 0n, 0n, 0n, 0n, 0n]);
  });
});
