import type { StoredEvent } from '@kb/store';

/** An event as decided by domain code, before the store gives it a position. */
export interface DecidedEvent {
  type: string;
  data: Record<string, unknown>;
}

/**
 * The decider shape (Emmett): pure functions, no I/O. `decide` returns the new
 * facts or throws an AppError; `evolve` folds one fact into the state.
 */
export interface Decider<Command, State> {
  initialState: () => State;
  evolve: (state: State, event: StoredEvent) => State;
  decide: (command: Command, state: State) => DecidedEvent[];
}

export function fold<State>(decider: Pick<Decider<unknown, State>, 'initialState' | 'evolve'>, events: StoredEvent[]): State {
  return events.reduce(decider.evolve, decider.initialState());
}
