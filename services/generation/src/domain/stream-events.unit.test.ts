import { describe, expectTypeOf, it } from 'vitest';
import { ruleDecider } from '../engine/rules.js';
import { draftDecider, runDecider } from './aggregates.js';

/**
 * Type-level checks (they fail at compile time, in `npm run typecheck`): each
 * stream's decider narrows `event.data` by `event.type`, so a field renamed in
 * the catalogue breaks the code that reads it instead of reading undefined.
 */

type StreamEvent<D extends { evolve: (...args: any[]) => unknown }> = Parameters<D['evolve']>[1];

describe('generation stream events (type-level)', () => {
  it('content rule: content_rule.fired carries slot', () => {
    const read = (e: StreamEvent<typeof ruleDecider>) => {
      if (e.type !== 'content_rule.fired') return;
      expectTypeOf(e.data.slot).toEqualTypeOf<string>();
      // @ts-expect-error a field content_rule.fired does not have
      void e.data.slot_renamed;
    };
    expectTypeOf(read).toBeFunction();
  });
  it('draft: draft.sources_stale carries revision', () => {
    const read = (e: StreamEvent<typeof draftDecider>) => {
      if (e.type !== 'draft.sources_stale') return;
      expectTypeOf(e.data.revision).toEqualTypeOf<number>();
      // @ts-expect-error a field draft.sources_stale does not have
      void e.data.revision_renamed;
    };
    expectTypeOf(read).toBeFunction();
  });
  it('generation run: generation_run.requested carries content_type_id', () => {
    const read = (e: StreamEvent<typeof runDecider>) => {
      if (e.type !== 'generation_run.requested') return;
      expectTypeOf(e.data.content_type_id).toEqualTypeOf<string>();
      // @ts-expect-error a field generation_run.requested does not have
      void e.data.content_type_id_renamed;
    };
    expectTypeOf(read).toBeFunction();
  });
});
