import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { createWordPieceTokenizer, isPunctuation, normalize, preTokenize, wordPieceSpecOf, wordPieces } from './wordpiece.js';

const VOCAB = [
  '[PAD]',
  '[UNK]',
  '[CLS]',
  '[SEP]',
  'the',
  'un',
  '##aff',
  '##able',
  'cell',
  '##s',
  'p',
  '##53',
  ',',
  '.',
  '-',
  'a',
  'cafe',
  '中',
];
const json = {
  normalizer: { type: 'BertNormalizer', lowercase: true, strip_accents: null },
  model: {
    type: 'WordPiece',
    unk_token: '[UNK]',
    continuing_subword_prefix: '##',
    max_input_chars_per_word: 12,
    vocab: Object.fromEntries(VOCAB.map((t, i) => [t, i])),
  },
};
const spec = wordPieceSpecOf(json);
const id = (t: string) => VOCAB.indexOf(t);

describe('WordPiece tokenizer (tokenizer.json)', () => {
  it('reads a BERT tokenizer.json and refuses other models', () => {
    assert.equal(spec.vocab.get('cell'), id('cell'));
    assert.equal(spec.lowercase, true);
    assert.equal(spec.stripAccents, true, 'strip_accents null follows lowercase');
    assert.equal(spec.padId, 0);
    assert.throws(() => wordPieceSpecOf({ model: { type: 'BPE', vocab: {} } }), /not a WordPiece/);
    assert.throws(() => wordPieceSpecOf({ model: { type: 'WordPiece', vocab: { a: 0 } } }), /no \[UNK\]/);
  });

  it('normalizes like BertNormalizer: controls dropped, whitespace to spaces, accents stripped, lowercase, CJK spaced', () => {
    assert.equal(normalize('Caf\u00e9\tX\u0000Y', spec), 'cafe xy');
    assert.equal(normalize('a中b', spec), 'a 中 b');
    assert.equal(normalize('Café', { lowercase: false, stripAccents: false }), 'Café');
  });

  it('pre-tokenizes on whitespace and makes every punctuation character a word', () => {
    assert.deepEqual(preTokenize('p53-cells, the.'), ['p53', '-', 'cells', ',', 'the', '.']);
    assert.deepEqual(preTokenize('  a   b '), ['a', 'b']);
    assert.ok(isPunctuation('$') && isPunctuation('«') && !isPunctuation('a') && !isPunctuation('5'));
  });

  it('splits words greedily, longest piece first, with ## continuations', () => {
    assert.deepEqual(wordPieces('unaffable', spec), [id('un'), id('##aff'), id('##able')]);
    assert.deepEqual(wordPieces('cells', spec), [id('cell'), id('##s')]);
    assert.deepEqual(wordPieces('p53', spec), [id('p'), id('##53')]);
  });

  it('gives one [UNK] for a word with an unknown part or longer than max_input_chars_per_word', () => {
    assert.deepEqual(wordPieces('cellz', spec), [id('[UNK]')]);
    assert.deepEqual(wordPieces('cellcellcellcell', spec), [id('[UNK]')]);
  });

  it('encodes [CLS] pieces [SEP] and truncates to the token budget', () => {
    const tok = createWordPieceTokenizer(spec);
    assert.deepEqual(tok.encode('The p53-cells.').ids, [
      id('[CLS]'),
      id('the'),
      id('p'),
      id('##53'),
      id('-'),
      id('cell'),
      id('##s'),
      id('.'),
      id('[SEP]'),
    ]);
    assert.deepEqual(tok.encode('The p53-cells.', 4).ids, [id('[CLS]'), id('the'), id('p'), id('[SEP]')]);
    assert.deepEqual(tok.encode('').ids, [id('[CLS]'), id('[SEP]')]);
    // The same text twice gives the same ids (memoized words are not altered).
    assert.deepEqual(tok.encode('unaffable cells').ids, tok.encode('unaffable cells').ids);
  });
});
