import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { rowOverlay } from './row-overlay.js';

describe('row overlay', () => {
  const stored: Record<string, Record<string, { id: string; n: number }>> = { a: { x: { id: 'x', n: 1 }, y: { id: 'y', n: 2 } } };
  const read = {
    get: <T>(c: string, id: string) => structuredClone(stored[c]?.[id]) as T | undefined,
    has: (c: string, id: string) => !!stored[c]?.[id],
  };

  it('reads through to the snapshot until a row is written, then reads the write (a fresh copy each time)', async () => {
    const o = rowOverlay(read);
    assert.deepEqual(await o.get('a', 'x'), { id: 'x', n: 1 });
    await o.put('a', { id: 'x', n: 5 });
    const first = await o.get<{ id: string; n: number }>('a', 'x');
    first!.n = 99;
    assert.deepEqual(await o.get('a', 'x'), { id: 'x', n: 5 });
    assert.equal(stored.a!.x!.n, 1);
  });

  it('deletes: reports whether the row existed, reads nothing after, and lists the last write per row once', async () => {
    const o = rowOverlay(read);
    assert.equal(await o.delete('a', 'y'), true);
    assert.equal(await o.get('a', 'y'), undefined);
    assert.equal(await o.delete('a', 'y'), false);
    assert.equal(await o.delete('a', 'none'), false);
    await o.put('b', { id: 'z', n: 3 });
    await o.put('a', { id: 'x', n: 4 });
    await o.put('b', { id: 'z', n: 6 });
    assert.deepEqual(o.take(), [
      ['a', 'y', null],
      ['a', 'none', null],
      ['b', 'z', JSON.stringify({ id: 'z', n: 6 })],
      ['a', 'x', JSON.stringify({ id: 'x', n: 4 })],
    ]);
    assert.deepEqual(o.take(), []);
  });

  it('hands on its writes in pieces as they reach pieceSize; a later piece may write a row again; reads still see every write', async () => {
    const pieces: unknown[] = [];
    const o = rowOverlay(read, { pieceSize: 2, onPiece: (w) => pieces.push(w) });
    await o.put('a', { id: 'x', n: 7 });
    await o.put('a', { id: 'x', n: 8 });
    assert.deepEqual(pieces, []);
    await o.delete('a', 'y');
    assert.deepEqual(pieces, [
      [
        ['a', 'x', JSON.stringify({ id: 'x', n: 8 })],
        ['a', 'y', null],
      ],
    ]);
    await o.put('a', { id: 'x', n: 9 });
    assert.deepEqual(await o.get('a', 'x'), { id: 'x', n: 9 });
    assert.equal(await o.get('a', 'y'), undefined);
    assert.deepEqual(o.take(), [['a', 'x', JSON.stringify({ id: 'x', n: 9 })]]);
    assert.equal(pieces.length, 1);
  });
});
