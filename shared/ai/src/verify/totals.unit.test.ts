import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { factCheckTotals } from './totals.js';

describe('fact check totals', () => {
  it('counts factual, supported and unsupported (contradicted included) and the ratio over factual', () => {
    const r = factCheckTotals([
      { verdict: 'supported' },
      { verdict: 'supported' },
      { verdict: 'contradicted' },
      { verdict: 'not_factual' },
      { verdict: 'unsupported' },
      { verdict: 'supported' },
      { verdict: 'supported' },
      { verdict: 'supported' },
      { verdict: 'supported' },
    ]);
    assert.deepEqual(r.totals, { sentences: 9, factual: 8, supported: 6, unsupported: 2 });
    assert.deepEqual(r.supported_ratio, { value: 0.75, display: '75.0%' });
    assert.equal(
      factCheckTotals([{ verdict: 'supported' }, { verdict: 'unsupported' }, { verdict: 'unsupported' }]).supported_ratio.display,
      '33.3%',
    );
  });

  it('gives a null ratio, never 0, when nothing is factual', () => {
    assert.deepEqual(factCheckTotals([{ verdict: 'not_factual' }]).supported_ratio, { value: null, display: 'n/a' });
    assert.deepEqual(factCheckTotals([]).totals, { sentences: 0, factual: 0, supported: 0, unsupported: 0 });
  });
});
