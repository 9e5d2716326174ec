import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { daysBetween, daysOfMonth, periodsOf } from './periods.js';

const DAY_MS = 86_400_000;

/** The Date-based forms these replace: the oracle. */
function daysByDate(from: string, to: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += DAY_MS)
    out.push(new Date(t).toISOString().slice(0, 10));
  return out;
}
function periodsByDate(from: string, to: string): string[] {
  const out: string[] = [];
  for (const day of daysByDate(from, to)) {
    const month = day.slice(0, 7);
    const first = `${month}-01`;
    const next = new Date(Date.UTC(Number(day.slice(0, 4)), Number(day.slice(5, 7)), 1)).toISOString().slice(0, 10);
    const last = new Date(Date.parse(`${next}T00:00:00Z`) - DAY_MS).toISOString().slice(0, 10);
    if (first >= from && last <= to) {
      if (out.at(-1) !== month) out.push(month);
    } else out.push(day);
  }
  return out;
}

const day = fc
  .integer({ min: Date.UTC(1999, 0, 1) / DAY_MS, max: Date.UTC(2101, 11, 31) / DAY_MS })
  .map((n) => new Date(n * DAY_MS).toISOString().slice(0, 10));

describe('report periods', () => {
  it('days and periods of any window equal the Date-based computation (leap years, month and year ends)', () => {
    fc.assert(
      fc.property(day, fc.integer({ min: -3, max: 800 }), (from, span) => {
        const to = new Date(Date.parse(`${from}T00:00:00Z`) + span * DAY_MS).toISOString().slice(0, 10);
        assert.deepEqual(daysBetween(from, to), daysByDate(from, to));
        assert.deepEqual(periodsOf(from, to), periodsByDate(from, to));
      }),
      { numRuns: 500 },
    );
  });

  it('names whole months by month and edge days by day', () => {
    assert.deepEqual(periodsOf('2024-01-30', '2024-03-01'), ['2024-01-30', '2024-01-31', '2024-02', '2024-03-01']);
    assert.deepEqual(daysBetween('2024-02-28', '2024-03-01'), ['2024-02-28', '2024-02-29', '2024-03-01']);
    assert.deepEqual(daysBetween('2100-02-28', '2100-03-01'), ['2100-02-28', '2100-03-01']);
    assert.deepEqual(periodsOf('2025-01-01', '2025-12-31').length, 12);
    assert.deepEqual(daysBetween('2025-01-02', '2025-01-01'), []);
    assert.equal(daysOfMonth('2024-02').length, 29);
    assert.deepEqual(daysOfMonth('2025-02').at(-1), '2025-02-28');
  });
});
