import type { BusDatabase } from './database.js';

/**
 * Lets idle consumers skip their queries: SQLite's data_version changes when
 * another connection (any process) commits to the file, and `touch` covers the
 * writes of this connection that other consumers on it must notice (publishes,
 * joins, released partitions).
 */
export function createChangeSignal(db: BusDatabase) {
  const dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
  let local = 0;
  return {
    /** Differs from an earlier answer once something may have changed since. */
    version: (): string => `${dataVersion.get()}:${local}`,
    touch: (): void => {
      local += 1;
    },
  };
}

export type ChangeSignal = ReturnType<typeof createChangeSignal>;
