import { describe, expectTypeOf, it } from 'vitest';
import { destinationDecider, domainDecider, pieceDecider, subscriptionDecider, toggleDecider } from './aggregates.js';

/**
 * Type-level checks (they fail at compile time, in `npm run typecheck`): each
 * stream's decider narrows `event.data` by `event.type`, so a field renamed in
 * the catalogue breaks the code that reads it instead of reading undefined.
 */

type StreamEvent<D extends { evolve: (...args: any[]) => unknown }> = Parameters<D['evolve']>[1];

describe('publishing stream events (type-level)', () => {
  it('piece: piece.approved carries revision', () => {
    const read = (e: StreamEvent<typeof pieceDecider>) => {
      if (e.type !== 'piece.approved') return;
      expectTypeOf(e.data.revision).toEqualTypeOf<number>();
      // @ts-expect-error a field piece.approved does not have
      void e.data.revision_renamed;
    };
    expectTypeOf(read).toBeFunction();
  });
  it('destination: destination.created carries destination_id', () => {
    const read = (e: StreamEvent<typeof destinationDecider>) => {
      if (e.type !== 'destination.created') return;
      expectTypeOf(e.data.destination_id).toEqualTypeOf<string>();
      // @ts-expect-error a field destination.created does not have
      void e.data.destination_id_renamed;
    };
    expectTypeOf(read).toBeFunction();
  });
  it('destination toggle: destination.toggled carries enabled', () => {
    const read = (e: StreamEvent<typeof toggleDecider>) => {
      if (e.type !== 'destination.toggled') return;
      expectTypeOf(e.data.enabled).toEqualTypeOf<boolean>();
      // @ts-expect-error a field destination.toggled does not have
      void e.data.enabled_renamed;
    };
    expectTypeOf(read).toBeFunction();
  });
  it('domain: domain.registered carries domain_id', () => {
    const read = (e: StreamEvent<typeof domainDecider>) => {
      if (e.type !== 'domain.registered') return;
      expectTypeOf(e.data.domain_id).toEqualTypeOf<string>();
      // @ts-expect-error a field domain.registered does not have
      void e.data.domain_id_renamed;
    };
    expectTypeOf(read).toBeFunction();
  });
  it('webhook subscription: webhook_subscription.created carries subscription_id', () => {
    const read = (e: StreamEvent<typeof subscriptionDecider>) => {
      if (e.type !== 'webhook_subscription.created') return;
      expectTypeOf(e.data.subscription_id).toEqualTypeOf<string>();
      // @ts-expect-error a field webhook_subscription.created does not have
      void e.data.subscription_id_renamed;
    };
    expectTypeOf(read).toBeFunction();
  });
});
