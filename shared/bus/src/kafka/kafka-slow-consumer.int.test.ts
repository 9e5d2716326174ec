import { afterAll, beforeAll, it } from 'vitest';
import { describeOrSkip } from '@kb/testing';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { MeterProvider, MetricReader, type GaugeMetricData, type DataPoint } from '@opentelemetry/sdk-metrics';
import { CONSUMER_LAG_METRIC, createKafkaEventBus, type KafkaEventBus } from './index.js';

/** Collects on demand, as the OTLP exporter's periodic reader would. */
class PullReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

const brokers = process.env.KAFKA_BROKERS?.split(',')
  .map((b) => b.trim())
  .filter(Boolean);
const skip = brokers?.length ? false : 'skipped: KAFKA_BROKERS is not set (scripts/kafka.sh start starts a broker)';

describeOrSkip('a slow consumer on a real Kafka broker', skip, () => {
  const reader = new PullReader();
  const provider = new MeterProvider({ readers: [reader] });
  let bus: KafkaEventBus;
  beforeAll(() => {
    bus = createKafkaEventBus({
      brokers: brokers!,
      clientId: `slow-consumer-${randomUUID().slice(0, 8)}`,
      partitions: 2,
      meter: provider.getMeter('test'),
    });
  });
  afterAll(async () => {
    await bus.close();
    await provider.shutdown();
  });

  /** The gauge's value per group for one topic, as a metric reader sees it. */
  const gauge = async (topic: string): Promise<Map<string, number>> => {
    const { resourceMetrics } = await reader.collect();
    const metric = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === CONSUMER_LAG_METRIC) as
      GaugeMetricData | undefined;
    const points = (metric?.dataPoints ?? []) as DataPoint<number>[];
    return new Map(
      points
        .filter((p) => p.attributes['messaging.destination.name'] === topic)
        .map((p) => [String(p.attributes['messaging.consumer.group.name']), p.value]),
    );
  };

  it('reports its lag per group as a metric, and drains it while a fast group stays caught up', { timeout: 120_000 }, async () => {
    const topic = `slow-${randomUUID().slice(0, 8)}`;
    const slowGroup = `slow-${randomUUID().slice(0, 8)}`;
    const fastGroup = `fast-${randomUUID().slice(0, 8)}`;
    await bus.ensureTopics([topic]);
    let slowHandled = 0;
    let fastHandled = 0;
    await bus.subscribe({
      groupId: slowGroup,
      topics: [topic],
      handler: async () => {
        await sleep(40);
        slowHandled++;
      },
    });
    await bus.subscribe({
      groupId: fastGroup,
      topics: [topic],
      handler: async () => {
        fastHandled++;
      },
    });
    const total = 150;
    await bus.publish(
      topic,
      Array.from({ length: total }, (_, i) => ({ key: `org-${i % 3}`, value: JSON.stringify({ i, pad: 'x'.repeat(200) }) })),
    );

    // The fast group catches up; its committed offsets reach the end (kafkajs commits after each batch).
    const deadline = Date.now() + 60_000;
    let behind: Map<string, number> | undefined;
    while (Date.now() < deadline) {
      const lag = await gauge(topic);
      if (fastHandled === total && lag.get(fastGroup) === 0 && (lag.get(slowGroup) ?? 0) > 0) {
        behind = lag;
        break;
      }
      await sleep(100);
    }
    assert.ok(behind, `the slow group is seen behind while the fast one is caught up (fast ${fastHandled}, slow ${slowHandled})`);
    // Committed never runs ahead of handled, so the lag is at least what is still unhandled.
    assert.ok(behind.get(slowGroup)! >= total - slowHandled, `lag ${behind.get(slowGroup)} with ${slowHandled} of ${total} handled`);
    assert.ok(slowHandled < total);

    // It drains: every message handled, the lag back to zero.
    while (Date.now() < deadline + 30_000) {
      if (slowHandled === total && (await gauge(topic)).get(slowGroup) === 0) break;
      await sleep(200);
    }
    assert.equal(slowHandled, total);
    const final = await gauge(topic);
    assert.equal(final.get(slowGroup), 0);
    const lag = await bus.consumerLag();
    assert.deepEqual(
      lag.filter((g) => g.groupId === slowGroup || g.groupId === fastGroup).map((g) => [g.groupId, g.lag]),
      [
        [slowGroup, 0],
        [fastGroup, 0],
      ],
    );
  });
});
