import { afterEach, beforeEach, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger, systemClock } from '@kb/platform';
import { createChangeSignal } from './change-signal.js';
import { openBusDatabase, type BusDatabase } from './database.js';
import { createLog } from './log.js';
import { createMembership } from './membership.js';
import { createBusPoller, type PollView } from './poller.js';

/** The poll shared by the consumer groups of one bus connection. */

let dir: string;
let db: BusDatabase;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'kb-poller-'));
  db = openBusDatabase(join(dir, 'bus.db'));
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

function setUp() {
  const log = createLog(db);
  const membership = createMembership(db, log);
  const changes = createChangeSignal(db);
  const calls = { heads: 0, members: 0, counts: 0, commits: 0 };
  const counted = {
    ...log,
    heads: (topics: string[]) => (calls.heads++, log.heads(topics)),
    allPartitionCounts: () => (calls.counts++, log.allPartitionCounts()),
  };
  const countedMembership = {
    ...membership,
    liveMembersByGroup: (cutoff: number) => (calls.members++, membership.liveMembersByGroup(cutoff)),
    commitMany: (c: Parameters<typeof membership.commitMany>[0]) => (calls.commits++, membership.commitMany(c)),
  };
  const poller = createBusPoller({
    log: counted,
    membership: countedMembership,
    changes,
    clock: systemClock,
    logger: silentLogger(),
    pollIntervalMs: 60_000,
    sessionTimeoutMs: 10_000,
  });
  return { log, membership, changes, poller, calls };
}

describe('sqlite bus poller', () => {
  it('runs each query once per poll however many groups ask, and only when asked', () => {
    const { log, membership, poller, calls } = setUp();
    log.ensureTopics(['t'], 2);
    membership.heartbeat('g1', 'm1', ['t'], Date.now(), 0);
    membership.heartbeat('g2', 'm2', ['t'], Date.now(), 0);
    const seen: Array<{ group: string; members: string[]; heads: number }> = [];
    const group = (name: string) => ({
      topics: ['t'],
      poll(view: PollView) {
        seen.push({ group: name, members: view.liveMembers(name).map((m) => m.memberId), heads: view.heads().size });
        view.partitionCounts();
      },
    });
    poller.add(group('g1'));
    poller.add(group('g2'));
    poller.add({ topics: [], poll: () => {} });
    try {
      assert.equal(seen.length, 5, 'three polls (each add polls at once): g1, then g1 and g2 twice');
      assert.deepEqual(calls, { heads: 3, members: 3, counts: 3, commits: 0 }, 'each query once per poll, though two groups asked');
      assert.deepEqual(seen.slice(-2), [
        { group: 'g1', members: ['m1'], heads: 2 },
        { group: 'g2', members: ['m2'], heads: 2 },
      ]);
    } finally {
      poller.close();
    }
  });

  it('tells a publish on this connection from a change of membership, and counts another connection as both', () => {
    const { changes } = setUp();
    changes.look();
    assert.deepEqual(changes.look(), { messages: false, membership: false });
    changes.touch('messages');
    assert.deepEqual(changes.look(), { messages: true, membership: false });
    changes.touch('membership');
    assert.deepEqual(changes.look(), { messages: false, membership: true });
    const other = openBusDatabase(join(dir, 'bus.db'));
    try {
      createLog(other).ensureTopics(['elsewhere'], 1);
    } finally {
      other.close();
    }
    assert.deepEqual(changes.look(), { messages: true, membership: true });
  });

  it('writes the offsets handed in during a turn in one transaction after it, the latest per partition, while the claim is held', async () => {
    const { log, membership, poller, calls } = setUp();
    log.ensureTopics(['t'], 2);
    const cutoff = Date.now() - 10_000;
    membership.heartbeat('g', 'm1', ['t'], Date.now(), cutoff);
    membership.heartbeat('g', 'm2', ['t'], Date.now(), cutoff);
    assert.ok(membership.claim('g', 'm1', 't', 0, cutoff));
    assert.ok(membership.claim('g', 'm2', 't', 1, cutoff));
    const lost: string[] = [];
    const commit = (memberId: string, partition: number, nextOffset: number) =>
      poller.commit({ groupId: 'g', memberId, topic: 't', partition, nextOffset, onLost: () => lost.push(`${memberId}:${partition}`) });
    commit('m1', 0, 3);
    commit('m1', 0, 7);
    commit('m1', 1, 5); // m2 holds partition 1
    assert.equal(log.committed('g', 't', 0), undefined, 'nothing written in the same turn');
    await new Promise((r) => setImmediate(r));
    assert.equal(calls.commits, 1, 'one transaction for the turn');
    assert.equal(log.committed('g', 't', 0), 7);
    assert.equal(log.committed('g', 't', 1), undefined);
    assert.deepEqual(lost, ['m1:1']);
    poller.flush();
    assert.equal(calls.commits, 1, 'nothing pending: no transaction');
    poller.close();
  });
});
