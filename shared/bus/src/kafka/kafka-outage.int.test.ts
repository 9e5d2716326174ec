import { afterAll, it } from 'vitest';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import { describeOrSkip } from '@kb/testing';
import { createLogger } from '@kb/platform';
import { createKafkaEventBus, type KafkaEventBus } from './index.js';

/**
 * A client that starts before its broker (a service started while the broker is
 * down): it neither fails nor floods its log; it joins when the broker comes.
 * The test runs a broker of its own (scripts/kafka.sh, whose jars CI fetched) on
 * a port the bus was already pointed at.
 */
const root = fileURLToPath(new URL('../../../../', import.meta.url));
const skip = process.env.KAFKA_BROKERS ? false : 'skipped: KAFKA_BROKERS is not set (CI fetches the broker jars and starts one)';

const runDir = mkdtempSync(join(tmpdir(), 'kb-kafka-outage-'));
const kafkaScript = (command: 'start' | 'stop', port?: number) => {
  const result = spawnSync(join(root, 'scripts/kafka.sh'), [command], {
    env: { ...process.env, KAFKA_RUN_DIR: runDir, ...(port && { KAFKA_PORT: String(port) }) },
    encoding: 'utf8',
    timeout: 180_000,
  });
  if (result.status !== 0) throw new Error(`scripts/kafka.sh ${command} failed: ${result.stderr}`);
};

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describeOrSkip('a Kafka bus whose broker is not there yet', skip, () => {
  let bus: KafkaEventBus | undefined;
  afterAll(async () => {
    await bus?.close();
    kafkaScript('stop');
    rmSync(runDir, { recursive: true, force: true });
  });

  it('subscribes at once, says the outage once, and joins and delivers when the broker comes', { timeout: 240_000 }, async () => {
    const lines: { level: number; msg: string }[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as { level: number; msg: string });
        done();
      },
    });
    const port = await freePort();
    bus = createKafkaEventBus({
      brokers: [`127.0.0.1:${port}`],
      clientId: `outage-${randomUUID().slice(0, 8)}`,
      partitions: 1,
      waitUntilConsuming: false,
      logger: createLogger({ level: 'info', destination: sink }),
    });
    const topic = `outage-${randomUUID().slice(0, 8)}`;
    const got: string[] = [];
    await bus.subscribe({ groupId: `outage-${randomUUID().slice(0, 8)}`, topics: [topic], handler: async (m) => void got.push(m.value) });
    await assert.rejects(bus.checkConsumers(), /consumer groups not joined yet/);

    // Let the client fail for a while: connection attempts, retries, a consumer restarting.
    const warned = Date.now();
    while (!lines.some((l) => l.msg.startsWith('kafka unavailable')) && Date.now() - warned < 60_000)
      await new Promise((r) => setTimeout(r, 200));
    await new Promise((r) => setTimeout(r, 5000));

    kafkaScript('start', port);
    const deadline = Date.now() + 120_000;
    for (;;) {
      try {
        await bus.checkConsumers();
        break;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    await bus.publish(topic, [{ key: 'k', value: 'after the broker came' }]);
    while (got.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(got, ['after the broker came']);

    // The end of the outage is said once it held for 5 s (clients come back one after another).
    while (!lines.some((l) => l.msg === 'kafka available again') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    // pino levels: 40 warn, 50 error. One warning for the outage, one info line for its end, no errors.
    const loud = lines.filter((l) => l.level >= 40);
    assert.deepEqual(
      loud.map((l) => l.msg),
      ['kafka unavailable; retrying in the background (logged again when it recovers)'],
    );
    assert.equal(lines.filter((l) => l.msg === 'kafka available again').length, 1);
  });
});
