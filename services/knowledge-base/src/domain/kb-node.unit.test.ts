import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import type { StoredEvent } from '@kb/store';
import { fold, type DecidedEvent } from '@kb/eventsourcing';
import { AppError } from '@kb/platform';
import { kbNodeDecider, rootIdOf, type KbNodeCommand, type KbNodeState } from './kb-node.js';
import { isInScope, visiblePath, wouldCycle } from './folder-scope.js';

const ORG = '11111111-1111-4111-8111-111111111111';
const AT = '2026-01-01T00:00:00.000Z';
const stored = (events: DecidedEvent[]): StoredEvent[] =>
  events.map((e, i) => ({
    ...e,
    id: `e${i}`,
    schema: 1,
    metadata: { org_id: ORG },
    stream_id: 's',
    version: i + 1,
    position: i + 1,
    recorded_at: AT,
  }));
const run = (history: DecidedEvent[], command: KbNodeCommand) => kbNodeDecider.decide(command, fold(kbNodeDecider, stored(history)));
const kindOf = (fn: () => unknown) => {
  try {
    fn();
    return 'ok';
  } catch (err) {
    assert.ok(err instanceof AppError, String(err));
    return err.kind;
  }
};

const folderCreated = (id: string, parent: string | null, name = 'F'): DecidedEvent[] =>
  kbNodeDecider.decide(
    { type: 'create', kb_node_id: id, org_id: ORG, node_type: 'folder', parent_id: parent, name, at: AT },
    kbNodeDecider.initialState(),
  );

describe('kb node decider', () => {
  it('derives one stable root id per organization, shaped as a uuid', () => {
    assert.equal(rootIdOf(ORG), rootIdOf(ORG));
    assert.notEqual(rootIdOf(ORG), rootIdOf('22222222-2222-4222-8222-222222222222'));
    assert.match(rootIdOf(ORG), /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('trims folder names and refuses empty or over-long ones', () => {
    assert.equal((folderCreated('n', 'p', '  Docs ')[0]!.data as { name: string }).name, 'Docs');
    assert.equal(
      kindOf(() => folderCreated('n', 'p', '   ')),
      'validation',
    );
    assert.equal(
      kindOf(() => folderCreated('n', 'p', 'x'.repeat(256))),
      'validation',
    );
  });

  it('names a content node after its title, cut to fit', () => {
    const events = kbNodeDecider.decide(
      {
        type: 'create',
        kb_node_id: 'n',
        org_id: ORG,
        node_type: 'content',
        parent_id: 'p',
        name: 't'.repeat(300),
        content_id: 'c',
        at: AT,
      },
      kbNodeDecider.initialState(),
    );
    assert.equal((events[0]!.data as { name: string }).name.length, 255);
  });

  it('refuses to move or delete the root, or to move a folder into itself', () => {
    const root = folderCreated('r', null);
    assert.equal(
      kindOf(() => run(root, { type: 'move', org_id: ORG, parent_id: 'x', at: AT })),
      'conflict',
    );
    assert.equal(
      kindOf(() => run(root, { type: 'delete', org_id: ORG, at: AT })),
      'conflict',
    );
    const f = folderCreated('f', 'r');
    assert.equal(
      kindOf(() => run(f, { type: 'move', org_id: ORG, parent_id: 'f', at: AT })),
      'conflict',
    );
  });

  it('decides nothing for a no-op rename or move, and not_found for another organization or a deleted node', () => {
    const f = folderCreated('f', 'r', 'Same');
    assert.deepEqual(run(f, { type: 'rename', org_id: ORG, name: ' Same ', at: AT }), []);
    assert.deepEqual(run(f, { type: 'move', org_id: ORG, parent_id: 'r', at: AT }), []);
    assert.equal(
      kindOf(() => run(f, { type: 'rename', org_id: 'other', name: 'X', at: AT })),
      'not_found',
    );
    const deleted = [...f, ...run(f, { type: 'delete', org_id: ORG, at: AT })];
    assert.equal(
      kindOf(() => run(deleted, { type: 'rename', org_id: ORG, name: 'X', at: AT })),
      'not_found',
    );
  });

  it('carries the content id on the deletion of a content node', () => {
    const created = kbNodeDecider.decide(
      { type: 'create', kb_node_id: 'n', org_id: ORG, node_type: 'content', parent_id: 'p', name: 'T', content_id: 'c', at: AT },
      kbNodeDecider.initialState(),
    );
    const state: KbNodeState = fold(kbNodeDecider, stored(created));
    assert.equal((kbNodeDecider.decide({ type: 'delete', org_id: ORG, at: AT }, state)[0]!.data as { content_id: string }).content_id, 'c');
  });
});

describe('folder scope', () => {
  it('lets null see everything, an empty scope nothing, and a scope its folders and what is below them', () => {
    assert.equal(isInScope(null, ['n', 'root']), true);
    assert.equal(isInScope([], ['n', 'root']), false);
    assert.equal(isInScope(['a'], ['n', 'a', 'root']), true);
    assert.equal(isInScope(['a'], ['a', 'root']), true);
    assert.equal(isInScope(['a'], ['b', 'root']), false);
    assert.equal(isInScope(['a'], ['root']), false, 'the root is outside a scope that does not name it');
  });

  it('shows a scoped caller the path from its highest scope folder down', () => {
    const path = ['root', 'a', 'b', 'c'].map((kb_node_id) => ({ kb_node_id }));
    assert.deepEqual(
      visiblePath(['b', 'a'], path).map((n) => n.kb_node_id),
      ['a', 'b', 'c'],
    );
    assert.deepEqual(visiblePath(null, path), path);
    assert.deepEqual(visiblePath(['x'], path), []);
  });

  it('finds cycles: a move under the node itself or its descendants', () => {
    assert.equal(wouldCycle('a', ['c', 'b', 'a', 'root']), true);
    assert.equal(wouldCycle('a', ['a', 'root']), true);
    assert.equal(wouldCycle('a', ['x', 'root']), false);
  });
});
