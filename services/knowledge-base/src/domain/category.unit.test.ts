import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { AppError } from '@kb/platform';
import type { StoredEvent } from '@kb/store';
import { evolveFrom } from '@kb/eventsourcing';
import { categoryDecider, type CategoryCommand, type CategoryState } from './category.js';

const ORG = '11111111-1111-4111-8111-111111111111';
const OTHER = '22222222-2222-4222-8222-222222222222';
const CAT = '33333333-3333-4333-8333-333333333333';
const at = '2026-01-01T00:00:00.000Z';

/** Runs commands through decide + evolve the way the command bus does. */
function given(commands: CategoryCommand[]): CategoryState {
  let state = categoryDecider.initialState();
  let version = 0;
  for (const c of commands) {
    for (const e of categoryDecider.decide(c, state)) {
      version += 1;
      const stored: StoredEvent = {
        ...e,
        id: `e${version}`,
        schema: 1,
        metadata: { org_id: ORG },
        stream_id: 's',
        version,
        position: version,
        recorded_at: at,
      };
      state = evolveFrom(categoryDecider, state, [stored]);
    }
  }
  return state;
}

const kind = (fn: () => unknown): string => {
  try {
    fn();
    return 'ok';
  } catch (err) {
    assert.ok(err instanceof AppError);
    return err.kind;
  }
};

const created: CategoryCommand = { type: 'create', category_id: CAT, org_id: ORG, name: '  Docs  ', at };

describe('category decider', () => {
  it('creates with a trimmed name and leaves absent descriptions out of the event', () => {
    const [event] = categoryDecider.decide(created, categoryDecider.initialState());
    assert.equal(event!.type, 'category.created');
    assert.equal(event!.data.name, 'Docs');
    assert.ok(!('description' in event!.data));
  });

  it('refuses to create twice', () => {
    assert.equal(
      kind(() => categoryDecider.decide(created, given([created]))),
      'conflict',
    );
  });

  it('treats another organization and a deleted category as not found', () => {
    const state = given([created]);
    assert.equal(
      kind(() => categoryDecider.decide({ type: 'update', org_id: OTHER, name: 'X1', at }, state)),
      'not_found',
    );
    const deleted = given([created, { type: 'delete', org_id: ORG, at }]);
    assert.equal(
      kind(() => categoryDecider.decide({ type: 'update', org_id: ORG, name: 'X1', at }, deleted)),
      'not_found',
    );
    assert.equal(
      kind(() => categoryDecider.decide({ type: 'delete', org_id: ORG, at }, deleted)),
      'not_found',
    );
  });

  it('keeps topic names unique in the category, case-insensitively, until a topic is deleted', () => {
    const add = (topic_id: string, name: string): CategoryCommand => ({ type: 'add_topic', org_id: ORG, topic_id, name, at });
    const state = given([created, add('t1', 'Setup')]);
    assert.equal(
      kind(() => categoryDecider.decide(add('t2', 'SETUP'), state)),
      'conflict',
    );
    const afterDelete = given([created, add('t1', 'Setup'), { type: 'delete_topic', org_id: ORG, topic_id: 't1', at }]);
    assert.equal(
      kind(() => categoryDecider.decide(add('t2', 'setup'), afterDelete)),
      'ok',
    );
    // Renaming a topic to its own name in another case is fine; to a sibling's is not.
    const two = given([created, add('t1', 'Setup'), add('t2', 'Upgrade')]);
    assert.equal(
      kind(() => categoryDecider.decide({ type: 'update_topic', org_id: ORG, topic_id: 't1', name: 'setup', at }, two)),
      'ok',
    );
    assert.equal(
      kind(() => categoryDecider.decide({ type: 'update_topic', org_id: ORG, topic_id: 't1', name: 'upgrade', at }, two)),
      'conflict',
    );
  });

  it('validates names and descriptions', () => {
    const state = given([created]);
    assert.equal(
      kind(() => categoryDecider.decide({ type: 'update', org_id: ORG, name: ' a ', at }, state)),
      'validation',
    );
    assert.equal(
      kind(() => categoryDecider.decide({ type: 'update', org_id: ORG, name: 'x'.repeat(256), at }, state)),
      'validation',
    );
    assert.equal(
      kind(() => categoryDecider.decide({ type: 'update', org_id: ORG, description: 'd'.repeat(1001), at }, state)),
      'validation',
    );
    assert.equal(
      kind(() => categoryDecider.decide({ type: 'update', org_id: ORG, description: null, at }, state)),
      'ok',
    );
  });

  it('reports unknown topics as not found', () => {
    const state = given([created]);
    assert.equal(
      kind(() => categoryDecider.decide({ type: 'delete_topic', org_id: ORG, topic_id: 'nope', at }, state)),
      'not_found',
    );
  });
});
