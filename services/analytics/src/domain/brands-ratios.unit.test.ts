import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { countOccurrences, extractBrands, findMentions } from './brands.js';
import { ratio, shares } from './ratios.js';
import { slotStart } from '../scheduler/slots.js';

describe('mentions', () => {
  it('counts whole-word, case-insensitive instances; overlapping names of one brand once', () => {
    assert.deepEqual(countOccurrences('Acme, ACME and acme. Acmeville is not.', ['Acme']), { count: 3, first: 0 });
    assert.equal(countOccurrences('Acme Corp leads; Acme follows', ['Acme', 'Acme Corp']).count, 2);
    assert.equal(countOccurrences('nothing here', ['Acme']).count, 0);
  });

  it('splits tracked brands from others; a listed brand the text spells differently counts once', () => {
    const m = findMentions(
      'Globex and Acme. Hooli!',
      [
        { key: 'org', names: ['Acme'] },
        { key: 'c1', names: ['Globex', 'GBX'] },
      ],
      ['GBX', 'Hooli', 'Vandelay'],
    );
    assert.deepEqual(
      m.tracked.map((t) => [t.key, t.count]),
      [
        ['org', 1],
        ['c1', 1],
      ],
    );
    assert.deepEqual(
      m.others.map((o) => [o.name, o.count]),
      [
        ['Hooli', 1],
        ['Vandelay', 1],
      ],
    );
    assert.ok(m.others[1]!.first > 'Globex and Acme. Hooli!'.length, 'listed but absent brands rank after the text');
  });

  it('extracts bold phrases and list leaders when the producer lists no brands', () => {
    const text =
      'Top picks:\n1. **Initech**: solid\n2. Hooli Cloud - fast\n- Vandelay: cheap\nAlso **Initech** again and **a lowercase thing**.';
    assert.deepEqual(extractBrands(text), ['Initech', 'Hooli Cloud', 'Vandelay']);
  });
});

describe('ratios (rule 9) and shares (rule 4)', () => {
  it('null, never 0, when the denominator is zero; unrounded value; one-decimal display', () => {
    assert.deepEqual(ratio(0, 0), { value: null, display: 'n/a' });
    assert.deepEqual(ratio(0, 5), { value: 0, display: '0.0%' });
    assert.deepEqual(ratio(1, 3), { value: 1 / 3, display: '33.3%' });
    assert.deepEqual(ratio(3, 7), { value: 3 / 7, display: '42.9%' });
  });

  it('share displays always sum to exactly 100.0% and values to 1', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 10_000 }), { minLength: 1, maxLength: 6 }), (parts) => {
        const total = parts.reduce((a, b) => a + b, 0);
        const out = shares(parts, total);
        if (total === 0) return out.every((r) => r.value === null);
        const tenths = out.reduce((s, r) => s + Math.round(parseFloat(r.display) * 10), 0);
        const sum = out.reduce((s, r) => s + r.value!, 0);
        return tenths === 1000 && Math.abs(sum - 1) < 1e-12 && out.every((r, i) => Math.abs(r.value! - parts[i]! / total) <= 1e-15);
      }),
    );
  });

  it('three tier share values add up to exactly 1 in every order (1/6 + 4/6 + 1/6 does not in plain division)', () => {
    assert.notEqual(1 / 6 + 4 / 6 + 1 / 6, 1);
    fc.assert(
      fc.property(fc.nat({ max: 1_000_000 }), fc.nat({ max: 1_000_000 }), fc.nat({ max: 1_000_000 }), (a, b, c) => {
        const total = a + b + c;
        if (total === 0) return true;
        const [x, y, z] = shares([a, b, c], total).map((r) => r.value!) as [number, number, number];
        const orders = [x + y + z, x + z + y, y + x + z, y + z + x, z + x + y, z + y + x];
        return orders.every((s) => s === 1) && [x, y, z].every((v, i) => Math.abs(v - [a, b, c][i]! / total) <= 1e-15);
      }),
      { numRuns: 5000, examples: [[1, 4, 1]] },
    );
  });
});

describe('run slots', () => {
  it('floor to the UTC hour, day, or Monday of the week', () => {
    const now = new Date('2026-03-05T13:47:12Z'); // a Thursday
    assert.equal(slotStart(now, 'hourly'), '2026-03-05T13:00:00.000Z');
    assert.equal(slotStart(now, 'daily'), '2026-03-05T00:00:00.000Z');
    assert.equal(slotStart(now, 'weekly'), '2026-03-02T00:00:00.000Z');
    assert.equal(slotStart(new Date('2026-03-08T23:00:00Z'), 'weekly'), '2026-03-02T00:00:00.000Z');
  });
});
