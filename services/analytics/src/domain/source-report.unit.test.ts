import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { emptyCounts, emptySourceCounts } from './counts.js';
import { ratio } from './ratios.js';
import { sortRows, sourceReport, type Order, type ReportWindow } from './reports.js';

const window: ReportWindow = { from: '2026-01-01', to: '2026-01-31', days: 31, timezone: 'UTC', filters: {} };

/** The report's rows as built before: every row with its ratios, sorted by them (the oracle). */
function oracleRows(
  kind: 'domain' | 'page',
  runs: Record<string, number>,
  cites: Record<string, number>,
  d: number,
  s: number,
  sort: string,
  order: Order,
) {
  const name = kind === 'domain' ? 'domain' : 'url';
  const all = Object.keys(cites).map((key) => ({
    [name]: key,
    answers_citing: runs[key] ?? 0,
    citations: cites[key]!,
    coverage: ratio(runs[key] ?? 0, d),
    share: ratio(cites[key]!, s),
    key,
  }));
  return sortRows(
    all,
    {
      [name]: (r) => r.key,
      answers_citing: (r) => r.answers_citing,
      citations: (r) => r.citations,
      coverage: (r) => r.coverage,
      share: (r) => r.share,
    },
    sort,
    order,
    (r) => r.key,
  ).map(({ key: _key, ...row }) => row);
}

describe('source report', () => {
  it('ranks by bare counts and gives the rows, ratios and order that ranking by the ratios gave', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ maxLength: 3 }), fc.tuple(fc.nat(20), fc.integer({ min: 1, max: 40 }))),
        fc.constantFrom<'domain' | 'page'>('domain', 'page'),
        fc.constantFrom('name', 'answers_citing', 'citations', 'coverage', 'share'),
        fc.constantFrom<Order>('asc', 'desc'),
        fc.nat(7),
        fc.integer({ min: 1, max: 5 }),
        fc.tuple(fc.nat(300), fc.nat(500)),
        (entries, kind, sortKey, order, offset, limit, [d, s]) => {
          const src = emptySourceCounts();
          const runs = kind === 'domain' ? src.domain_runs : src.page_runs;
          const cites = kind === 'domain' ? src.domain_citations : src.page_citations;
          for (const [k, [r, c]] of Object.entries(entries)) {
            runs[k] = r;
            cites[k] = c;
          }
          const sort = sortKey === 'name' ? (kind === 'domain' ? 'domain' : 'url') : sortKey;
          const counts = { ...emptyCounts(), cited_run_count: d, cited_total: s };
          const report = sourceReport(kind, window, counts, src, sort, order, { limit, offset }) as unknown as Record<string, unknown>;
          const rows = report[kind === 'domain' ? 'domains' : 'pages'];
          assert.deepEqual(rows, oracleRows(kind, runs, cites, d, s, sort, order).slice(offset, offset + limit));
          assert.equal(report.total_count, Object.keys(entries).length);
        },
      ),
      { numRuns: 500 },
    );
  });
});
