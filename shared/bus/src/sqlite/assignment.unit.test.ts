import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { assignPartitions } from './assignment.js';

const flat = (assignment: Map<string, Array<{ topic: string; partition: number }>>) =>
  Object.fromEntries([...assignment].map(([member, tps]) => [member, tps.map((tp) => `${tp.topic}/${tp.partition}`)]));

describe('assignPartitions', () => {
  it('deals partitions round-robin over the sorted members, whatever order they are listed in', () => {
    const counts = new Map([['t', 4]]);
    const expected = { m1: ['t/0', 't/2'], m2: ['t/1', 't/3'] };
    assert.deepEqual(
      flat(
        assignPartitions(
          [
            { memberId: 'm1', topics: ['t'] },
            { memberId: 'm2', topics: ['t'] },
          ],
          counts,
        ),
      ),
      expected,
    );
    assert.deepEqual(
      flat(
        assignPartitions(
          [
            { memberId: 'm2', topics: ['t'] },
            { memberId: 'm1', topics: ['t'] },
          ],
          counts,
        ),
      ),
      expected,
    );
  });

  it('gives every partition to exactly one member, and members beyond the partition count nothing', () => {
    const members = ['a', 'b', 'c'].map((memberId) => ({ memberId, topics: ['t'] }));
    const result = flat(assignPartitions(members, new Map([['t', 2]])));
    assert.deepEqual(result, { a: ['t/0'], b: ['t/1'], c: [] });
  });

  it('spreads single-partition topics across members instead of piling them on the first', () => {
    const members = ['a', 'b'].map((memberId) => ({ memberId, topics: ['x', 'y'] }));
    const result = flat(
      assignPartitions(
        members,
        new Map([
          ['x', 1],
          ['y', 1],
        ]),
      ),
    );
    assert.deepEqual(result, { a: ['x/0'], b: ['y/0'] });
  });

  it('assigns a topic only among the members subscribed to it', () => {
    const members = [
      { memberId: 'a', topics: ['x'] },
      { memberId: 'b', topics: ['x', 'y'] },
    ];
    const result = flat(
      assignPartitions(
        members,
        new Map([
          ['x', 2],
          ['y', 2],
        ]),
      ),
    );
    assert.deepEqual(result, { a: ['x/0'], b: ['x/1', 'y/0', 'y/1'] });
  });
});
