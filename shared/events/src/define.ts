import type { Static, TObject } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { FormatRegistry } from '@sinclair/typebox';

// TypeBox knows no formats by itself; these are the ones event schemas use.
if (!FormatRegistry.Has('uuid'))
  FormatRegistry.Set('uuid', (v) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v));
if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', (v) => !Number.isNaN(Date.parse(v)));

/** One event type: its name, schema number, payload schema and the topic it goes to. */
export interface EventDefinition<T extends TObject = TObject, N extends string = string> {
  type: N;
  schema: number;
  topic: string;
  data: T;
  /**
   * Internal events stay in the producing service's store and never go to the
   * bus (e.g. ones that carry password or key hashes).
   */
  internal: boolean;
}

export type EventData<D extends EventDefinition> = Static<D['data']>;

/**
 * The event a definition describes, as domain code sees it: its literal type
 * name and its payload. Given a union of definitions it gives the discriminated
 * union of their events, so `switch (event.type)` narrows `event.data`.
 */
export type EventOf<D extends EventDefinition> = D extends EventDefinition<infer T, infer N> ? { type: N; data: Static<T> } : never;

export function defineEvent<T extends TObject, N extends string>(
  topic: string,
  type: N,
  schema: number,
  data: T,
  options: { internal?: boolean } = {},
): EventDefinition<T, N> {
  return { topic, type, schema, data, internal: options.internal ?? false };
}

export interface EventCatalog {
  get(type: string): EventDefinition | undefined;
  /** Throws with every schema violation when data does not match the definition. */
  validate(type: string, schema: number, data: unknown): void;
  topicOf(type: string): string;
  /** Whether the relay publishes events of this type to the bus. */
  isPublished(type: string): boolean;
  all(): EventDefinition[];
}

export class EventValidationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EventValidationError';
  }
}

export function createCatalog(definitions: EventDefinition[]): EventCatalog {
  const byType = new Map(definitions.map((d) => [d.type, { def: d, check: TypeCompiler.Compile(d.data) }]));
  if (byType.size !== definitions.length) throw new Error('duplicate event type in catalog');
  return {
    get: (type) => byType.get(type)?.def,
    validate(type, schema, data) {
      const entry = byType.get(type);
      if (!entry) throw new EventValidationError(`Unknown event type ${type}`);
      if (entry.def.schema !== schema) throw new EventValidationError(`${type} has schema ${entry.def.schema}, got ${schema}`);
      if (!entry.check.Check(data)) {
        const problems = [...entry.check.Errors(data)].map((e) => `${e.path || '/'} ${e.message}`);
        throw new EventValidationError(`${type} payload is invalid: ${problems.join('; ')}`);
      }
    },
    topicOf(type) {
      const entry = byType.get(type);
      if (!entry) throw new EventValidationError(`Unknown event type ${type}`);
      return entry.def.topic;
    },
    isPublished: (type) => byType.get(type)?.def.internal === false,
    all: () => definitions,
  };
}
