import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Block } from '../extract/types.js';
import { chunkBlocks, fencedPieces, splitLong, tailOf } from './chunking.js';

const para = (text: string, extra: Partial<Block> = {}): Block => ({ kind: 'paragraph', text, ...extra });
const heading = (text: string, level = 1, extra: Partial<Block> = {}): Block => ({ kind: 'heading', text, level, ...extra });
const code = (text: string): Block => ({ kind: 'code', text });

/** The code lines of chunk texts (inside ``` fences), and whether every fence a chunk opens it also closes. */
function codeOf(text: string): { lines: string[]; balanced: boolean } {
  const lines: string[] = [];
  let inside = false;
  for (const line of text.split('\n')) {
    if (line === '```') inside = !inside;
    else if (inside) lines.push(line);
  }
  return { lines, balanced: !inside };
}

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

describe('chunkBlocks: code blocks', () => {
  it('writes a code block fenced on lines of its own, its lines and indentation kept, apart from the prose', () => {
    const chunks = chunkBlocks(
      [
        heading('Hooks'),
        para('Register a hook:'),
        code("fastify.addHook('onRequest', (request, reply, done) => {\n  done()\n})"),
        para('Done.'),
      ],
      { targetChars: 1000, overlapChars: 100 },
    );
    assert.deepEqual(
      chunks.map((c) => c.text),
      ["Hooks\nRegister a hook:\n```\nfastify.addHook('onRequest', (request, reply, done) => {\n  done()\n})\n```\nDone."],
    );
  });

  it('keeps a code block whole in the next chunk rather than splitting it, and never starts a chunk inside code', () => {
    const prose = 'Words of prose here. '.repeat(12).trim();
    const body = Array.from({ length: 8 }, (_, i) => `  line(${i});`).join('\n');
    const chunks = chunkBlocks([para(prose), code(body), para(prose)], { targetChars: 400, overlapChars: 60 });
    assert.ok(
      chunks.some((c) => c.text.includes('```\n' + body + '\n```')),
      'one chunk has the whole block',
    );
    for (const c of chunks) {
      assert.ok(!c.text.startsWith('  line'), 'the overlap is prose only');
      assert.ok(codeOf(c.text).balanced, c.text);
    }
  });

  it('splits a code block longer than a chunk into pieces each fenced on its own, every line kept in order', () => {
    const lines = Array.from({ length: 60 }, (_, i) => `const value${i} = compute(${i}); // step ${i}`);
    const chunks = chunkBlocks([para('Intro.'), code(lines.join('\n')), para('After.')], { targetChars: 500, overlapChars: 50 });
    assert.ok(chunks.length > 4);
    for (const c of chunks) {
      assert.ok(c.text.length <= 500, `chunk of ${c.text.length}`);
      assert.ok(codeOf(c.text).balanced, c.text);
    }
    assert.deepEqual(
      chunks.flatMap((c) => codeOf(c.text).lines),
      lines,
    );
    // A line of the code that would close the fence is indented so it does not.
    assert.deepEqual(fencedPieces('a\n```\nb', 1000), ['```\na\n    ```\nb\n```']);
    // A line longer than a piece is cut.
    assert.deepEqual(fencedPieces('x'.repeat(30), 20), [
      '```\n' + 'x'.repeat(12) + '\n```',
      '```\n' + 'x'.repeat(12) + '\n```',
      '```\n' + 'x'.repeat(6) + '\n```',
    ]);
  });

  it('keeps every code line and fences every chunk (property)', () => {
    const word = fc.stringMatching(/^[a-z]{1,12}$/);
    const codeLine = fc.stringMatching(/^ {0,4}[a-z(){};=]{1,30}$/);
    const block = fc.oneof(
      fc.record({ kind: fc.constant('paragraph'), text: fc.array(word, { minLength: 1, maxLength: 60 }).map((w) => w.join(' ')) }),
      fc.record({ kind: fc.constant('code'), text: fc.array(codeLine, { minLength: 1, maxLength: 40 }).map((l) => l.join('\n')) }),
    );
    fc.assert(
      fc.property(
        fc.array(block, { maxLength: 20 }),
        fc.integer({ min: 100, max: 800 }),
        fc.integer({ min: 0, max: 80 }),
        (blocks, target, overlap) => {
          const chunks = chunkBlocks(blocks as Block[], { targetChars: target, overlapChars: overlap });
          const codeIn = blocks.filter((b) => b.kind === 'code').flatMap((b) => b.text.split('\n'));
          for (const c of chunks) assert.ok(codeOf(c.text).balanced, c.text);
          assert.deepEqual(
            chunks.flatMap((c) => codeOf(c.text).lines),
            codeIn,
          );
        },
      ),
    );
  });
});

describe('tailOf and splitLong', () => {
  it('tailOf starts at a word boundary', () => {
    assert.equal(tailOf('the quick brown fox', 9), 'fox');
    assert.equal(tailOf('short', 10), 'short');
    assert.equal(tailOf('anything', 0), '');
    // Not from inside inline code.
    assert.equal(tailOf('call `fastify.close() now` to stop', 18), 'to stop');
  });
  it('splitLong prefers sentence ends, else word boundaries', () => {
    assert.deepEqual(splitLong('A first sentence here. Second one is longer. Third.', 30), [
      'A first sentence here.',
      'Second one is longer. Third.',
    ]);
    assert.deepEqual(splitLong('aaaa bbbb cccc dddd', 10), ['aaaa bbbb', 'cccc dddd']);
  });
});
