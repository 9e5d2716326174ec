import type { StoreTransaction } from '@kb/store';
import type { Projection, Stored } from '@kb/eventsourcing';
import type { SearchQueryRecorded } from '@kb/events';

/** Searches received, newest last by seq (GET /org/search/queries). */
export const SEARCH_QUERIES = 'search_queries';

export interface SearchQueryDoc extends SearchQueryRecorded {
  id: string;
  seq: number;
}

export const searchQueriesProjection: Projection = {
  name: 'search-queries',
  collections: [SEARCH_QUERIES],
  indexes: [{ collection: SEARCH_QUERIES, fields: ['org_id', 'surface', 'seq'] }],
  async apply(tx: StoreTransaction, event: Stored): Promise<void> {
    if (event.type !== 'search_query.recorded') return;
    const d = event.data;
    await tx.put<SearchQueryDoc>(SEARCH_QUERIES, { ...d, id: d.query_id, seq: event.position });
  },
};
