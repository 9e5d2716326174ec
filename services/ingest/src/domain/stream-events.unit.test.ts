import { describe, expectTypeOf, it } from 'vitest';
import { contentDecider } from './content.js';

/**
 * Type-level checks (they fail at compile time, in `npm run typecheck`): each
 * stream's decider narrows `event.data` by `event.type`, so a field renamed in
 * the catalogue breaks the code that reads it instead of reading undefined.
 */

type StreamEvent<D extends { evolve: (...args: any[]) => unknown }> = Parameters<D['evolve']>[1];

describe('ingest stream events (type-level)', () => {
  it('content: content.extracted carries chunk_count', () => {
    const read = (e: StreamEvent<typeof contentDecider>) => {
      if (e.type !== 'content.extracted') return;
      expectTypeOf(e.data.chunk_count).toEqualTypeOf<number>();
      // @ts-expect-error a field content.extracted does not have
      void e.data.chunk_count_renamed;
    };
    expectTypeOf(read).toBeFunction();
  });
});
