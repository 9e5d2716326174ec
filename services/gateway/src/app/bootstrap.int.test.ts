import { afterEach, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, randomIds, silentLogger, systemClock } from '@kb/platform';
import { eventCatalog } from '@kb/events';
import { createCommandBus } from '@kb/eventsourcing';
import { openStore } from '@kb/runtime';
import { gatewayProjections } from '../service.js';
import { createIdentityService } from './identity.js';

/** First start of a gateway: the bootstrap organization, or a warning that tells the operator how to get one. */
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

async function gatewayOnEmptyStore() {
  const dir = mkdtempSync(join(tmpdir(), 'kb-bootstrap-'));
  dirs.push(dir);
  const store = await openStore({ DATA_DIR: dir, STORE: 'sqlite', BUS: 'sqlite' }, 'gateway', systemClock, silentLogger());
  const commands = createCommandBus({ store, catalog: eventCatalog, projections: gatewayProjections, ids: randomIds, clock: systemClock });
  const lines: { level: number; msg: string; missing?: string[] }[] = [];
  const logger = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(JSON.parse(line)) } });
  const identity = createIdentityService({ store, commands, ids: randomIds, clock: systemClock, logger, sessionTtlSeconds: 3600 });
  return { store, identity, lines };
}

const complete = {
  BOOTSTRAP_ORG_NAME: 'First Org',
  BOOTSTRAP_ADMIN_EMAIL: 'admin@example.test',
  BOOTSTRAP_ADMIN_PASSWORD: 'a long enough password',
  BOOTSTRAP_API_KEY: 'kb_bootstrap_test_000000000000000',
  BOOTSTRAP_CREDITS: 10,
};
const WARN = 40;

describe('gateway bootstrap', () => {
  it('on an empty store without BOOTSTRAP_* warns once, naming what to set and the API calls that do it by hand', async () => {
    const { store, identity, lines } = await gatewayOnEmptyStore();
    try {
      const { BOOTSTRAP_API_KEY: _key, BOOTSTRAP_ADMIN_PASSWORD: _password, ...partial } = complete;
      assert.deepEqual(await identity.bootstrap(partial), { created: false });
      const warnings = lines.filter((l) => l.level === WARN);
      assert.equal(warnings.length, 1, JSON.stringify(lines));
      assert.deepEqual(warnings[0]!.missing, ['BOOTSTRAP_ADMIN_PASSWORD', 'BOOTSTRAP_API_KEY']);
      assert.match(warnings[0]!.msg, /No organization exists yet and BOOTSTRAP_ADMIN_PASSWORD, BOOTSTRAP_API_KEY are not set/);
      assert.match(
        warnings[0]!.msg,
        /set BOOTSTRAP_ORG_NAME, BOOTSTRAP_ADMIN_EMAIL, BOOTSTRAP_ADMIN_PASSWORD, BOOTSTRAP_API_KEY .* restart/,
      );
      assert.match(warnings[0]!.msg, /POST \/api\/v1\/auth\/signup.*POST \/api\/v1\/orgs.*POST \/api\/v1\/org\/api-keys/);
    } finally {
      await store.close();
    }
  });

  it('creates the organization when every value is set, and says nothing more once one exists', async () => {
    const { store, identity, lines } = await gatewayOnEmptyStore();
    try {
      assert.equal((await identity.bootstrap(complete)).created, true);
      assert.equal((await identity.bootstrap({ BOOTSTRAP_CREDITS: 0 })).created, false);
      assert.deepEqual(
        lines.filter((l) => l.level >= WARN),
        [],
        'a gateway whose store has an organization needs no bootstrap',
      );
    } finally {
      await store.close();
    }
  });
});
