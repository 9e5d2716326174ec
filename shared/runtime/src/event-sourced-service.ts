import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Clock, IdGenerator } from '@kb/platform';
import { eventCatalog } from '@kb/events';
import type { Store } from '@kb/store';
import type { EventBus } from '@kb/bus';
import { createCommandBus, createOutboxRelay, type CommandBus, type OutboxRelay, type Projection } from '@kb/eventsourcing';

export interface EventSourcedCore {
  commands: CommandBus;
  relay: OutboxRelay;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Wires a service's command bus to its outbox relay: every commit that appended
 * events wakes the relay, which publishes to the service's topic.
 */
export async function createEventSourcedCore(options: {
  service: string;
  topic: string;
  store: Store;
  bus: EventBus;
  projections: Projection[];
  ids: IdGenerator;
  clock: Clock;
  logger: Logger;
  /** When the relay counts as stuck (default 60 s). */
  lagAlertMs?: number;
}): Promise<EventSourcedCore> {
  for (const p of options.projections) for (const i of p.indexes ?? []) await options.store.ensureIndex(i.collection, i.fields);
  const relay = createOutboxRelay({
    store: options.store,
    bus: options.bus,
    catalog: eventCatalog,
    name: options.service,
    owner: `${hostname()}:${process.pid}`,
    clock: options.clock,
    logger: options.logger,
    ...(options.lagAlertMs !== undefined && { lagAlertMs: options.lagAlertMs }),
  });
  const commands = createCommandBus({
    store: options.store,
    catalog: eventCatalog,
    projections: options.projections,
    ids: options.ids,
    clock: options.clock,
    onCommitted: () => relay.notify(),
    // No event the bus cannot carry is ever appended (the relay would be stuck behind it).
    maxEventBytes: options.bus.maxMessageBytes,
  });
  return {
    commands,
    relay,
    start: () => relay.start([options.topic]),
    stop: () => relay.stop(),
  };
}
