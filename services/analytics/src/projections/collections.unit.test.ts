import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { countRowId, jsonStrings } from './collections.js';

describe('jsonStrings', () => {
  it('writes what JSON.stringify writes for any strings', () => {
    const anyString = fc.oneof(
      fc.string(),
      fc.string({ unit: 'binary' }),
      fc.constantFrom('"', '\\', '\n', '\u0000', '\ud800', '😀', '\u2028', '*'),
    );
    fc.assert(
      fc.property(fc.array(anyString, { maxLength: 6 }), (parts) => assert.equal(jsonStrings(parts), JSON.stringify(parts))),
      { numRuns: 2000 },
    );
  });

  it('keeps the ids count rows were stored under', () => {
    const key = { org_id: 'o-1', day: '2026-11-25', prompt_id: 'tag:t"1', model: 'gpt-4.1', location: 'global' };
    assert.equal(countRowId(key), JSON.stringify(['o-1', '2026-11-25', 'tag:t"1', 'gpt-4.1', 'global']));
  });
});
