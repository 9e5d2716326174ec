import { evolveFrom, type Decider, type TypedEvent } from '@kb/eventsourcing';
import type { StoredEvent } from '@kb/store';

/** Runs commands through decide + evolve the way the command bus does; returns the state and every event. */
export function run<C, S, E extends TypedEvent>(decider: Decider<C, S, E>, commands: C[]): { state: S; events: StoredEvent[] } {
  let state = decider.initialState();
  const events: StoredEvent[] = [];
  for (const c of commands) {
    for (const e of decider.decide(c, state)) {
      const version = events.length + 1;
      const stored: StoredEvent = {
        ...e,
        id: `e${version}`,
        schema: 1,
        metadata: { org_id: 'o' },
        stream_id: 's',
        version,
        position: version,
        recorded_at: '2026-01-01T00:00:00.000Z',
      };
      events.push(stored);
      state = evolveFrom(decider, state, [stored]);
    }
  }
  return { state, events };
}
