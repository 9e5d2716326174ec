import { createCatalog, type EventOf } from './define.js';
import { gatewayEvents } from './gateway.js';
import { knowledgeBaseEvents } from './knowledge-base.js';
import { ingestEvents } from './ingest.js';
import { analyticsEvents } from './analytics.js';
import { promptEvents } from './prompts.js';
import { searchEvents } from './search.js';
import { generationEvents } from './generation.js';
import { publishingEvents } from './publishing.js';
import { oauthEvents } from './oauth.js';

export * from './define.js';
export * from './topics.js';
export * from './gateway.js';
export * from './knowledge-base.js';
export * from './ingest.js';
export * from './analytics.js';
export * from './prompts.js';
export * from './search.js';
export * from './generation.js';
export * from './publishing.js';
export * from './oauth.js';

/** Every event the system knows; validated on append and on publish. */
export const eventCatalog = createCatalog([
  ...gatewayEvents,
  ...knowledgeBaseEvents,
  ...ingestEvents,
  ...analyticsEvents,
  ...promptEvents,
  ...searchEvents,
  ...generationEvents,
  ...publishingEvents,
  ...oauthEvents,
]);

/** Every event in the catalogue, as a union discriminated by `type`. */
export type CatalogEvent = EventOf<
  | (typeof gatewayEvents)[number]
  | (typeof knowledgeBaseEvents)[number]
  | (typeof ingestEvents)[number]
  | (typeof analyticsEvents)[number]
  | (typeof promptEvents)[number]
  | (typeof searchEvents)[number]
  | (typeof generationEvents)[number]
  | (typeof publishingEvents)[number]
  | (typeof oauthEvents)[number]
>;

/** The catalogue's events whose type starts with `<prefix>.` (one stream's, e.g. `EventsNamed<'credits'>`). */
export type EventsNamed<Prefix extends string> = Extract<CatalogEvent, { type: `${Prefix}.${string}` }>;

/** The envelope that travels on the bus (value of each message, as JSON). */
export interface EventEnvelope {
  id: string;
  type: string;
  schema: number;
  stream_id: string;
  version: number;
  position: number;
  data: Record<string, unknown>;
  metadata: { org_id: string; actor?: string; correlation_id?: string; causation_id?: string; request_id?: string; trace?: string };
  recorded_at: string;
}

/**
 * An envelope carrying one of the catalogue's events, typed by it; over a union
 * it distributes, so `switch (event.type)` narrows `event.data`.
 */
export type Envelope<E extends { type: string; data: unknown } = CatalogEvent> = E extends unknown
  ? Omit<EventEnvelope, 'type' | 'data'> & E
  : never;

/** The envelope of the catalogue's events of the given type(s), e.g. `EnvelopeOf<'content.created' | 'content.version_added'>`. */
export type EnvelopeOf<T extends CatalogEvent['type']> = Envelope<Extract<CatalogEvent, { type: T }>>;
