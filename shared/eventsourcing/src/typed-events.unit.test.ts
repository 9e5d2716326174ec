import { describe, expectTypeOf, it } from 'vitest';
import type { ContentEvent, EnvelopeOf, EventOf, contentExtracted } from '@kb/events';
import type { EventHandlers } from './consumer.js';
import type { Projection } from './projection.js';
import type { Stored } from './decider.js';

/**
 * Type-level checks (they fail at compile time, in `npm run typecheck`): the
 * catalogue's literal type names reach projections and consumers, so
 * `switch (event.type)` narrows `event.data`.
 */
describe('typed events (type-level)', () => {
  it('EventOf keeps the literal type name and the payload', () => {
    expectTypeOf<EventOf<typeof contentExtracted>['type']>().toEqualTypeOf<'content.extracted'>();
    expectTypeOf<EventOf<typeof contentExtracted>['data']['chunk_count']>().toEqualTypeOf<number>();
    expectTypeOf<Extract<ContentEvent, { type: 'content.moved' }>['data']['parent_id']>().toEqualTypeOf<string | null>();
  });

  it("a projection's apply narrows the stored event by type", () => {
    const apply: Projection['apply'] = async (_tx, event) => {
      if (event.type !== 'content.failed') return;
      expectTypeOf(event.data.reason).toEqualTypeOf<string>();
      expectTypeOf(event.position).toEqualTypeOf<number>();
      // @ts-expect-error a field content.failed does not have
      void event.data.reason_text;
    };
    expectTypeOf(apply).toBeFunction();
    expectTypeOf<Stored<ContentEvent>['type']>().toEqualTypeOf<ContentEvent['type']>();
  });

  it('a consumer handler gets the envelope of its key', () => {
    const handlers: EventHandlers = {
      'kb_node.moved': async (_tx, event) => {
        expectTypeOf(event).toEqualTypeOf<EnvelopeOf<'kb_node.moved'>>();
        expectTypeOf(event.data.parent_id).toEqualTypeOf<string>();
        // @ts-expect-error a field kb_node.moved does not have
        void event.data.folder_id;
      },
    };
    expectTypeOf(handlers).toBeObject();
  });
});
