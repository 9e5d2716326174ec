import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { transactionScope } from './transaction-scope.js';

describe('transaction scope', () => {
  it('is active inside its own run across awaits, not in another scope, and not outside', async () => {
    const a = transactionScope();
    const b = transactionScope();
    assert.equal(a.active(), false);
    const seen = await a.run(async () => {
      await sleep(1);
      const inA = { a: a.active(), b: b.active() };
      const inB = await b.run(async () => {
        await sleep(1);
        return { a: a.active(), b: b.active() };
      });
      return { inA, inB, afterB: { a: a.active(), b: b.active() } };
    });
    assert.deepEqual(seen, {
      inA: { a: true, b: false },
      inB: { a: true, b: true },
      afterB: { a: true, b: false },
    });
    assert.equal(a.active(), false);
    // Work started inside but running later still belongs to the scope it started in.
    let late: boolean | undefined;
    a.run(() => void setTimeout(() => (late = a.active()), 1));
    await sleep(10);
    assert.equal(late, true);
  });
});
