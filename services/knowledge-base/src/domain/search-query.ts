import { errors } from '@kb/platform';
import type { StoredEvent } from '@kb/store';
import type { Decider, DecidedEvent } from '@kb/eventsourcing';
import type { SearchQueryRecorded } from '@kb/events';

/** A recorded search: written once, then only tagged (tags live in their own stream). */
export interface SearchQueryState {
  recorded: boolean;
}

export type SearchQueryCommand = { type: 'record' } & SearchQueryRecorded;

export const searchQueryStream = (queryId: string): string => `search_query-${queryId}`;

function decide(command: SearchQueryCommand, state: SearchQueryState): DecidedEvent[] {
  if (state.recorded) throw errors.conflict('Search query already recorded', { code: 'search_query_exists' });
  const { type: _type, ...data } = command;
  return [{ type: 'search_query.recorded', data }];
}

export const searchQueryDecider: Decider<SearchQueryCommand, SearchQueryState> = {
  initialState: () => ({ recorded: false }),
  evolve: (state, event: StoredEvent) => (event.type === 'search_query.recorded' ? { recorded: true } : state),
  decide,
};
