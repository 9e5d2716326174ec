import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { ingestExtraUnits } from './ingest-metering.js';

describe('ingest metering by stored characters', () => {
  it('charges nothing beyond the reserved unit up to one block, then one unit per started block', () => {
    assert.equal(ingestExtraUnits(0, 100_000), 0, 'an empty version still cost its reserved unit, nothing more');
    assert.equal(ingestExtraUnits(1, 100_000), 0);
    assert.equal(ingestExtraUnits(100_000, 100_000), 0);
    assert.equal(ingestExtraUnits(100_001, 100_000), 1);
    assert.equal(ingestExtraUnits(250_000, 100_000), 2);
    assert.equal(ingestExtraUnits(157_000_000, 100_000), 1569, 'the 1.5 MB DOCX that became 157 million characters');
  });

  it('refuses nonsense', () => {
    assert.throws(() => ingestExtraUnits(-1, 100_000), RangeError);
    assert.throws(() => ingestExtraUnits(1.5, 100_000), RangeError);
    assert.throws(() => ingestExtraUnits(10, 0), RangeError);
  });
});
