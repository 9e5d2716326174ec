import { randomUUID } from 'node:crypto';
import { containerRuntimeAvailable, describeEventBusContract } from '@kb/testing';
import { createKafkaEventBus } from './index.js';

/** Brokers named by KAFKA_BROKERS, else a throwaway KRaft broker under testcontainers. */
async function startBroker(): Promise<{ brokers: string[]; stop: () => Promise<void> } | undefined> {
  const named = process.env.KAFKA_BROKERS?.split(',')
    .map((b) => b.trim())
    .filter(Boolean);
  if (named?.length) return { brokers: named, stop: async () => {} };
  if (!(await containerRuntimeAvailable())) return undefined;
  const { KafkaContainer } = await import('@testcontainers/kafka');
  const container = await new KafkaContainer('confluentinc/cp-kafka:7.5.0').withKraft().start();
  return {
    brokers: [`${container.getHost()}:${container.getMappedPort(9093)}`],
    stop: async () => {
      await container.stop();
    },
  };
}

await describeEventBusContract('kafka (kafkajs)', async () => {
  const broker = await startBroker();
  if (!broker)
    return {
      skip: 'skipped: KAFKA_BROKERS is not set and no Docker engine for testcontainers (start a broker with scripts/kafka.sh start and export KAFKA_BROKERS)',
    };
  const connect = () =>
    createKafkaEventBus({
      brokers: broker.brokers,
      clientId: `bus-contract-${randomUUID().slice(0, 8)}`,
      partitions: 4,
      retryBackoffMs: { initial: 50, max: 500 },
    });
  const bus = connect();
  return {
    bus,
    newBus: async () => connect(),
    cleanup: async () => {
      await bus.close();
      await broker.stop();
    },
  };
});
