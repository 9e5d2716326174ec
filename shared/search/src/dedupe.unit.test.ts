import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { collapseNearDuplicates } from './dedupe.js';

const para =
  'The quarterly report shows revenue grew by twelve percent while costs stayed flat across all regions this year. ' +
  'Hiring slowed in the second half, and the board approved the new pricing model for enterprise customers. ' +
  'Churn fell to its lowest level since the company started tracking it, mostly thanks to the onboarding changes.';

describe('collapseNearDuplicates', () => {
  it('keeps the best-ranked of near-identical chunks and distinct ones', () => {
    const hits = [
      para,
      `${para} `,
      para.replace('twelve', 'eleven'),
      'A completely different chunk about hiring plans for next spring.',
      para.toUpperCase(),
    ];
    const { kept, examined } = collapseNearDuplicates(hits, (h) => h);
    assert.deepEqual(kept, [para, 'A completely different chunk about hiring plans for next spring.']);
    assert.equal(examined, 5);
  });

  it('does not collapse chunks that share only part of their text', () => {
    const a = 'Alpha beta gamma delta epsilon zeta eta theta iota kappa.';
    const b = 'Alpha beta gamma delta epsilon lambda mu nu xi omicron.';
    assert.equal(collapseNearDuplicates([a, b], (h) => h).kept.length, 2);
  });

  it('stops once the limit of distinct hits is reached', () => {
    const { kept, examined } = collapseNearDuplicates(['one two three', 'four five six', 'seven eight nine'], (h) => h, { limit: 2 });
    assert.equal(kept.length, 2);
    assert.equal(examined, 2);
  });
});
