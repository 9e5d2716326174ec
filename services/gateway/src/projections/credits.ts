import type { Projection } from '@kb/eventsourcing';
import type { StoreTransaction } from '@kb/store';

import { monthOf } from '../domain/credits.js';

export const CREDIT_BALANCES = 'credit_balances';
export const CREDIT_LEDGER = 'credit_ledger';
/** Which stream (epoch) of an organization's credits is the open one. */
export const CREDIT_EPOCHS = 'credit_epochs';
/** Reservations not yet settled or released: in-flight metered requests, or ones a crash abandoned. */
export const CREDIT_HOLDS = 'credit_holds';

export interface CreditHoldDoc {
  /** The reservation id. */
  id: string;
  org_id: string;
  operation: 'ingest' | 'query' | 'generation';
  amount: number;
  /** When it was reserved. */
  at: string;
}

export interface CreditBalanceDoc {
  id: string;
  org_id: string;
  balance: number;
  reserved: number;
  monthly_spend_limit: number | null;
  month: string;
  spent_this_month: number;
}

export interface CreditLedgerDoc {
  id: string;
  org_id: string;
  /** Store position of the event: orders the ledger. */
  seq: number;
  operation: 'grant' | 'ingest' | 'query' | 'generation';
  /** Positive for grants, negative for spending. */
  amount: number;
  /**
   * The organization's credits once this entry is booked: what was granted less
   * what was spent, up to and including it. Credits held for requests still in
   * flight are not spent yet and so not taken off (the live balance shows them
   * taken off): each entry's balance_after is the previous entry's plus its amount.
   */
  balance_after: number;
  reason: string | null;
  at: string;
}

async function balanceOf(tx: StoreTransaction, orgId: string): Promise<CreditBalanceDoc> {
  return (
    (await tx.get<CreditBalanceDoc>(CREDIT_BALANCES, orgId)) ?? {
      id: orgId,
      org_id: orgId,
      balance: 0,
      reserved: 0,
      monthly_spend_limit: null,
      month: '',
      spent_this_month: 0,
    }
  );
}

/** Balances, the ledger and the open stream of each organization's credits. */
export const creditsProjection: Projection = {
  name: 'credits',
  collections: [CREDIT_BALANCES, CREDIT_LEDGER, CREDIT_EPOCHS, CREDIT_HOLDS],
  indexes: [{ collection: CREDIT_LEDGER, fields: ['org_id'] }],
  async apply(tx, event) {
    switch (event.type) {
      case 'credits.granted': {
        const d = event.data;
        const b = await balanceOf(tx, d.org_id);
        const next = { ...b, balance: b.balance + d.amount };
        await tx.put(CREDIT_BALANCES, next);
        const entry: CreditLedgerDoc = {
          id: event.id,
          org_id: d.org_id,
          seq: event.position,
          operation: 'grant',
          amount: d.amount,
          balance_after: next.balance + next.reserved,
          reason: d.reason,
          at: d.at,
        };
        await tx.put(CREDIT_LEDGER, entry);
        return;
      }
      case 'credits.reserved': {
        const d = event.data;
        const b = await balanceOf(tx, d.org_id);
        const month = monthOf(d.at);
        const spent = b.month === month ? b.spent_this_month : 0;
        await tx.put(CREDIT_BALANCES, {
          ...b,
          balance: b.balance - d.amount,
          reserved: b.reserved + d.amount,
          month,
          spent_this_month: spent + d.amount,
        });
        const hold: CreditHoldDoc = { id: d.reservation_id, org_id: d.org_id, operation: d.operation, amount: d.amount, at: d.at };
        await tx.put(CREDIT_HOLDS, hold);
        return;
      }
      case 'credits.settled': {
        const d = event.data;
        const b = await balanceOf(tx, d.org_id);
        // What the operation did not use of its reservation goes back (see credits.settled).
        const refunded = d.refunded ?? 0;
        const hold = refunded ? await tx.get<CreditHoldDoc>(CREDIT_HOLDS, d.reservation_id) : undefined;
        const sameMonth = hold !== undefined && b.month === monthOf(hold.at);
        await tx.put(CREDIT_BALANCES, {
          ...b,
          balance: b.balance + refunded,
          reserved: b.reserved - d.amount - refunded,
          spent_this_month: sameMonth ? Math.max(0, b.spent_this_month - refunded) : b.spent_this_month,
        });
        await tx.delete(CREDIT_HOLDS, d.reservation_id);
        const entry: CreditLedgerDoc = {
          id: event.id,
          org_id: d.org_id,
          seq: event.position,
          operation: d.operation,
          amount: -d.amount,
          // Other reservations still open are not spent: they do not count against this entry.
          balance_after: b.balance + b.reserved - d.amount,
          reason: null,
          at: d.at,
        };
        await tx.put(CREDIT_LEDGER, entry);
        return;
      }
      case 'credits.released': {
        const d = event.data;
        const b = await balanceOf(tx, d.org_id);
        const reservedMonth = b.month === monthOf(d.at) ? b.month : '';
        await tx.put(CREDIT_BALANCES, {
          ...b,
          balance: b.balance + d.amount,
          reserved: b.reserved - d.amount,
          spent_this_month: reservedMonth ? Math.max(0, b.spent_this_month - d.amount) : b.spent_this_month,
        });
        await tx.delete(CREDIT_HOLDS, d.reservation_id);
        return;
      }
      case 'credits.charged': {
        const d = event.data;
        const b = await balanceOf(tx, d.org_id);
        const month = monthOf(d.at);
        const next = {
          ...b,
          balance: b.balance - d.amount,
          month,
          spent_this_month: (b.month === month ? b.spent_this_month : 0) + d.amount,
        };
        await tx.put(CREDIT_BALANCES, next);
        const entry: CreditLedgerDoc = {
          id: event.id,
          org_id: d.org_id,
          seq: event.position,
          operation: d.operation,
          amount: -d.amount,
          balance_after: next.balance + next.reserved,
          reason: d.amount < d.requested ? `${d.reason}; ${d.requested - d.amount} not charged: the balance ran out` : d.reason,
          at: d.at,
        };
        await tx.put(CREDIT_LEDGER, entry);
        return;
      }
      case 'credits.spend_limit_set': {
        const d = event.data;
        const b = await balanceOf(tx, d.org_id);
        await tx.put(CREDIT_BALANCES, { ...b, monthly_spend_limit: d.monthly_limit });
        return;
      }
      case 'credits.carried_forward': {
        const d = event.data;
        await tx.put(CREDIT_EPOCHS, { id: d.org_id, org_id: d.org_id, epoch: d.epoch });
        return;
      }
      default:
        return;
    }
  },
};
