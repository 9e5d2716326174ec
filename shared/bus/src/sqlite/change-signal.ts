import type { BusDatabase } from './database.js';

/** What may have changed since an earlier look. */
export interface Changes {
  /** Messages may have been appended. */
  messages: boolean;
  /** Members or claims may have changed (joins, leaves, released partitions). */
  membership: boolean;
}

/**
 * Lets idle consumers skip their queries: SQLite's data_version changes when
 * another connection (any process) commits to the file, which may be anything;
 * this connection's own writes are told apart by `touch`, so a publish here does
 * not make every consumer group re-read the group membership.
 */
export function createChangeSignal(db: BusDatabase) {
  const dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
  let messages = 0;
  let membership = 0;
  let seen = { data: -1, messages: -1, membership: -1 };
  return {
    /** What changed since the previous call (everything on the first). */
    look(): Changes {
      const now = { data: dataVersion.get()!, messages, membership };
      const other = now.data !== seen.data;
      const changes = { messages: other || now.messages !== seen.messages, membership: other || now.membership !== seen.membership };
      seen = now;
      return changes;
    },
    touch(kind: keyof Changes): void {
      if (kind === 'messages') messages += 1;
      else membership += 1;
    },
  };
}

export type ChangeSignal = ReturnType<typeof createChangeSignal>;
