import type { Admin } from 'kafkajs';
import type { Meter } from '@opentelemetry/api';

export interface PartitionLag {
  topic: string;
  partition: number;
  /** Messages after the group's committed offset (the whole partition when nothing is committed). */
  lag: number;
}

export interface GroupLag {
  groupId: string;
  /** Sum over the partitions of the group's topics. */
  lag: number;
  partitions: PartitionLag[];
}

/** How far a consumer group is behind: high watermark minus committed offset, per partition. */
export async function consumerGroupLag(admin: Admin, groupId: string, topics: string[]): Promise<GroupLag> {
  const [ends, committed] = await Promise.all([
    Promise.all(topics.map(async (topic) => ({ topic, offsets: await admin.fetchTopicOffsets(topic) }))),
    admin.fetchOffsets({ groupId, topics }),
  ]);
  const partitions: PartitionLag[] = [];
  for (const { topic, offsets } of ends) {
    const group = committed.find((c) => c.topic === topic)?.partitions ?? [];
    for (const { partition, high, low } of offsets) {
      const at = group.find((p) => p.partition === partition)?.offset ?? '-1';
      // -1: no committed offset yet; the group still has the retained partition ahead of it.
      const from = BigInt(at) < 0n ? BigInt(low) : BigInt(at);
      const lag = BigInt(high) - from;
      partitions.push({ topic, partition, lag: Number(lag > 0n ? lag : 0n) });
    }
  }
  return { groupId, lag: partitions.reduce((sum, p) => sum + p.lag, 0), partitions };
}

/** The consumer lag gauge's name (OpenTelemetry), one series per group and topic. */
export const CONSUMER_LAG_METRIC = 'messaging.kafka.consumer.lag';

/**
 * Reports the lag of the given groups as an observable gauge: measured when a
 * metric reader collects (e.g. the OTLP exporter's interval), not polled otherwise.
 */
export function registerLagGauge(meter: Meter, lagOf: () => Promise<GroupLag[]>): () => void {
  const gauge = meter.createObservableGauge(CONSUMER_LAG_METRIC, {
    description: 'messages published but not yet committed by the consumer group, per group and topic',
    unit: '{message}',
  });
  const callback = async (result: { observe(value: number, attributes: Record<string, string>): void }) => {
    for (const group of await lagOf()) {
      const perTopic = new Map<string, number>();
      for (const p of group.partitions) perTopic.set(p.topic, (perTopic.get(p.topic) ?? 0) + p.lag);
      for (const [topic, lag] of perTopic) {
        result.observe(lag, { 'messaging.consumer.group.name': group.groupId, 'messaging.destination.name': topic });
      }
    }
  };
  gauge.addCallback(callback);
  return () => gauge.removeCallback(callback);
}
