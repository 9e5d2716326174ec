import { resolve } from 'node:path';
import { registerForCheckpoints } from '@kb/store/sqlite';
import type { Clock, Logger } from '@kb/platform';
import { createChangeSignal, type ChangeSignal } from './change-signal.js';
import { openBusDatabase, type BusDatabase } from './database.js';
import { createLog, type Log } from './log.js';
import { createMembership, type Membership } from './membership.js';
import { createBusPoller, type BusPoller } from './poller.js';

export interface BusConnectionSettings {
  path: string;
  synchronous: 'NORMAL' | 'FULL';
  pollIntervalMs: number;
  sessionTimeoutMs: number;
  clock: Clock;
  logger: Logger;
}

export interface BusConnection {
  db: BusDatabase;
  log: Log;
  membership: Membership;
  changes: ChangeSignal;
  poller: BusPoller;
  /** Gives the connection back; the last user closes it. */
  release(): Promise<void>;
}

interface Shared extends Omit<BusConnection, 'release'> {
  users: number;
  close(): Promise<void>;
}

const open = new Map<string, Shared>();
const clockIds = new WeakMap<Clock, number>();
let nextClockId = 0;

/**
 * The connection to a bus file, shared by every bus of this process that opens
 * the same file with the same settings (all the services of `npm start`): one
 * poll loop then serves all their consumer groups, and the file's change counter
 * (data_version) moves only for other processes' writes instead of on every
 * publish by a neighbouring service's connection, which made every group of
 * every connection look at membership and heads again. Every statement is
 * synchronous and no transaction spans an await, so sharing is safe.
 */
export function acquireBusConnection(settings: BusConnectionSettings): BusConnection {
  if (!clockIds.has(settings.clock)) clockIds.set(settings.clock, nextClockId++);
  const key = JSON.stringify([
    resolve(settings.path),
    settings.synchronous,
    settings.pollIntervalMs,
    settings.sessionTimeoutMs,
    clockIds.get(settings.clock),
  ]);
  let shared = open.get(key);
  if (!shared) {
    const db = openBusDatabase(settings.path, { synchronous: settings.synchronous });
    // Publishes carry up to a megabyte of chunk text: checkpointing them inside a COMMIT stalled the event loop.
    const checkpoints = registerForCheckpoints(settings.path, (pragma) => db.pragma(pragma));
    const log = createLog(db);
    const membership = createMembership(db, log);
    const changes = createChangeSignal(db);
    const poller = createBusPoller({
      log,
      membership,
      changes,
      clock: settings.clock,
      logger: settings.logger.child({ component: 'sqlite-bus' }),
      pollIntervalMs: settings.pollIntervalMs,
      sessionTimeoutMs: settings.sessionTimeoutMs,
    });
    shared = {
      db,
      log,
      membership,
      changes,
      poller,
      users: 0,
      async close() {
        poller.close();
        await checkpoints.unregister();
        db.close();
      },
    };
    open.set(key, shared);
  }
  shared.users += 1;
  const held = shared;
  let released = false;
  return {
    db: held.db,
    log: held.log,
    membership: held.membership,
    changes: held.changes,
    poller: held.poller,
    async release() {
      if (released) return;
      released = true;
      held.users -= 1;
      if (held.users > 0) return;
      open.delete(key);
      await held.close();
    },
  };
}
