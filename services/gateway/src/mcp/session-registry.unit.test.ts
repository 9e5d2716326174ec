import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { createSessionRegistry, type RegisteredSession } from './session-registry.js';

function fakeSession(owner: string, closed: string[], name: string): RegisteredSession {
  return {
    owner,
    credential: { 'x-api-key': owner },
    close: async () => {
      closed.push(name);
    },
  };
}

describe('MCP session registry', () => {
  it('closes a session idle for longer than the idle time; one in use stays', async () => {
    let t = 0;
    const closed: string[] = [];
    const registry = createSessionRegistry({ idleMs: 1000, perOwner: 10, now: () => t });
    await registry.add('a', fakeSession('k1', closed, 'a'));
    await registry.add('b', fakeSession('k1', closed, 'b'));
    t = 900;
    assert.ok(registry.get('b'));
    t = 1500;
    assert.deepEqual(await registry.sweep(), { idle: 1, revoked: 0 });
    assert.deepEqual(closed, ['a']);
    assert.equal(registry.get('a'), undefined);
    assert.ok(registry.get('b'));
  });

  it('a credential holds at most perOwner sessions: a new one closes its least recently used; others are not touched', async () => {
    let t = 0;
    const closed: string[] = [];
    const registry = createSessionRegistry({ idleMs: 60_000, perOwner: 2, now: () => t++ });
    await registry.add('a', fakeSession('k1', closed, 'a'));
    await registry.add('b', fakeSession('k1', closed, 'b'));
    await registry.add('other', fakeSession('k2', closed, 'other'));
    registry.get('a');
    await registry.add('c', fakeSession('k1', closed, 'c'));
    assert.deepEqual(closed, ['b']);
    assert.equal(registry.size('k1'), 2);
    assert.equal(registry.size('k2'), 1);
  });

  it('the sessions of a credential that no longer authenticates are closed (one probe per credential)', async () => {
    const closed: string[] = [];
    const registry = createSessionRegistry({ idleMs: 60_000, perOwner: 10 });
    await registry.add('a', fakeSession('revoked', closed, 'a'));
    await registry.add('b', fakeSession('revoked', closed, 'b'));
    await registry.add('c', fakeSession('live', closed, 'c'));
    const probed: string[] = [];
    const result = await registry.sweep(async (credential) => {
      probed.push(credential['x-api-key']!);
      return credential['x-api-key'] !== 'revoked';
    });
    assert.deepEqual(result, { idle: 0, revoked: 2 });
    assert.deepEqual(probed.sort(), ['live', 'revoked']);
    assert.deepEqual(closed.sort(), ['a', 'b']);
    assert.equal(registry.size(), 1);
  });
});
