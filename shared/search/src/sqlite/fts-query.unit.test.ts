import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { ftsQuery } from './sqlite-index.js';

/**
 * The FTS5 query built from user text: every word quoted, words OR-ed. Checked
 * against a real (in-memory) FTS5 table with the index's tokenizer, including a
 * seeded fuzz over FTS5 operators, quotes, control and odd Unicode characters:
 * no input may be a syntax error, reach another column, or AND the words.
 */
const table = () => {
  const db = new Database(':memory:');
  db.exec("CREATE VIRTUAL TABLE f USING fts5(title, heading, body, filing, tokenize='porter unicode61 remove_diacritics 2')");
  const insert = db.prepare('INSERT INTO f (title, heading, body, filing) VALUES (?, ?, ?, ?)');
  insert.run('Plain words', '', 'The NOT operator and "quotes" (parentheses) are plain words here. Café in Tōkyō 東京.', 'osecretorg');
  insert.run('Other', '', 'Expenses are reimbursed within thirty days.', 'ootherorg');
  // The same shape as the index's own query: user terms limited to the searchable columns.
  const match = db.prepare<[string], { rowid: number }>('SELECT rowid FROM f WHERE f MATCH ? ORDER BY rowid');
  return { db, rows: (q: string) => match.all(`{title heading body} : (${q})`).map((r) => r.rowid) };
};

// A small deterministic generator (mulberry32), so a failure reproduces.
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HOSTILE = [
  '"',
  "'",
  '(',
  ')',
  '*',
  '-',
  '+',
  ':',
  '^',
  '{',
  '}',
  '[',
  ']',
  ',',
  ';',
  '\\',
  '/',
  '.',
  '?',
  '!',
  'NEAR',
  'NEAR/2',
  'AND',
  'OR',
  'NOT',
  'title',
  'body',
  'filing',
  'rowid',
  'MATCH',
  ' ',
  '\t',
  '\n',
  '\u0000',
  '\u200b',
  '\u200f',
  '\u0301',
  '\u3000',
  'é',
  'ß',
  '東',
  'İ',
  'ǅ',
  'ﬁ',
  '²',
  '½',
  '٣',
  'Ⅷ',
  '\ud83d\ude00',
  '\ud800',
  '\udfff',
  'ﷺ',
  'ŉ',
  'a',
  'plain',
  'words',
  "'; DROP TABLE f; --",
];

describe('ftsQuery', () => {
  it('quotes every word and joins them with OR (a question is never an AND of its words)', () => {
    assert.equal(ftsQuery('How many vacation days do employees get?'), '"many" OR "vacation" OR "days" OR "employees" OR "get"');
    assert.equal(ftsQuery('NEAR(a b) AND title:x* -y ^z'), '"near" OR "b" OR "title" OR "x" OR "y" OR "z"');
    assert.equal(ftsQuery('the of and'), '"the" OR "of" OR "and"', 'stopwords are kept when nothing else is left');
    assert.equal(ftsQuery('Café  CAFÉ cafe'), '"cafe"', 'distinct, lowercased, accents folded');
    for (const q of ['', '   ', '???', '"()*:^-', '\u0000\u200b']) assert.equal(ftsQuery(q), null, JSON.stringify(q));
  });

  it('operators and column names in user text are plain words, and OR finds a chunk with one of them', () => {
    const { db, rows } = table();
    try {
      for (const q of [
        'NOT',
        '"quotes',
        'quotes"',
        '(parentheses',
        'NEAR(operator words)',
        'title:plain',
        '-plain',
        'plain*',
        'tokyo',
        '東京',
        'CAFE',
      ]) {
        assert.deepEqual(rows(ftsQuery(q)!), [1], q);
      }
      // Only one word of the question is in the chunk: still found.
      assert.deepEqual(rows(ftsQuery('Is the operator reimbursed for zebras?')!), [1, 2]);
      // Naming the hidden filing column or its tokens matches nothing: user text cannot reach it.
      assert.deepEqual(rows(ftsQuery('filing:osecretorg')!), []);
      assert.deepEqual(rows(ftsQuery('osecretorg OR ootherorg')!), []);
    } finally {
      db.close();
    }
  });

  it('no hostile input is an FTS5 syntax error (seeded fuzz)', () => {
    const { db, rows } = table();
    const next = random(5);
    try {
      for (let i = 0; i < 5000; i++) {
        let q = '';
        for (let n = 1 + Math.floor(next() * 10); n > 0; n--) q += HOSTILE[Math.floor(next() * HOSTILE.length)]!;
        const m = ftsQuery(q);
        if (m === null) continue;
        assert.match(m, /^"[^"]+"( OR "[^"]+")*$/, JSON.stringify(q));
        assert.doesNotThrow(() => rows(m), JSON.stringify(q));
      }
    } finally {
      db.close();
    }
  });
});
