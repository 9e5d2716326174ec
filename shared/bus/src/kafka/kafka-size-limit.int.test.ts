import { afterAll, beforeAll, it } from 'vitest';
import { describeOrSkip, waitFor } from '@kb/testing';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { createKafkaEventBus, type KafkaEventBus } from './index.js';
import type { ReceivedMessage } from '../port.js';

const brokers = process.env.KAFKA_BROKERS?.split(',')
  .map((b) => b.trim())
  .filter(Boolean);
const skip = brokers?.length ? false : 'skipped: KAFKA_BROKERS is not set (scripts/kafka.sh start starts a broker)';

/** A broker whose limit is below what the bus believes: the bus learns it from the refusal. */
describeOrSkip('a Kafka broker refusing record batches as too large', skip, () => {
  const admin = new Kafka({
    clientId: `size-limit-admin-${randomUUID().slice(0, 8)}`,
    brokers: brokers!,
    logLevel: logLevel.NOTHING,
  }).admin();
  let bus: KafkaEventBus;
  /** A topic that takes record batches of at most 60 kB. */
  const smallTopic = async () => {
    const topic = `size-limit-${randomUUID().slice(0, 8)}`;
    await admin.createTopics({
      waitForLeaders: true,
      topics: [{ topic, numPartitions: 1, configEntries: [{ name: 'max.message.bytes', value: '60000' }] }],
    });
    return topic;
  };
  beforeAll(async () => {
    await admin.connect();
    bus = createKafkaEventBus({
      brokers: brokers!,
      clientId: `size-limit-${randomUUID().slice(0, 8)}`,
      partitions: 1,
      compression: 'none',
    });
  });
  afterAll(async () => {
    await bus.close();
    await admin.disconnect();
  });

  it('splits a refused send and sends it again, down to single messages, in order', { timeout: 90_000 }, async () => {
    const topic = await smallTopic();
    // 40 messages of 20 kB: 800 kB in one call, under the bus's 1 MB, 13 times the topic's limit.
    const messages = Array.from({ length: 40 }, (_, i) => ({ key: 'org-1', value: `${String(i).padStart(3, '0')}${'y'.repeat(20_000)}` }));
    await bus.publish(topic, messages);
    const received: ReceivedMessage[] = [];
    const subscription = await bus.subscribe({
      groupId: `size-limit-${randomUUID().slice(0, 8)}`,
      topics: [topic],
      fromBeginning: true,
      handler: async (m) => {
        received.push(m);
      },
    });
    try {
      await waitFor(() => received.length >= messages.length, 'every message', 60_000);
      assert.deepEqual(
        received.map((m) => m.value.slice(0, 3)),
        messages.map((m) => m.value.slice(0, 3)),
      );
    } finally {
      await subscription.stop();
    }
  });

  it('refuses a single message over the limit with an error that says so', { timeout: 60_000 }, async () => {
    const topic = await smallTopic();
    await assert.rejects(bus.publish(topic, [{ key: 'org-1', value: 'z'.repeat(100_000) }]), (err: Error) => {
      assert.match(err.message, /over the broker's message size limit/);
      return true;
    });
    // The producer still works for what fits.
    await bus.publish(topic, [{ key: 'org-1', value: 'fits' }]);
  });
});
