import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { isUuid, randomIds, uuidV7 } from './ids.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const msOf = (id: string) => parseInt(id.slice(0, 8) + id.slice(9, 13), 16);

describe('randomIds (UUIDv7)', () => {
  it('makes version 7, variant 10 uuids carrying the time they were made', () => {
    const before = Date.now();
    const id = randomIds.uuid();
    assert.match(id, V7);
    assert.ok(isUuid(id));
    assert.ok(msOf(id) >= before && msOf(id) <= Date.now() + 1);
  });

  it('sort in the order they were made, within a millisecond too', () => {
    const ids = Array.from({ length: 20_000 }, () => randomIds.uuid());
    assert.deepEqual([...ids].sort(), ids);
    assert.equal(new Set(ids).size, ids.length);
  });

  it('keep increasing when the clock steps back or a millisecond runs out of counter', () => {
    const t = Date.now() + 10_000;
    const ids = [uuidV7(t), ...Array.from({ length: 5000 }, () => uuidV7(t)), uuidV7(t - 5000), uuidV7(t)];
    for (const id of ids) assert.match(id, V7);
    assert.deepEqual([...ids].sort(), ids);
    assert.ok(msOf(ids.at(-1)!) > t, 'past the counter of one millisecond, the timestamp moves on');
  });

  it('differ in their random bits', () => {
    const tails = new Set(Array.from({ length: 1000 }, () => uuidV7(0).slice(19)));
    assert.equal(tails.size, 1000);
  });
});
