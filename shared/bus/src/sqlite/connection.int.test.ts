import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger, systemClock, type Clock } from '@kb/platform';
import { acquireBusConnection, type BusConnectionSettings } from './connection.js';

describe('sqlite bus connection', () => {
  it('is shared by the buses of a process on the same file and settings, and closed by the last one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kb-bus-conn-'));
    const settings: BusConnectionSettings = {
      path: join(dir, 'bus.db'),
      synchronous: 'NORMAL',
      pollIntervalMs: 25,
      sessionTimeoutMs: 10_000,
      clock: systemClock,
      logger: silentLogger(),
    };
    try {
      const a = acquireBusConnection(settings);
      const b = acquireBusConnection({ ...settings, path: join(dir, '.', 'bus.db') });
      const otherClock: Clock = { now: () => new Date() };
      const c = acquireBusConnection({ ...settings, clock: otherClock });
      const d = acquireBusConnection({ ...settings, pollIntervalMs: 10 });
      assert.equal(a.db, b.db);
      assert.equal(a.poller, b.poller);
      assert.notEqual(a.db, c.db, 'another clock: its own connection');
      assert.notEqual(a.db, d.db, 'another poll interval: its own connection');
      await a.release();
      await a.release(); // a second release by the same user changes nothing
      assert.ok(b.db.open, 'still used by b');
      await b.release();
      assert.ok(!b.db.open, 'closed by the last user');
      const e = acquireBusConnection(settings);
      assert.ok(e.db.open, 'a new user after the close opens it again');
      await Promise.all([c.release(), d.release(), e.release()]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
