import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { isAppError } from '@kb/platform';
import type { Stored } from '@kb/eventsourcing';
import { eventCatalog, type PromptEvent } from '@kb/events';
import { promptDecider, variablesOf, type PromptCommand, type PromptState } from './prompt.js';

const org = randomUUID();
const id = randomUUID();
const at = '2026-01-01T00:00:00.000Z';

function run(commands: PromptCommand[]): { state: PromptState; events: { type: string; data: Record<string, unknown> }[] } {
  let state = promptDecider.initialState();
  const events: { type: string; data: Record<string, unknown> }[] = [];
  for (const c of commands) {
    for (const e of promptDecider.decide(c, state)) {
      eventCatalog.validate(e.type, 1, e.data);
      events.push(e);
      state = promptDecider.evolve(state, {
        ...e,
        id: randomUUID(),
        schema: 1,
        stream_id: 's',
        version: 1,
        position: 1,
        metadata: { org_id: org },
        recorded_at: at,
      } as Stored<PromptEvent>);
    }
  }
  return { state, events };
}

const created: PromptCommand = { type: 'create', prompt_id: id, org_id: org, name: ' Ask ', text: 'Hi {{who}}', tags: [], at };

describe('prompt decider', () => {
  it('creates with a trimmed name and the text verbatim; events match the shared catalogue', () => {
    const { state, events } = run([created]);
    assert.deepEqual(events[0], {
      type: 'prompt.created',
      data: { prompt_id: id, org_id: org, name: 'Ask', text: 'Hi {{who}}', tags: [], at },
    });
    assert.equal(state.status, 'active');
  });

  it('prompt.updated carries the whole prompt after the change; an update that changes nothing emits nothing', () => {
    const tag = randomUUID();
    const { events } = run([
      created,
      { type: 'update', org_id: org, tags: [tag, tag], at },
      { type: 'update', org_id: org, name: 'Ask', at },
    ]);
    assert.equal(events.length, 2);
    assert.deepEqual(events[1]!.data, { prompt_id: id, org_id: org, name: 'Ask', text: 'Hi {{who}}', tags: [tag], at });
  });

  it('deletes once; another organization, a deleted or a missing prompt is not found', () => {
    const { events } = run([created, { type: 'delete', org_id: org, at }]);
    assert.equal(events[1]!.type, 'prompt.deleted');
    const notFound = (e: unknown) => isAppError(e) && e.kind === 'not_found';
    assert.throws(() => run([created, { type: 'delete', org_id: org, at }, { type: 'update', org_id: org, text: 'x', at }]), notFound);
    assert.throws(() => run([created, { type: 'update', org_id: randomUUID(), text: 'x', at }]), notFound);
    assert.throws(() => run([{ type: 'delete', org_id: org, at }]), notFound);
  });

  it('rejects bad names and empty text', () => {
    const invalid = (e: unknown) => isAppError(e) && e.kind === 'validation';
    assert.throws(() => run([{ ...created, name: 'x' }]), invalid);
    assert.throws(() => run([{ ...created, name: 'n'.repeat(256) }]), invalid);
    assert.throws(() => run([{ ...created, text: '  ' }]), invalid);
  });

  it('lists {{variables}} once each, in order of first use', () => {
    assert.deepEqual(variablesOf('{{a}} {{ b }} {{a}} {{c.d}} {{ }} {not} {{1x}}'), ['a', 'b', 'c.d']);
  });
});
