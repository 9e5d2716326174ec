import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { hotRows } from './hot-rows.js';

const text = (n: number) => JSON.stringify({ id: 'r', n });

describe('hot rows', () => {
  it('hands out a row parsed ahead only when it was written and read back twice running, once, and only for the text written', () => {
    const rows = hotRows();
    // Job 1 writes r; job 2 reads it back (a parse: it was not hot yet) and writes it again.
    rows.wrote([[['c', 'r', text(1)]]]);
    const second = rows.parse<{ n: number }>('c', 'r', text(1));
    assert.deepEqual(second, { id: 'r', n: 1 });
    rows.wrote([
      [
        ['c', 'r', text(2)],
        ['c', 'gone', null],
      ],
    ]);
    rows.prepare();
    // Job 3 reads r back unchanged: the copy parsed ahead, which nothing else holds.
    const third = rows.parse<{ n: number }>('c', 'r', text(2));
    assert.deepEqual(third, { id: 'r', n: 2 });
    third.n = 99;
    // A second read in the same job parses again: the early copy is used once.
    assert.deepEqual(rows.parse('c', 'r', text(2)), { id: 'r', n: 2 });
    rows.wrote([[['c', 'r', text(3)]]]);
    rows.prepare();
    // Stored text other than the text written (its transaction failed, or another wrote it): parsed now.
    const other = rows.parse<{ n: number; x?: number }>('c', 'r', JSON.stringify({ id: 'r', n: 3, x: 1 }));
    assert.deepEqual(other, { id: 'r', n: 3, x: 1 });
  });

  it('returns the same documents as JSON.parse over random jobs of writes and reads, whatever the copies handed out went through', () => {
    const rows = hotRows();
    const stored = new Map<string, string>();
    let seed = 7;
    const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    for (let job = 0; job < 200; job++) {
      const writes: [string, string, string | null][] = [];
      for (let k = 0; k < 5; k++) {
        const id = `r${rand(8)}`;
        const json = stored.get(id);
        if (json !== undefined) {
          const doc = rows.parse<{ id: string; n: number }>('c', id, json);
          assert.deepEqual(doc, JSON.parse(json));
          doc.n += 1000; // a fold may change what it read
        }
        const next = rand(4) === 0 ? null : JSON.stringify({ id, n: rand(3) });
        writes.push(['c', id, next]);
      }
      rows.wrote([writes]);
      // Two jobs in three commit; the others' writes never reach the store.
      if (job % 3 !== 2)
        for (const [, id, json] of writes) {
          if (json === null) stored.delete(id);
          else stored.set(id, json);
        }
      // Sometimes another writer changes a row between jobs.
      if (rand(5) === 0) stored.set('r1', JSON.stringify({ id: 'r1', n: -job }));
      rows.prepare();
    }
  });
});
