import type { CatalogEvent } from '@kb/events';
import type { StoredEvent } from '@kb/store';

/** What every domain event is: a type name and its payload. */
export interface TypedEvent {
  type: string;
  data: unknown;
}

/**
 * A stored event typed by its catalogue entry: the store's envelope fields
 * with a literal `type` and its `data`. Over a union it distributes, so
 * `switch (event.type)` narrows `event.data`.
 */
export type Stored<E extends TypedEvent = CatalogEvent> = E extends unknown ? Omit<StoredEvent, 'type' | 'data'> & E : never;

/** An event as decided by domain code, before the store gives it a position. */
export interface DecidedEvent {
  type: string;
  data: Record<string, unknown>;
}

/**
 * The decider shape (Emmett): pure functions, no I/O. `decide` returns the new
 * facts or throws an AppError; `evolve` folds one fact into the state. `Event`
 * is the union of the stream's events (e.g. `EventsNamed<'credits'>`).
 */
export interface Decider<Command, State, Event extends TypedEvent = CatalogEvent> {
  initialState: () => State;
  evolve: (state: State, event: Stored<Event>) => State;
  decide: (command: Command, state: State) => DecidedEvent[];
}

/**
 * A stream's stored history as its decider's events. Sound because every event
 * was validated against the catalogue on append (command bus), so its `data`
 * matches the schema its `type` names; a type outside the decider's union (none
 * is expected) falls through `evolve`'s switch.
 */
export function asStreamEvents<Event extends TypedEvent = CatalogEvent>(events: StoredEvent[]): Stored<Event>[] {
  return events as unknown as Stored<Event>[];
}

/** Folds stored events into `state` (after an append, or one event at a time in a test). */
export function evolveFrom<State, Event extends TypedEvent>(
  decider: Pick<Decider<unknown, State, Event>, 'evolve'>,
  state: State,
  events: StoredEvent[],
): State {
  return asStreamEvents<Event>(events).reduce<State>((s, event) => decider.evolve(s, event), state);
}

export function fold<State, Event extends TypedEvent>(
  decider: Pick<Decider<unknown, State, Event>, 'initialState' | 'evolve'>,
  events: StoredEvent[],
): State {
  return evolveFrom(decider, decider.initialState(), events);
}

/** A stored event of the given catalogue type(s), e.g. `StoredOf<'draft.created' | 'draft.revised'>`. */
export type StoredOf<T extends CatalogEvent['type']> = Stored<Extract<CatalogEvent, { type: T }>>;
