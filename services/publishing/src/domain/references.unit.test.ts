import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import type { DraftRevision } from '@kb/events';
import { cleanQuote, referencesOf } from './references.js';

describe('cited spans', () => {
  it('lose the heading lines and anchors chunking glued to them', () => {
    assert.equal(cleanQuote('## Server\n\n<a id="close"></a>\nThe close method stops.'), 'The close method stops.');
    assert.equal(cleanQuote("close\n<a name='close'/>\nCalling `close()` stops the server."), 'Calling `close()` stops the server.');
    assert.equal(cleanQuote('Plugins\n=======\nThey load in order.'), 'They load in order.');
    assert.equal(cleanQuote('First line of a sentence.\nAnd its next block.'), 'First line of a sentence. And its next block.');
  });

  it('stay whole when nothing in them is a sentence', () => {
    assert.equal(cleanQuote('Just one line'), 'Just one line');
    assert.equal(cleanQuote('Fast\nLow overhead'), 'Fast Low overhead');
    assert.equal(cleanQuote('Quoted passage 0 <b>& more</b>'), 'Quoted passage 0 <b>& more</b>');
  });

  it('are numbered per chunk and words, so each sentence points at its own', () => {
    const cite = (chunk_id: string, quote: string) => ({ content_id: 'c', version_id: 'v', chunk_id, quote });
    const s = (index: number, ...citations: ReturnType<typeof cite>[]) => ({ index, text: `S${index}.`, verdict: 'supported', citations });
    const sections = [
      {
        section_id: 'a',
        title: 'A',
        sentences: [s(0, cite('v:0', '# H\nOne.')), s(1, cite('v:0', 'Two.')), s(2, cite('v:0', 'One.'), cite('v:1', 'Three.'))],
      },
    ] as unknown as DraftRevision['sections'];
    const { refs, numbersOf } = referencesOf(sections);
    assert.deepEqual(
      refs.map((r) => [r.n, r.chunk_id, r.quote]),
      [
        [1, 'v:0', 'One.'],
        [2, 'v:0', 'Two.'],
        [3, 'v:1', 'Three.'],
      ],
    );
    assert.deepEqual(sections[0]!.sentences.map(numbersOf), [[1], [2], [1, 3]]);
  });
});
