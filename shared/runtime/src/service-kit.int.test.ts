import { afterEach, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '@kb/platform';
import { startService, type ServicePart, type ServiceServer } from './service-kit.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A service whose every step writes its name into `log`. */
async function run(listenLast: boolean, log: string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'kit-'));
  dirs.push(dir);
  const part = (name: string): ServicePart => ({ start: () => void log.push(`start ${name}`), stop: () => void log.push(`stop ${name}`) });
  const server: ServiceServer = {
    listenLast,
    listen: async () => {
      log.push('listen');
      return { address: '127.0.0.1:1', port: 1 };
    },
    shutdown: async () => void log.push('shutdown'),
  };
  return startService(
    {
      name: 'kit-test',
      topic: 'kit-test.events',
      projections: [],
      async compose(ctx) {
        assert.ok(ctx.store && ctx.bus && ctx.core.commands, 'compose gets the opened adapters and the command bus');
        log.push('compose');
        return {
          server,
          early: [part('early')],
          parts: [part('consumer'), part('worker')],
          resources: [() => void log.push('close client')],
        };
      },
    },
    { config: { DATA_DIR: dir, STORE: 'sqlite', BUS: 'sqlite' }, logger: silentLogger() },
  );
}

describe('the service composition kit', () => {
  it('starts in one order and stops in its reverse, the server first', async () => {
    const log: string[] = [];
    const service = await run(false, log);
    assert.deepEqual(log, ['compose', 'listen', 'start early', 'start consumer', 'start worker']);
    assert.equal(service.address, '127.0.0.1:1');
    log.length = 0;
    await service.stop();
    assert.deepEqual(log, ['shutdown', 'stop worker', 'stop consumer', 'stop early', 'close client']);
  });

  it('listens last when the server asks to (no request before the consumers run)', async () => {
    const log: string[] = [];
    const service = await run(true, log);
    assert.deepEqual(log, ['compose', 'start early', 'start consumer', 'start worker', 'listen']);
    await service.stop();
  });
});
