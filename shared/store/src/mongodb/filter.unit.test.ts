import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { toMongoFilter, toMongoSort } from './filter.js';
import { createSerialQueue } from './serial.js';

describe('mongodb filter translation', () => {
  it('maps equality, null, $in and booleans, with id on _id', () => {
    assert.deepEqual(toMongoFilter({ org_id: 'o1', deleted_at: null, flag: true, id: { $in: ['1', '2'] } }), {
      org_id: { $eq: 'o1' },
      deleted_at: null,
      flag: { $eq: true },
      _id: { $in: ['1', '2'] },
    });
    assert.deepEqual(toMongoFilter(undefined), {});
  });

  it('refuses field names that Mongo would read as paths or operators', () => {
    assert.throws(() => toMongoFilter({ 'a.b': 1 }), /Invalid document field name/);
    assert.throws(() => toMongoFilter({ $where: 'x' }), /Invalid document field name/);
    assert.throws(() => toMongoSort([{ field: 'a.b', order: 'asc' }]), /Invalid document field name/);
  });

  it('sorts in the given order and breaks ties on _id', () => {
    const sort = toMongoSort([
      { field: 'rank', order: 'desc' },
      { field: 'name', order: 'asc' },
    ]);
    assert.deepEqual(Object.entries(sort), [
      ['rank', -1],
      ['name', 1],
      ['_id', 1],
    ]);
    assert.deepEqual(toMongoSort([{ field: 'id', order: 'desc' }]), { _id: -1 });
    assert.deepEqual(toMongoSort(undefined), { _id: 1 });
  });
});

describe('mongodb transaction operation queue', () => {
  it('runs operations one at a time in call order, past failures', async () => {
    const serial = createSerialQueue();
    const log: string[] = [];
    const op = (name: string, ms: number, fail = false) =>
      serial(async () => {
        log.push(`start ${name}`);
        await new Promise((r) => setTimeout(r, ms));
        log.push(`end ${name}`);
        if (fail) throw new Error(name);
        return name;
      });
    const results = await Promise.allSettled([op('a', 20), op('b', 1, true), op('c', 5)]);
    assert.deepEqual(log, ['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
  });
});
