import { Type } from '@sinclair/typebox';
import { defineEvent, type EventData, type EventOf } from './define.js';
import { topics } from './topics.js';

/**
 * A search received on either surface, as the knowledge-base service answered it
 * (spec 2.8: queries on /org/search* are recorded and tagged). Analytics and
 * prompt suggestions read them; tags travel as `tags.set` with target_type
 * search_query.
 */
const Uuid = Type.String({ format: 'uuid' });

export const searchQueryRecorded = defineEvent(
  topics.knowledgeBase,
  'search_query.recorded',
  1,
  Type.Object({
    query_id: Uuid,
    org_id: Uuid,
    query: Type.String({ minLength: 1 }),
    /** org: POST /org/search; sdk: POST /search. */
    surface: Type.Union([Type.Literal('org'), Type.Literal('sdk')]),
    total_results: Type.Integer({ minimum: 0 }),
    /** Content ids of the returned chunks, best first, distinct. */
    source_ids: Type.Array(Uuid),
    /** Whether the answer was grounded in the knowledge base (false: "nothing relevant found"). */
    answered: Type.Boolean(),
    processing_time_ms: Type.Integer({ minimum: 0 }),
    at: Type.String({ format: 'date-time' }),
    /**
     * The searcher's folder scope (an API key's folder_scope); null or absent: the
     * whole knowledge base. A scoped reader sees the record only when this scope
     * lies inside its own (issue 13 item 4).
     */
    folder_scope: Type.Optional(Type.Union([Type.Array(Uuid), Type.Null()])),
  }),
);

export const searchEvents = [searchQueryRecorded];

/** Search events. */
export type SearchEvent = EventOf<(typeof searchEvents)[number]>;
export type SearchQueryRecorded = EventData<typeof searchQueryRecorded>;
