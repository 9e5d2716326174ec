import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '@kb/platform';
import type { Store } from '@kb/store';
import type { EventBus } from '@kb/bus';

export interface AdapterSettings {
  DATA_DIR: string;
  STORE: 'sqlite' | 'mongodb';
  BUS: 'sqlite' | 'kafka';
  MONGODB_URL?: string | undefined;
  KAFKA_BROKERS?: string | undefined;
  /** The consumer groups' session (see KafkaEventBusOptions.sessionTimeoutMs). */
  KAFKA_SESSION_TIMEOUT_MS?: number | undefined;
  /** The bus's message limit (see EventBus.maxMessageBytes). */
  BUS_MAX_MESSAGE_BYTES?: number | undefined;
  KAFKA_COMPRESSION?: 'gzip' | 'none' | undefined;
  /** When the outbox relay counts as stuck (see OutboxRelayOptions.lagAlertMs). */
  OUTBOX_LAG_ALERT_MS?: number | undefined;
}

/** How a service's embedded store file is laid out (the SQLite store only; MongoDB ignores it). */
export interface StoreFileOptions {
  /** Page size of the file when it is created (see SqliteStoreOptions.pageSize). */
  pageSize?: number;
}

/**
 * The one place that turns configuration into adapters. Adapters are imported
 * lazily so the embedded runtime never loads the MongoDB or Kafka drivers.
 */
export async function openStore(
  settings: AdapterSettings,
  service: string,
  clock: Clock,
  logger: Logger,
  file: StoreFileOptions = {},
): Promise<Store> {
  if (settings.STORE === 'mongodb') {
    const { createMongoStore } = await import('@kb/store/mongodb');
    return createMongoStore({ url: settings.MONGODB_URL!, database: service.replace(/[^a-z0-9_]/gi, '_'), clock, logger });
  }
  const { createSqliteStore } = await import('@kb/store/sqlite');
  return createSqliteStore({ path: join(settings.DATA_DIR, `${service}.db`), clock, ...file });
}

export async function openBus(settings: AdapterSettings, service: string, logger: Logger): Promise<EventBus> {
  if (settings.BUS === 'kafka') {
    const { createKafkaEventBus } = await import('@kb/bus/kafka');
    // One client id per process, so the broker (and a test) can tell replicas of a service apart.
    // A service does not wait for its consumer groups to take it in (after a kill -9 that
    // waits for the dead member's session): it serves meanwhile and readiness says when.
    return createKafkaEventBus({
      brokers: settings.KAFKA_BROKERS!.split(','),
      clientId: `${service}-${process.pid}`,
      logger,
      waitUntilConsuming: false,
      ...(settings.KAFKA_SESSION_TIMEOUT_MS !== undefined && { sessionTimeoutMs: settings.KAFKA_SESSION_TIMEOUT_MS }),
      ...(settings.BUS_MAX_MESSAGE_BYTES !== undefined && { maxMessageBytes: settings.BUS_MAX_MESSAGE_BYTES }),
      ...(settings.KAFKA_COMPRESSION !== undefined && { compression: settings.KAFKA_COMPRESSION }),
    });
  }
  const { createSqliteEventBus } = await import('@kb/bus/sqlite');
  return createSqliteEventBus({
    path: join(settings.DATA_DIR, 'bus.db'),
    logger,
    ...(settings.BUS_MAX_MESSAGE_BYTES !== undefined && { maxMessageBytes: settings.BUS_MAX_MESSAGE_BYTES }),
  });
}
