import { errors, systemClock, traceparentOf, type Clock, type IdGenerator } from '@kb/platform';
import type { EventCatalog } from '@kb/events';
import { messageBytes } from '@kb/bus';
import type { EventMetadata, Store, StoreTransaction, StoredEvent } from '@kb/store';
import { evolveFrom, fold, type Decider, type TypedEvent } from './decider.js';
import { applyProjections, discardProjections, flushProjections, type Projection } from './projection.js';

export interface CommandContext {
  metadata: EventMetadata;
}

/** The handle on one open transaction: run deciders against streams, read and write documents. */
export interface CommandSession {
  tx: StoreTransaction;
  /** Load the stream, decide, validate, append at the loaded version, update read models. */
  execute<C, S, E extends TypedEvent>(
    decider: Decider<C, S, E>,
    streamId: string,
    command: C,
  ): Promise<{ state: S; events: StoredEvent[] }>;
  /** Current state of a stream without changing it. */
  load<S, E extends TypedEvent>(
    decider: Pick<Decider<unknown, S, E>, 'initialState' | 'evolve'>,
    streamId: string,
  ): Promise<{ state: S; version: number }>;
  /** A session on the same transaction whose events carry another context (e.g. another organization's). */
  withContext(context: CommandContext): CommandSession;
}

export interface EventSourcingDeps {
  store: Store;
  catalog: EventCatalog;
  projections: Projection[];
  ids: IdGenerator;
  clock?: Clock;
  /** Called after each commit that appended events (wakes the outbox relay). */
  onCommitted?: () => void;
  /**
   * The most bytes one published event may weigh on the bus (the bus's
   * `maxMessageBytes`): a command whose event would weigh more fails (413
   * event_too_large) and appends nothing, so the outbox never holds an event
   * the bus cannot carry. Producers of user-sized content cut their events to
   * fit first (ingest's chunk events). Unset: no limit.
   */
  maxEventBytes?: number;
}

/** What a published event weighs on the bus: its envelope as the outbox relay sends it (positions at their widest). */
export function publishedEventBytes(
  e: { id: string; type: string; schema: number; data: unknown; metadata: EventMetadata },
  streamId: string,
): number {
  const envelope = {
    id: e.id,
    type: e.type,
    schema: e.schema,
    stream_id: streamId,
    version: Number.MAX_SAFE_INTEGER,
    position: Number.MAX_SAFE_INTEGER,
    data: e.data,
    metadata: e.metadata,
    recorded_at: '2000-01-01T00:00:00.000Z',
  };
  return messageBytes({ key: e.metadata.org_id, value: JSON.stringify(envelope), headers: { type: e.type } });
}

/**
 * Runs commands: everything inside one `transaction` call commits or rolls back
 * together, events and read models alike (DESIGN section 3).
 */
export function createCommandBus(deps: EventSourcingDeps) {
  const clock = deps.clock ?? systemClock;

  /**
   * A stream's history as `load` read it in this transaction, taken by the
   * `execute` that usually follows (an import loads each answer's stream to
   * reject a repeat, then appends to it), so the stream is read once. Only
   * the command bus appends, and an append drops the entry; the store still
   * checks the expected version.
   */
  const loaded = new WeakMap<StoreTransaction, Map<string, StoredEvent[]>>();

  /** A session on an open transaction; `onAppended` counts what it appended. */
  function openSession(tx: StoreTransaction, context: CommandContext, onAppended: (n: number) => void): CommandSession {
    return {
      tx,
      withContext: (other) => openSession(tx, other, onAppended),
      async load(decider, streamId) {
        const events = await tx.readStream(streamId);
        let streams = loaded.get(tx);
        if (!streams) loaded.set(tx, (streams = new Map()));
        streams.set(streamId, events);
        return { state: fold(decider, events), version: events.length };
      },
      async execute(decider, streamId, command) {
        const streams = loaded.get(tx);
        const cached = streams?.get(streamId);
        if (cached) streams!.delete(streamId);
        const history = cached ?? (await tx.readStream(streamId));
        const state = fold(decider, history);
        const decided = decider.decide(command, state);
        if (decided.length === 0) return { state, events: [] };
        // The span that caused this (a gRPC call, a consumed event) is active here
        // when telemetry is on; its traceparent goes into the event's metadata.
        const trace = context.metadata.trace ?? traceparentOf();
        const metadata: EventMetadata = trace ? { ...context.metadata, trace } : context.metadata;
        const newEvents = decided.map((e) => {
          const def = deps.catalog.get(e.type);
          if (!def) throw new Error(`Event type ${e.type} is not in the catalog`);
          deps.catalog.validate(e.type, def.schema, e.data);
          const event = { id: deps.ids.uuid(), type: e.type, schema: def.schema, data: e.data, metadata };
          if (deps.maxEventBytes !== undefined && deps.catalog.isPublished(e.type)) {
            const bytes = publishedEventBytes(event, streamId);
            if (bytes > deps.maxEventBytes)
              throw errors.payloadTooLarge(
                `The change is too large to record: its ${e.type} event would be ${bytes.toLocaleString('en-US')} bytes, over the ${deps.maxEventBytes.toLocaleString('en-US')} the event bus carries`,
                { code: 'event_too_large', details: { event_type: e.type, bytes, limit_bytes: deps.maxEventBytes } },
              );
          }
          return event;
        });
        const stored = await tx.append(streamId, history.length, newEvents);
        await applyProjections(deps.projections, tx, stored);
        onAppended(stored.length);
        return { state: evolveFrom(decider, state, stored), events: stored };
      },
    };
  }

  async function transaction<T>(context: CommandContext, fn: (session: CommandSession) => Promise<T>): Promise<T> {
    let appended = 0;
    const result = await deps.store.transaction(async (tx) => {
      appended = 0;
      loaded.delete(tx);
      try {
        const out = await fn(openSession(tx, context, (n) => (appended += n)));
        await flushProjections(deps.projections, tx);
        return out;
      } catch (err) {
        discardProjections(deps.projections, tx);
        throw err;
      }
    });
    if (appended > 0) deps.onCommitted?.();
    return result;
  }

  /**
   * Run commands inside a transaction someone else opened, e.g. an event
   * consumer's (whose inbox mark must commit with the appends). The relay is not
   * woken here (the caller has not committed yet); its poll picks the events up.
   */
  async function within<T>(tx: StoreTransaction, context: CommandContext, fn: (session: CommandSession) => Promise<T>): Promise<T> {
    try {
      const out = await fn(openSession(tx, context, () => undefined));
      await flushProjections(deps.projections, tx);
      return out;
    } catch (err) {
      discardProjections(deps.projections, tx);
      throw err;
    }
  }

  return { transaction, within, clock };
}

export type CommandBus = ReturnType<typeof createCommandBus>;
