import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { hammingNearest, orgBits } from './bit-scan.js';
import { signBits } from './bit-vectors.js';

const row = (bitsSet: number[]) =>
  signBits(
    Array.from({ length: 64 }, (_, i) => (bitsSet.includes(i) ? 1 : -1)),
    8,
  );

describe('sign-bit scan', () => {
  it('returns the k nearest by Hamming distance, nearest first, ties by rowid', () => {
    const m = orgBits(2);
    m.set(10, row([0, 1, 2]));
    m.set(11, row([0, 1]));
    m.set(12, row([40, 41, 42, 43]));
    m.set(13, row([0, 1, 2, 3]));
    const q = new Uint32Array(row([0, 1, 2]).buffer.slice(0));
    assert.deepEqual(hammingNearest(m, q, 3), [10, 11, 13]);
    assert.deepEqual(hammingNearest(m, q, 10), [10, 11, 13, 12]);
    assert.deepEqual(hammingNearest(m, q, 0), []);
  });

  it('replaces a row in place and moves the last row into a removed one', () => {
    const m = orgBits(2);
    for (let i = 0; i < 2000; i++) m.set(i, row([i % 64]));
    m.remove(5);
    m.remove(1999);
    m.set(7, row([50, 51, 52]));
    assert.equal(m.size(), 1998);
    const q = new Uint32Array(row([50, 51, 52]).buffer.slice(0));
    assert.equal(hammingNearest(m, q, 1)[0], 7);
    const all = hammingNearest(m, q, 5000);
    assert.equal(all.length, 1998);
    assert.ok(!all.includes(5) && !all.includes(1999));
    assert.ok(all.includes(1998), 'the row moved into the freed slot is still found');
  });
});
