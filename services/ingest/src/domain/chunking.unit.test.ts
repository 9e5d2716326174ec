import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Block } from '../extract/types.js';
import { chunkBlocks, splitLong, tailOf } from './chunking.js';

const para = (text: string, extra: Partial<Block> = {}): Block => ({ kind: 'paragraph', text, ...extra });
const heading = (text: string, level = 1, extra: Partial<Block> = {}): Block => ({ kind: 'heading', text, level, ...extra });

describe('chunkBlocks', () => {
  it('opens a new chunk at every heading and records the heading path', () => {
    const chunks = chunkBlocks(
      [
        heading('Guide'),
        para('Intro.'),
        heading('Setup', 2),
        para('Step one.'),
        heading('Use', 2),
        para('Press start.'),
        heading('Appendix'),
      ],
      { targetChars: 1000, overlapChars: 100 },
    );
    assert.deepEqual(
      chunks.map((c) => [c.chunk_index, c.heading_path, c.text]),
      [
        [0, ['Guide'], 'Guide\nIntro.'],
        [1, ['Guide', 'Setup'], 'Setup\nStep one.'],
        [2, ['Guide', 'Use'], 'Use\nPress start.'],
        [3, ['Appendix'], 'Appendix'],
      ],
    );
  });

  it('never spans two pages, sheets or slides, and keeps where each chunk came from', () => {
    const chunks = chunkBlocks(
      [
        para('p1', { page: 1 }),
        para('p2', { page: 2 }),
        para('r1', { sheet: 'A', row: 1 }),
        para('r2', { sheet: 'A', row: 2 }),
        para('s', { slide: 3 }),
      ],
      { targetChars: 1000, overlapChars: 0 },
    );
    assert.deepEqual(
      chunks.map((c) => [c.text, c.page, c.sheet, c.slide, c.row_range]),
      [
        ['p1', 1, undefined, undefined, undefined],
        ['p2', 2, undefined, undefined, undefined],
        ['r1\nr2', undefined, 'A', undefined, [1, 2]],
        ['s', undefined, undefined, 3, undefined],
      ],
    );
  });

  it('packs paragraphs up to the target and overlaps consecutive chunks of one section', () => {
    const words = (n: number, w: string) => Array.from({ length: n }, () => w).join(' ');
    const blocks = [para(words(30, 'alpha')), para(words(30, 'beta')), para(words(30, 'gamma'))];
    const chunks = chunkBlocks(blocks, { targetChars: 400, overlapChars: 40 });
    assert.equal(chunks.length, 2);
    assert.ok(chunks[0]!.text.startsWith('alpha') && chunks[0]!.text.includes('beta'));
    assert.ok(chunks[1]!.text.startsWith('beta'), 'the second chunk starts with the overlap');
    assert.ok(chunks[1]!.text.endsWith('gamma'));
  });

  it('splits a paragraph longer than the target', () => {
    const long = 'One sentence here. '.repeat(200);
    const chunks = chunkBlocks([para(long)], { targetChars: 500, overlapChars: 50 });
    assert.ok(chunks.length > 5);
    for (const c of chunks) assert.ok(c.text.length <= 500, `chunk of ${c.text.length}`);
  });

  it('keeps every word of the input, in order, within the size bound (property)', () => {
    const word = fc.stringMatching(/^[a-z]{1,12}$/);
    const block = fc.record({
      kind: fc.constantFrom('paragraph', 'heading', 'row'),
      text: fc.array(word, { minLength: 1, maxLength: 80 }).map((w) => w.join(' ')),
      level: fc.integer({ min: 1, max: 3 }),
    });
    fc.assert(
      fc.property(fc.array(block, { maxLength: 30 }), fc.integer({ min: 100, max: 800 }), (blocks, target) => {
        const chunks = chunkBlocks(blocks as Block[], { targetChars: target, overlapChars: 0 });
        const wordsIn = blocks.flatMap((b) => b.text.split(' '));
        const wordsOut = chunks.flatMap((c) => c.text.split(/\s+/));
        assert.deepEqual(wordsOut, wordsIn);
        chunks.forEach((c, i) => assert.equal(c.chunk_index, i));
        for (const c of chunks) assert.ok(c.text.length <= target, `${c.text.length} > ${target}`);
      }),
    );
  });
});

describe('tailOf and splitLong', () => {
  it('tailOf starts at a word boundary', () => {
    assert.equal(tailOf('the quick brown fox', 9), 'fox');
    assert.equal(tailOf('short', 10), 'short');
    assert.equal(tailOf('anything', 0), '');
  });
  it('splitLong prefers sentence ends, else word boundaries', () => {
    assert.deepEqual(splitLong('A first sentence here. Second one is longer. Third.', 30), [
      'A first sentence here.',
      'Second one is longer. Third.',
    ]);
    assert.deepEqual(splitLong('aaaa bbbb cccc dddd', 10), ['aaaa bbbb', 'cccc dddd']);
  });
});
