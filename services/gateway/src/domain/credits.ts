import { errors } from '@kb/platform';
import type { Decider } from '@kb/eventsourcing';
import type { CreditsCarriedForward, EventsNamed } from '@kb/events';

export type MeteredOperation = 'ingest' | 'query' | 'generation';

/**
 * One organization's credits. `balance` is what can still be spent: grants minus
 * settled and outstanding reservations, so a reservation that fits can never
 * drive it below zero. The monthly spend (settled + held, per UTC calendar
 * month) is checked against the optional limit.
 */
export interface CreditsState {
  balance: number;
  held: Record<string, { amount: number; operation: MeteredOperation; month: string }>;
  monthly_limit: number | null;
  month: string;
  month_spent: number;
  /** Whether this stream has no event yet (only a fresh stream can be carried forward into). */
  fresh: boolean;
}

export type CreditsCommand =
  | { type: 'grant'; org_id: string; amount: number; reason: string; at: string }
  | { type: 'reserve'; org_id: string; reservation_id: string; operation: MeteredOperation; amount: number; at: string }
  /** `amount`: what the operation cost when less than its reservation (the rest goes back to the balance). */
  | { type: 'settle'; org_id: string; reservation_id: string; amount?: number; at: string }
  | { type: 'release'; org_id: string; reservation_id: string; at: string }
  | {
      type: 'charge';
      org_id: string;
      charge_id: string;
      operation: MeteredOperation;
      amount: number;
      reason: string;
      at: string;
    }
  | { type: 'set_spend_limit'; org_id: string; monthly_limit: number | null; at: string }
  | { type: 'carry_forward'; org_id: string; epoch: number; from: CreditsState; at: string };

/**
 * An organization's credits live in a chain of bounded streams (epochs): when
 * one grows past a size, the next opens with the state carried forward.
 */
export const creditsStream = (orgId: string, epoch = 0) => (epoch === 0 ? `credits-${orgId}` : `credits-${orgId}-${epoch}`);

/** `2026-11` for any instant in November 2026 (UTC). */
export const monthOf = (at: string): string => at.slice(0, 7);

/** The spend counted against the limit in `month` (a new month starts from zero). */
export const spentIn = (state: CreditsState, month: string): number => (state.month === month ? state.month_spent : 0);

export const creditsDecider: Decider<CreditsCommand, CreditsState, EventsNamed<'credits'>> = {
  initialState: () => ({ balance: 0, held: {}, monthly_limit: null, month: '', month_spent: 0, fresh: true }),
  evolve(previous, event) {
    const state = previous.fresh ? { ...previous, fresh: false } : previous;
    const { type, data: d } = event;
    switch (type) {
      case 'credits.granted':
        return { ...state, balance: state.balance + d.amount };
      case 'credits.reserved': {
        const month = monthOf(d.at);
        return {
          ...state,
          balance: state.balance - d.amount,
          held: { ...state.held, [d.reservation_id]: { amount: d.amount, operation: d.operation, month } },
          month,
          month_spent: spentIn(state, month) + d.amount,
        };
      }
      case 'credits.settled': {
        const hold = state.held[d.reservation_id];
        const { [d.reservation_id]: _done, ...held } = state.held;
        const refunded = d.refunded ?? 0;
        if (!hold || refunded === 0) return { ...state, held };
        return {
          ...state,
          held,
          balance: state.balance + refunded,
          month_spent: state.month === hold.month ? Math.max(0, state.month_spent - refunded) : state.month_spent,
        };
      }
      case 'credits.released': {
        const hold = state.held[d.reservation_id];
        const { [d.reservation_id]: _done, ...held } = state.held;
        if (!hold) return state;
        return {
          ...state,
          held,
          balance: state.balance + hold.amount,
          month_spent: state.month === hold.month ? Math.max(0, state.month_spent - hold.amount) : state.month_spent,
        };
      }
      case 'credits.charged': {
        const month = monthOf(d.at);
        return { ...state, balance: state.balance - d.amount, month, month_spent: spentIn(state, month) + d.amount };
      }
      case 'credits.spend_limit_set':
        return { ...state, monthly_limit: d.monthly_limit ?? null };
      case 'credits.carried_forward': {
        return {
          balance: d.balance,
          held: Object.fromEntries(d.held.map(({ reservation_id, ...hold }) => [reservation_id, hold])),
          monthly_limit: d.monthly_limit,
          month: d.month,
          month_spent: d.month_spent,
          fresh: false,
        };
      }
      default:
        return state;
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'grant': {
        const { type: _t, ...data } = command;
        return [{ type: 'credits.granted', data }];
      }
      case 'reserve': {
        if (command.amount > state.balance) {
          throw errors.paymentRequired('Insufficient credits for this operation', {
            code: 'insufficient_credits',
            details: { needed: command.amount, balance: state.balance },
          });
        }
        const spent = spentIn(state, monthOf(command.at));
        if (state.monthly_limit !== null && spent + command.amount > state.monthly_limit) {
          throw errors.paymentRequired('The monthly spend limit is reached', {
            code: 'spend_limit_reached',
            details: { needed: command.amount, spent_this_month: spent, monthly_limit: state.monthly_limit },
          });
        }
        const { type: _t, ...data } = command;
        return [{ type: 'credits.reserved', data }];
      }
      case 'settle':
      case 'release': {
        const hold = state.held[command.reservation_id];
        if (!hold) throw errors.notFound('Reservation');
        const cost = command.type === 'settle' ? command.amount : undefined;
        if (cost !== undefined && cost < hold.amount) {
          if (!Number.isInteger(cost) || cost < 1) throw errors.internal(`Settling ${cost} credits`);
          const { org_id, reservation_id, at } = command;
          const data = { org_id, reservation_id, operation: hold.operation, amount: cost, refunded: hold.amount - cost, at };
          return [{ type: 'credits.settled', data }];
        }
        return [
          {
            type: command.type === 'settle' ? 'credits.settled' : 'credits.released',
            data: {
              org_id: command.org_id,
              reservation_id: command.reservation_id,
              operation: hold.operation,
              amount: hold.amount,
              at: command.at,
            },
          },
        ];
      }
      case 'charge': {
        // The work is done: charge what it cost, as far as the balance goes (never
        // below zero). The monthly limit stops the next reservation, not this.
        if (!Number.isInteger(command.amount) || command.amount < 1) throw errors.internal(`Charge of ${command.amount} credits`);
        const { type: _t, amount, ...rest } = command;
        return [{ type: 'credits.charged', data: { ...rest, amount: Math.min(amount, Math.max(0, state.balance)), requested: amount } }];
      }
      case 'carry_forward': {
        if (!state.fresh) throw errors.conflict('Credits stream already open', { code: 'concurrent_modification' });
        const { from } = command;
        const data: CreditsCarriedForward = {
          org_id: command.org_id,
          epoch: command.epoch,
          balance: from.balance,
          held: Object.entries(from.held).map(([reservation_id, hold]) => ({ reservation_id, ...hold })),
          monthly_limit: from.monthly_limit,
          month: from.month,
          month_spent: from.month_spent,
          at: command.at,
        };
        return [{ type: 'credits.carried_forward', data }];
      }
      case 'set_spend_limit':
        if (command.monthly_limit === state.monthly_limit) return [];
        return [
          { type: 'credits.spend_limit_set', data: { org_id: command.org_id, monthly_limit: command.monthly_limit, at: command.at } },
        ];
      default: {
        const never: never = command;
        throw new Error(`Unknown command ${JSON.stringify(never)}`);
      }
    }
  },
};
