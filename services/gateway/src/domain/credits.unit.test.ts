import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { AppError } from '@kb/platform';
import { creditsDecider, type CreditsCommand } from './credits.js';
import { run } from './testing.js';

const ORG = '11111111-1111-4111-8111-111111111111';
const R1 = '22222222-2222-4222-8222-222222222222';
const R2 = '33333333-3333-4333-8333-333333333333';
const nov = '2026-11-20T10:00:00.000Z';
const dec = '2026-12-01T00:00:00.000Z';
const grant = (amount: number): CreditsCommand => ({ type: 'grant', org_id: ORG, amount, reason: 'test', at: nov });
const reserve = (reservation_id: string, amount: number, at = nov): CreditsCommand => ({
  type: 'reserve',
  org_id: ORG,
  reservation_id,
  operation: 'query',
  amount,
  at,
});
const limit = (monthly_limit: number | null): CreditsCommand => ({ type: 'set_spend_limit', org_id: ORG, monthly_limit, at: nov });

const paymentRequired = (commands: CreditsCommand[], code: string) =>
  assert.throws(
    () => run(creditsDecider, commands),
    (err: unknown) => err instanceof AppError && err.httpStatus === 402 && err.code === code,
  );

describe('credits decider', () => {
  it('holds a reservation against the balance: never more than what is left', () => {
    paymentRequired([reserve(R1, 1)], 'insufficient_credits');
    paymentRequired([grant(5), reserve(R1, 3), reserve(R2, 3)], 'insufficient_credits');
    const { state } = run(creditsDecider, [grant(5), reserve(R1, 3), reserve(R2, 2)]);
    assert.equal(state.balance, 0);
  });

  it('settling keeps the cost spent; releasing gives it back', () => {
    const settled = run(creditsDecider, [grant(5), reserve(R1, 3), { type: 'settle', org_id: ORG, reservation_id: R1, at: nov }]);
    assert.equal(settled.state.balance, 2);
    assert.deepEqual(settled.state.held, {});
    assert.equal(settled.events.at(-1)?.data.amount, 3);
    const released = run(creditsDecider, [grant(5), reserve(R1, 3), { type: 'release', org_id: ORG, reservation_id: R1, at: nov }]);
    assert.equal(released.state.balance, 5);
    assert.equal(released.state.month_spent, 0);
    assert.throws(() => run(creditsDecider, [grant(5), { type: 'settle', org_id: ORG, reservation_id: R1, at: nov }]), /not found/);
  });

  it('settling less than was reserved spends that much and gives the rest back', () => {
    const partly = run(creditsDecider, [
      grant(20),
      reserve(R1, 10),
      { type: 'settle', org_id: ORG, reservation_id: R1, amount: 3, at: nov },
    ]);
    assert.equal(partly.state.balance, 17);
    assert.equal(partly.state.month_spent, 3);
    assert.deepEqual(partly.state.held, {});
    assert.deepEqual(
      [partly.events.at(-1)?.type, partly.events.at(-1)?.data.amount, partly.events.at(-1)?.data.refunded],
      ['credits.settled', 3, 7],
    );
    const whole = run(creditsDecider, [
      grant(20),
      reserve(R1, 10),
      { type: 'settle', org_id: ORG, reservation_id: R1, amount: 10, at: nov },
    ]);
    assert.equal(whole.state.balance, 10);
    assert.equal(whole.events.at(-1)?.data.refunded, undefined);
  });

  it('applies the monthly spend limit to spent and held credits, starting afresh each month', () => {
    paymentRequired([grant(100), limit(5), reserve(R1, 4), reserve(R2, 2)], 'spend_limit_reached');
    const nextMonth = run(creditsDecider, [grant(100), limit(5), reserve(R1, 4), reserve(R2, 5, dec)]);
    assert.equal(nextMonth.state.month, '2026-12');
    assert.equal(nextMonth.state.month_spent, 5);
    const lifted = run(creditsDecider, [grant(100), limit(5), reserve(R1, 4), limit(null), reserve(R2, 50)]);
    assert.equal(lifted.state.balance, 46);
  });
});

describe('credits carried forward', () => {
  it('opens a new stream with exactly the state the previous one ended with, once', () => {
    const { state } = run(creditsDecider, [grant(10), limit(8), reserve(R1, 3)]);
    const carried = run(creditsDecider, [{ type: 'carry_forward', org_id: ORG, epoch: 1, from: state, at: nov }]);
    assert.deepEqual(carried.state, state);
    const settled = run(creditsDecider, [
      { type: 'carry_forward', org_id: ORG, epoch: 1, from: state, at: nov },
      { type: 'release', org_id: ORG, reservation_id: R1, at: nov },
    ]);
    assert.equal(settled.state.balance, 10);
    assert.throws(() => run(creditsDecider, [grant(1), { type: 'carry_forward', org_id: ORG, epoch: 1, from: state, at: nov }]));
  });
});
