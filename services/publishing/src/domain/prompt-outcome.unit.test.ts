import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { foldAnswer, outcomeOf } from './prompt-outcome.js';

const answer = (model: string, run_at: string, result: 'won' | 'lost' | 'none') => ({
  model,
  location: 'us',
  run_at,
  won: result === 'won',
  lost: result === 'lost',
});

describe('prompt outcome over the latest answers', () => {
  it('counts won against lost answers across models and locations', () => {
    assert.equal(outcomeOf({}), 'none');
    assert.equal(outcomeOf({ a: { run_at: 'x', result: 'won' } }), 'won');
    assert.equal(outcomeOf({ a: { run_at: 'x', result: 'won' }, b: { run_at: 'x', result: 'lost' } }), 'tied');
    assert.equal(outcomeOf({ a: { run_at: 'x', result: 'none' }, b: { run_at: 'x', result: 'lost' } }), 'lost');
  });

  it('changes with a newer answer of the same model and location, never with an older one', () => {
    let s = foldAnswer(undefined, answer('gpt', '2026-03-02T00:00:00Z', 'won'));
    assert.deepEqual([s.previous, s.state.outcome, s.changed], ['none', 'won', true]);
    const older = foldAnswer(s.state, answer('gpt', '2026-03-01T00:00:00Z', 'lost'));
    assert.deepEqual([older.state.outcome, older.changed], ['won', false]);
    s = foldAnswer(s.state, answer('claude', '2026-03-02T00:00:00Z', 'lost'));
    assert.deepEqual([s.previous, s.state.outcome], ['won', 'tied']);
    s = foldAnswer(s.state, answer('gpt', '2026-03-03T00:00:00Z', 'lost'));
    assert.deepEqual([s.previous, s.state.outcome, s.changed], ['tied', 'lost', true]);
    const same = foldAnswer(s.state, answer('gpt', '2026-03-04T00:00:00Z', 'lost'));
    assert.equal(same.changed, false);
  });
});
