import { describe, expectTypeOf, it } from 'vitest';
import { competitorDecider, promptRunDecider, trackedSourceDecider } from './aggregates.js';

/**
 * Type-level checks (they fail at compile time, in `npm run typecheck`): each
 * stream's decider narrows `event.data` by `event.type`, so a field renamed in
 * the catalogue breaks the code that reads it instead of reading undefined.
 */

type StreamEvent<D extends { evolve: (...args: any[]) => unknown }> = Parameters<D['evolve']>[1];

describe('analytics stream events (type-level)', () => {
  it('tracked source: tracked_source.created carries source_id', () => {
    const read = (e: StreamEvent<typeof trackedSourceDecider>) => {
      if (e.type !== 'tracked_source.created') return;
      expectTypeOf(e.data.source_id).toEqualTypeOf<string>();
      // @ts-expect-error a field tracked_source.created does not have
      void e.data.source_id_renamed;
    };
    expectTypeOf(read).toBeFunction();
  });
  it('competitor: competitor.created carries competitor_id', () => {
    const read = (e: StreamEvent<typeof competitorDecider>) => {
      if (e.type !== 'competitor.created') return;
      expectTypeOf(e.data.competitor_id).toEqualTypeOf<string>();
      // @ts-expect-error a field competitor.created does not have
      void e.data.competitor_id_renamed;
    };
    expectTypeOf(read).toBeFunction();
  });
  it('prompt run: prompt_run.started carries run_id', () => {
    const read = (e: StreamEvent<typeof promptRunDecider>) => {
      if (e.type !== 'prompt_run.started') return;
      expectTypeOf(e.data.run_id).toEqualTypeOf<string>();
      // @ts-expect-error a field prompt_run.started does not have
      void e.data.run_id_renamed;
    };
    expectTypeOf(read).toBeFunction();
  });
});
