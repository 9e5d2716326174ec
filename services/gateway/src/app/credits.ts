import { AppError, ConcurrencyError, errors, type Clock, type IdGenerator } from '@kb/platform';
import type { Store } from '@kb/store';
import type { CommandBus, CommandSession } from '@kb/eventsourcing';
import type { StoreTransaction } from '@kb/store';
import type { CallContext } from '@kb/rpc';
import { creditsDecider, creditsStream, type CreditsCommand, type MeteredOperation } from '../domain/credits.js';
import {
  CREDIT_BALANCES,
  CREDIT_EPOCHS,
  CREDIT_HOLDS,
  CREDIT_LEDGER,
  type CreditBalanceDoc,
  type CreditHoldDoc,
  type CreditLedgerDoc,
} from '../projections/credits.js';
import { actorOf } from './organizations.js';

/** Credits per unit of each metered operation (configuration). */
export type CreditCosts = Record<MeteredOperation, number>;

export interface Balance {
  balance: number;
  reserved: number;
  monthly_spend_limit: number | null;
  spent_this_month: number;
  month: string;
}

/** A reservation held for one metered request. */
export interface Reservation {
  org_id: string;
  reservation_id: string;
  amount: number;
}

const MAX_ATTEMPTS = 8;
/**
 * Events per credits stream before the next one opens (bounds what each
 * decision reads). Every metered request reserves and then settles, each a
 * decision over the open stream: at 500 a pair read 250 events on average and
 * cost about 5 ms of CPU; at 32 under 1 ms, for one carry-forward event per 32
 * (`npm run bench:credits`).
 */
export const DEFAULT_EPOCH_SIZE = 32;

/**
 * The credits ledger of each organization. Every change goes through the org's
 * one credits stream, so concurrent reservations are decided one after the other
 * (SQLite serialises transactions; elsewhere the append at the loaded version
 * conflicts and the reservation is decided again on the new state).
 */
export function createCreditsService(deps: {
  store: Store;
  commands: CommandBus;
  ids: IdGenerator;
  clock: Clock;
  costs: CreditCosts;
  epochSize?: number;
}) {
  const { store, commands, ids, clock } = deps;
  const epochSize = deps.epochSize ?? DEFAULT_EPOCH_SIZE;
  const now = () => clock.now().toISOString();

  /** Decides a command on the org's open credits stream, opening the next one when it is full. */
  async function decide(s: CommandSession, orgId: string, command: CreditsCommand): Promise<void> {
    const epoch = (await s.tx.get<{ id: string; epoch: number }>(CREDIT_EPOCHS, orgId))?.epoch ?? 0;
    const { state, events } = await s.execute(creditsDecider, creditsStream(orgId, epoch), command);
    const last = events.at(-1);
    if (last && last.version >= epochSize) {
      // The stream is full: the next one starts from this state, in the same transaction.
      await s.execute(creditsDecider, creditsStream(orgId, epoch + 1), {
        type: 'carry_forward',
        org_id: orgId,
        epoch: epoch + 1,
        from: state,
        at: command.at,
      });
    }
  }

  async function execute(orgId: string, actor: string, command: CreditsCommand): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await commands.transaction({ metadata: { org_id: orgId, actor } }, (s) => decide(s, orgId, command));
        return;
      } catch (err) {
        if (!(err instanceof ConcurrencyError) || attempt >= MAX_ATTEMPTS) throw err;
      }
    }
  }

  async function balance(orgId: string): Promise<Balance> {
    const doc = await store.get<CreditBalanceDoc>(CREDIT_BALANCES, orgId);
    const month = now().slice(0, 7);
    return {
      balance: doc?.balance ?? 0,
      reserved: doc?.reserved ?? 0,
      monthly_spend_limit: doc?.monthly_spend_limit ?? null,
      spent_this_month: doc && doc.month === month ? doc.spent_this_month : 0,
      month,
    };
  }

  return {
    costs: deps.costs,
    balance: (ctx: CallContext) => balance(ctx.org_id),

    async usage(ctx: CallContext, page: { limit: number; offset: number }) {
      const where = { org_id: ctx.org_id };
      const [entries, total] = await Promise.all([
        store.find<CreditLedgerDoc>(CREDIT_LEDGER, { where, sort: [{ field: 'seq', order: 'desc' }], ...page }),
        store.count(CREDIT_LEDGER, where),
      ]);
      return {
        total,
        items: entries.map((e) => ({
          entry_id: e.id,
          operation: e.operation,
          amount: e.amount,
          balance_after: e.balance_after,
          reason: e.reason,
          at: e.at,
        })),
      };
    },

    async grant(ctx: CallContext, amount: number, reason: string): Promise<Balance> {
      await execute(ctx.org_id, actorOf(ctx), { type: 'grant', org_id: ctx.org_id, amount, reason, at: now() });
      return balance(ctx.org_id);
    },

    async setSpendLimit(ctx: CallContext, monthlyLimit: number | null): Promise<Balance> {
      await execute(ctx.org_id, actorOf(ctx), { type: 'set_spend_limit', org_id: ctx.org_id, monthly_limit: monthlyLimit, at: now() });
      return balance(ctx.org_id);
    },

    /** Holds the cost of `units` of an operation before any work; 402 when the balance or the spend limit does not allow it. */
    async reserve(ctx: CallContext, operation: MeteredOperation, units: number): Promise<Reservation | null> {
      if (!Number.isInteger(units) || units < 0) throw errors.internal(`Meter units must be a whole number, got ${units}`);
      const amount = deps.costs[operation] * units;
      if (amount === 0) return null;
      const reservation = { org_id: ctx.org_id, reservation_id: ids.uuid(), amount };
      await execute(ctx.org_id, actorOf(ctx), {
        type: 'reserve',
        org_id: ctx.org_id,
        reservation_id: reservation.reservation_id,
        operation,
        amount,
        at: now(),
      });
      return reservation;
    },

    /**
     * The operation succeeded: the reservation is spent, or only `amount` of it when the
     * operation did less than was reserved (the rest goes back to the balance).
     */
    settle: (r: Reservation, amount?: number) =>
      execute(r.org_id, 'system:meter', {
        type: 'settle',
        org_id: r.org_id,
        reservation_id: r.reservation_id,
        at: now(),
        ...(amount !== undefined && amount < r.amount && { amount }),
      }),

    /**
     * Charges finished work whose cost is known only now, in the caller's
     * transaction (an event consumer's, so the charge and its inbox mark commit
     * together: exactly once per event). Never below zero (see credits.charged).
     */
    chargeWithin: (
      tx: StoreTransaction,
      charge: { org_id: string; charge_id: string; operation: MeteredOperation; amount: number; reason: string },
    ) =>
      commands.within(tx, { metadata: { org_id: charge.org_id, actor: 'system:meter' } }, (s) =>
        decide(s, charge.org_id, { type: 'charge', ...charge, at: now() }),
      ),

    /** The operation failed: the reservation goes back to the balance. */
    release: (r: Reservation) =>
      execute(r.org_id, 'system:meter', { type: 'release', org_id: r.org_id, reservation_id: r.reservation_id, at: now() }),

    /**
     * Gives back reservations held longer than `olderThanMs`: a gateway that died
     * between reserve and settle would otherwise keep those credits out of reach for
     * good. Safe with several gateways: a reservation already settled or released by
     * the live request (or another sweeper) is skipped. Returns how many were released.
     */
    async releaseAbandoned(olderThanMs: number): Promise<number> {
      const cutoff = clock.now().getTime() - olderThanMs;
      const stale = (await store.find<CreditHoldDoc>(CREDIT_HOLDS)).filter((h) => Date.parse(h.at) < cutoff);
      let released = 0;
      for (const hold of stale) {
        try {
          await execute(hold.org_id, 'system:credit-sweeper', { type: 'release', org_id: hold.org_id, reservation_id: hold.id, at: now() });
          released++;
        } catch (err) {
          if (!(err instanceof AppError && err.kind === 'not_found')) throw err;
        }
      }
      return released;
    },
  };
}

export type CreditsService = ReturnType<typeof createCreditsService>;
