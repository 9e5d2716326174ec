import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { sentenceSpans, tokenize } from './text.js';

describe('sentence spans', () => {
  it('gives offsets that slice back to each sentence', () => {
    const text = '  Sales rose 12% in 2023.  Costs fell!\nWhy? Because of e.g. energy, vs. last year, as Dr. Smith said. The end';
    const spans = sentenceSpans(text);
    assert.deepEqual(
      spans.map((s) => s.text),
      ['Sales rose 12% in 2023.', 'Costs fell!', 'Why?', 'Because of e.g. energy, vs. last year, as Dr. Smith said.', 'The end'],
    );
    for (const s of spans) assert.equal(text.slice(s.start, s.end), s.text);
  });

  it('keeps decimals, initials and abbreviations inside a sentence', () => {
    const spans = sentenceSpans('The mean was 1.8 microm2/ms (Fig. 2) per J. K. Rowling et al. in the U.S. trial. Next one.');
    assert.equal(spans.length, 2);
    assert.equal(spans[1]!.text, 'Next one.');
  });

  it('attaches [n] markers to the sentence they follow and lists the cited numbers', () => {
    const text = 'Leave is 25 days [1]. Expenses are paid in 30 days.[2, 3] Both apply [1-2]. Nothing cited here.';
    const spans = sentenceSpans(text);
    assert.deepEqual(
      spans.map((s) => [s.text, s.cited, s.claim]),
      [
        ['Leave is 25 days [1].', [1], 'Leave is 25 days.'],
        ['Expenses are paid in 30 days.[2, 3]', [2, 3], 'Expenses are paid in 30 days.'],
        ['Both apply [1-2].', [1, 2], 'Both apply.'],
        ['Nothing cited here.', [], 'Nothing cited here.'],
      ],
    );
    for (const s of spans) assert.equal(text.slice(s.start, s.end), s.text);
  });

  it('ends blocks at blank lines and list items, and strips list markers from the claim', () => {
    const text = '# Benefits\n\n- Leave is 25 days\n- Expenses are paid in 30 days\n1. First step';
    const spans = sentenceSpans(text);
    assert.deepEqual(
      spans.map((s) => s.claim),
      ['Benefits', 'Leave is 25 days', 'Expenses are paid in 30 days', 'First step'],
    );
    assert.equal(spans[0]!.text, '# Benefits');
  });

  it('ends a heading at its own line, so the sentence under it stands alone', () => {
    const text = '## Closing the server\nThe server stops accepting connections. Then it closes.';
    const spans = sentenceSpans(text);
    assert.deepEqual(
      spans.map((s) => s.text),
      ['## Closing the server', 'The server stops accepting connections.', 'Then it closes.'],
    );
    for (const s of spans) assert.equal(text.slice(s.start, s.end), s.text);
    // A '#' inside a line is not a heading.
    assert.equal(sentenceSpans('Issue #12 is fixed\nin the next release.').length, 1);
  });

  it('returns nothing for blank text', () => {
    assert.deepEqual(sentenceSpans('  \n '), []);
  });
});

describe('tokens', () => {
  it('keeps numbers with decimals and separators, percent signs, contractions and names with digits', () => {
    assert.deepEqual(
      tokenize("p53 didn't rise 1,200.5 or 12%").map((t) => t.lower),
      ['p53', "didn't", 'rise', '1,200.5', 'or', '12', '%'],
    );
  });
});

describe('sentence spans, any text', () => {
  const pieces = fc.constantFrom(
    'Sales rose',
    ' 12.5%',
    '. ',
    '! ',
    '? ',
    '\n\n',
    '\n- ',
    ' [1]',
    '[2, 3]',
    ' e.g. ',
    'Dr. ',
    ' vs. ',
    'The ',
    '“quoted.” ',
    '  ',
    '…',
    '1. ',
    '#',
    'ü',
    ',',
  );
  it('slices back to each span, in order, without overlaps, and never loses a word', () => {
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 40 }), (parts) => {
        const text = parts.join('');
        const spans = sentenceSpans(text);
        let last = 0;
        for (const s of spans) {
          assert.equal(text.slice(s.start, s.end), s.text);
          assert.ok(s.start >= last && s.end > s.start);
          assert.equal(s.text, s.text.trim());
          last = s.end;
        }
        const covered = spans.map((s) => s.text).join(' ');
        assert.deepEqual(
          tokenize(covered).map((t) => t.raw),
          tokenize(text).map((t) => t.raw),
        );
      }),
      { numRuns: 300 },
    );
  });
});
