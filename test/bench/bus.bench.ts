/**
 * Event bus throughput and latency, end to end: a producer client publishes
 * events (keyed by organization, in batches of 50 as the outbox relay sends
 * them) and a consumer group folds them (a per-organization count, the offset
 * committed after each message as the inbox consumer does). Latency is from the
 * publish call to the fold. The same workload runs on the embedded SQLite log
 * and on the real Kafka broker, with 1, 2 and 4 partitions and as many consumer
 * replicas (each replica its own client: its own connection / bus instance), in
 * the same run. Ratios are against the embedded log with 1 partition and 1
 * replica measured in this run.
 *
 *   npm run bench:bus     (EVENTS=n per configuration, default 2000; KAFKA_BROKERS, else a
 *                          broker of its own from scripts/kafka.sh)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { EventBus, Subscription } from '@kb/bus';
import { createSqliteEventBus } from '@kb/bus/sqlite';
import { createKafkaEventBus } from '@kb/bus/kafka';
import { KafkaBroker } from '../e2e/multiprocess-harness.js';

const EVENTS = Number(process.env.EVENTS ?? 2000);
const ORGS = 64;
const BATCH = 50;

interface Result {
  label: string;
  perSecond: number;
  p50: number;
  p99: number;
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

async function run(label: string, partitions: number, connect: (client: string) => EventBus): Promise<Result> {
  const topic = `bench-${randomUUID().slice(0, 8)}`;
  const groupId = `fold-${randomUUID().slice(0, 8)}`;
  const producer = connect('producer');
  await producer.ensureTopics([topic]);
  const consumers = Array.from({ length: partitions }, (_, i) => connect(`replica-${i}`));
  const counts = new Map<string, number>();
  const latencies: number[] = [];
  let done: () => void = () => {};
  const finished = new Promise<void>((resolve) => (done = resolve));
  const subscriptions: Subscription[] = [];
  for (const bus of consumers) {
    subscriptions.push(
      await bus.subscribe({
        groupId,
        topics: [topic],
        fromBeginning: true,
        handler: async (message) => {
          const { sentAt } = JSON.parse(message.value) as { sentAt: number };
          counts.set(message.key, (counts.get(message.key) ?? 0) + 1);
          latencies.push(performance.now() - sentAt);
          if (latencies.length === EVENTS) done();
        },
      }),
    );
  }
  const start = performance.now();
  for (let i = 0; i < EVENTS; i += BATCH) {
    const sentAt = performance.now();
    await producer.publish(
      topic,
      Array.from({ length: Math.min(BATCH, EVENTS - i) }, (_, j) => ({
        key: `org-${(i + j) % ORGS}`,
        value: JSON.stringify({ sentAt, n: i + j, type: 'bench.event', data: { title: 'x'.repeat(200) } }),
      })),
    );
  }
  await finished;
  const seconds = (performance.now() - start) / 1000;
  for (const s of subscriptions) await s.stop();
  for (const bus of [producer, ...consumers]) await bus.close();
  const folded = [...counts.values()].reduce((a, b) => a + b, 0);
  if (folded !== EVENTS) throw new Error(`${label}: folded ${folded} of ${EVENTS}`);
  latencies.sort((a, b) => a - b);
  return { label, perSecond: EVENTS / seconds, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99) };
}

const dir = mkdtempSync(join(tmpdir(), 'kb-bench-bus-'));
let ownBroker: KafkaBroker | undefined;
let brokers = process.env.KAFKA_BROKERS;
if (!brokers) {
  ownBroker = new KafkaBroker();
  brokers = ownBroker.start();
}

const results: Result[] = [];
try {
  for (const partitions of [1, 2, 4]) {
    const path = join(dir, `bus-${partitions}.db`);
    results.push(
      await run(`embedded SQLite log, ${partitions} partition(s), ${partitions} replica(s)`, partitions, () =>
        createSqliteEventBus({ path, partitions, pollIntervalMs: 5 }),
      ),
    );
  }
  for (const partitions of [1, 2, 4]) {
    results.push(
      await run(`Kafka 4.1 broker,     ${partitions} partition(s), ${partitions} replica(s)`, partitions, (client) =>
        createKafkaEventBus({ brokers: brokers!.split(','), clientId: `bench-${client}`, partitions }),
      ),
    );
  }
} finally {
  ownBroker?.destroy();
  rmSync(dir, { recursive: true, force: true });
}

const baseline = results[0]!;
console.log(`\n${EVENTS} events over ${ORGS} organization keys, published in batches of ${BATCH}`);
console.log(`baseline: ${baseline.label}\n`);
console.log('configuration                                         events/s   x baseline   p50 ms   p99 ms   p50 x baseline');
for (const r of results) {
  console.log(
    `${r.label.padEnd(52)} ${r.perSecond.toFixed(0).padStart(9)} ${(r.perSecond / baseline.perSecond).toFixed(2).padStart(12)} ${r.p50
      .toFixed(1)
      .padStart(8)} ${r.p99.toFixed(1).padStart(8)} ${(r.p50 / baseline.p50).toFixed(2).padStart(16)}`,
  );
}
