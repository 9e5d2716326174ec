import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { SOURCE_MAPS, emptySourceCounts, mergeSourceCounts, type SourceCounts } from '../domain/counts.js';
import { addFamily, compactOf, familyOf, sumSourceRows, type Family } from './source-rows.js';
import * as oracle from '../domain/fold-oracle.test.js';

const KEYS = ['a.com', 'b.org/x', 'b.org/y', 'Z', '__proto__', 'constructor', 'é.net'];
/** A family as the fold writes it: every key with at least one run and one citation. */
const mapArb = fc.dictionary(
  fc.constantFrom(...KEYS),
  fc.tuple(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 0, max: 5 })).map(([r, extra]) => [r, r + extra] as const),
);
const toMaps = (m: Record<string, readonly [number, number]>) => ({
  runs: new Map(Object.entries(m).map(([k, [r]]) => [k, r])),
  cites: new Map(Object.entries(m).map(([k, [, c]]) => [k, c])),
});
const asMap = ([keys, runs, cites]: Family) => new Map(keys.map((k, i) => [k, [runs[i], cites[i]]]));
const sumMaps = (a: Record<string, readonly [number, number]>, b: Record<string, readonly [number, number]>, sign: number) => {
  const out = new Map<string, number[]>();
  for (const [k, v] of Object.entries(a)) out.set(k, [...v]);
  for (const [k, [r, c]] of Object.entries(b)) {
    const cur = out.get(k) ?? [0, 0];
    const next = [cur[0]! + sign * r, cur[1]! + sign * c];
    if (next[0] === 0 && next[1] === 0) out.delete(k);
    else out.set(k, next);
  }
  return out;
};
const sorted = (m: Map<string, unknown>) => new Map([...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

const sourceCountsArb: fc.Arbitrary<SourceCounts> = fc.tuple(mapArb, mapArb, mapArb, mapArb, fc.boolean()).map(([d, p, s, r, legacy]) => {
  const obj = (m: typeof d, i: 0 | 1) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, v[i]]));
  return {
    domain_runs: obj(d, 0),
    domain_citations: obj(d, 1),
    page_runs: obj(p, 0),
    page_citations: obj(p, 1),
    // Rows folded before per-rule and registrable-domain counts lack those maps.
    ...(!legacy && { site_runs: obj(s, 0), site_citations: obj(s, 1), rule_runs: obj(r, 0), rule_citations: obj(r, 1) }),
  };
});

describe('compact source rows', () => {
  it('add up family by family as the maps do, keys sorted, entries that reach 0 dropped', () => {
    fc.assert(
      fc.property(mapArb, mapArb, fc.constantFrom<1 | -1>(1, -1), (a, b, sign) => {
        const fa = familyOf(toMaps(a).runs, toMaps(a).cites);
        const fb = familyOf(toMaps(b).runs, toMaps(b).cites);
        const sum = addFamily(fa, fb, sign);
        assert.deepEqual([...asMap(sum)], [...sorted(sumMaps(a, b, sign))]);
        assert.deepEqual(sum[0], [...sum[0]].sort());
      }),
    );
  });

  it('sum to the same maps as the stored objects, whichever form each row is in', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(sourceCountsArb, fc.boolean()), { maxLength: 6 }), (rows) => {
        const direct = rows.reduce((acc, [s]) => mergeSourceCounts(acc, s), emptySourceCounts());
        const mixed = rows.map(([s, compact]) => (compact && s.site_runs ? compactOf(s) : s));
        const { merged, legacy } = sumSourceRows(mixed, SOURCE_MAPS);
        assert.deepEqual(JSON.parse(JSON.stringify(merged)), JSON.parse(JSON.stringify(direct)));
        assert.equal(
          legacy,
          rows.some(([s]) => !s.site_runs && Object.keys(s.page_citations).length > 0),
        );
        const some = sumSourceRows(mixed, ['rule_runs', 'rule_citations']).merged;
        assert.deepEqual({ ...some.rule_citations }, { ...direct.rule_citations });
        assert.equal(Object.keys(some.page_citations).length, 0);
      }),
    );
  });

  it('familyOf and compactOf equal the oracle (the code before their fast path) for tallies, stored objects and missing maps', () => {
    fc.assert(
      fc.property(mapArb, sourceCountsArb, fc.boolean(), (m, stored, noRuns) => {
        const { runs, cites } = toMaps(m);
        assert.deepEqual(familyOf(noRuns ? undefined : runs, cites), oracle.familyOf(noRuns ? undefined : runs, cites));
        assert.deepEqual(familyOf(stored.page_runs, stored.page_citations), oracle.familyOf(stored.page_runs, stored.page_citations));
        assert.deepEqual(familyOf(runs, undefined), oracle.familyOf(runs, undefined));
        assert.deepEqual(compactOf(stored), oracle.compactOf(stored));
      }),
    );
  });

  it('familyOf orders any keys as Array#sort does, below and above the insertion-sort size (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(
          fc.string({
            unit: fc.oneof(
              fc.constantFrom('a', 'A', 'b', 'B', '.', '/', 'é', '\u{1F600}', '\uFF5E'),
              fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
            ),
            maxLength: 4,
          }),
          { maxLength: 30 },
        ),
        (keys) => {
          const m = new Map(keys.map((k, i) => [k, i + 1]));
          assert.deepEqual(familyOf(m, m), oracle.familyOf(m, m));
          const o = Object.fromEntries(m);
          assert.deepEqual(familyOf(o, o), oracle.familyOf(o, o));
        },
      ),
    );
  });
});
