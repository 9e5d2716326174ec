import { describe, it, afterAll, afterEach } from 'vitest';
import { describeOrSkip } from './skip.js';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { waitFor as waitForCondition } from './wait.js';
import type { EventBus, OutgoingMessage, ReceivedMessage, SubscribeOptions, Subscription } from '@kb/bus';

export interface EventBusUnderTest {
  bus: EventBus;
  cleanup: () => Promise<void>;
  /** Another client on the same backend (another connection / another process's view). */
  newBus?: () => Promise<EventBus>;
}

export type EventBusFactory = () => Promise<EventBusUnderTest | { skip: string }>;

/** Generous for a broker under testcontainers; an embedded bus answers in milliseconds. */
const WAIT_MS = 30_000;
/** How long "nothing more arrives" is observed before asserting a negative. */
const QUIET_MS = 250;
const TEST_TIMEOUT = { timeout: 90_000 };

const unique = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

const waitFor = (condition: () => boolean, what: string, timeoutMs = WAIT_MS) => waitForCondition(condition, what, timeoutMs);

/** Collects deliveries; `values` is the delivery order. */
function recorder() {
  const received: ReceivedMessage[] = [];
  return {
    received,
    values: () => received.map((m) => m.value),
    handler: async (message: ReceivedMessage) => {
      received.push(message);
    },
  };
}

const compareOffsets = (a: string, b: string) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0);

/**
 * The one contract every EventBus adapter passes (DESIGN section 8.3). The
 * factory is called once; every test uses its own topics and groups, so the
 * suite also runs against a shared broker. Await this at the top of the test
 * file: the factory decides whether the suite runs or is reported as skipped.
 */
export async function describeEventBusContract(name: string, factory: EventBusFactory): Promise<void> {
  const title = `EventBus contract: ${name}`;
  const made = await factory();
  if ('skip' in made) {
    describeOrSkip(title, made.skip, () => {});
    return;
  }

  describe(title, () => {
    const { bus } = made;
    const otherBuses: EventBus[] = [];
    const subscriptions: Subscription[] = [];

    const subscribe = async (target: EventBus, options: SubscribeOptions) => {
      const subscription = await target.subscribe(options);
      subscriptions.push(subscription);
      return subscription;
    };
    const secondBus = async () => {
      if (!made.newBus) return bus;
      const other = await made.newBus();
      otherBuses.push(other);
      return other;
    };
    const newTopic = async (prefix: string) => {
      const topic = unique(prefix);
      await bus.ensureTopics([topic]);
      return topic;
    };

    afterEach(async () => {
      await Promise.all(subscriptions.splice(0).map((s) => s.stop()));
    });
    afterAll(async () => {
      await Promise.all(otherBuses.map((b) => b.close()));
      await made.cleanup();
    });

    it('delivers published messages with their keys, values and headers', TEST_TIMEOUT, async () => {
      const topic = await newTopic('basic');
      const sent: OutgoingMessage[] = [
        { key: 'org-a', value: '{"n":1}', headers: { 'x-type': 'thing.created', 'x-id': 'e-1' } },
        { key: 'org-b', value: 'plain text, ünïcödé ✓', headers: {} },
        { key: 'org-a', value: '{"n":2}' },
      ];
      await bus.publish(topic, sent);
      const rec = recorder();
      await subscribe(bus, { groupId: unique('basic'), topics: [topic], fromBeginning: true, handler: rec.handler });
      await waitFor(() => rec.received.length >= sent.length, 'all three messages');

      for (const message of sent) {
        const got = rec.received.find((m) => m.value === message.value);
        assert.ok(got, `received ${message.value}`);
        assert.equal(got.topic, topic);
        assert.equal(got.key, message.key);
        assert.deepEqual(got.headers, message.headers ?? {});
        assert.match(got.offset, /^\d+$/);
        assert.ok(Number.isInteger(got.partition) && got.partition >= 0);
        assert.ok(!Number.isNaN(Date.parse(got.timestamp)), `timestamp ${got.timestamp} is ISO 8601`);
      }
      const [first, second] = ['{"n":1}', '{"n":2}'].map((v) => rec.received.find((m) => m.value === v)!);
      assert.equal(first!.partition, second!.partition, 'one key, one partition');
      assert.equal(compareOffsets(first!.offset, second!.offset), -1);
    });

    it('keeps the order of messages per key across many messages, keys and publish calls', TEST_TIMEOUT, async () => {
      const topic = await newTopic('order');
      const keys = Array.from({ length: 6 }, (_, i) => `org-${i}`);
      const perKey = 30;
      const all: OutgoingMessage[] = [];
      for (let i = 0; i < perKey; i++) for (const key of keys) all.push({ key, value: `${key}:${i}` });
      for (let i = 0; i < all.length; i += 18) await bus.publish(topic, all.slice(i, i + 18));

      const rec = recorder();
      await subscribe(bus, { groupId: unique('order'), topics: [topic], fromBeginning: true, handler: rec.handler });
      await waitFor(() => rec.received.length >= all.length, `${all.length} messages`);

      for (const key of keys) {
        const values = rec.received.filter((m) => m.key === key).map((m) => m.value);
        assert.deepEqual(
          values,
          Array.from({ length: perKey }, (_, i) => `${key}:${i}`),
          `order of ${key}`,
        );
      }
      const byPartition = new Map<number, string[]>();
      for (const m of rec.received) byPartition.set(m.partition, [...(byPartition.get(m.partition) ?? []), m.offset]);
      for (const [partition, offsets] of byPartition) {
        assert.deepEqual(offsets, [...offsets].sort(compareOffsets), `offsets of partition ${partition} ascend`);
      }
    });

    it('delivers every message to each consumer group', TEST_TIMEOUT, async () => {
      const topic = await newTopic('groups');
      const sent = Array.from({ length: 20 }, (_, i) => ({ key: `org-${i % 5}`, value: `m-${i}` }));
      await bus.publish(topic, sent);
      const a = recorder();
      const b = recorder();
      await subscribe(bus, { groupId: unique('group-a'), topics: [topic], fromBeginning: true, handler: a.handler });
      await subscribe(bus, { groupId: unique('group-b'), topics: [topic], fromBeginning: true, handler: b.handler });
      await waitFor(() => a.received.length >= sent.length && b.received.length >= sent.length, 'both groups');
      await sleep(QUIET_MS);

      const expected = sent.map((m) => m.value).sort();
      assert.deepEqual(a.values().sort(), expected);
      assert.deepEqual(b.values().sort(), expected);
    });

    it('splits a group between its consumers, each message handled once', TEST_TIMEOUT, async () => {
      const topic = await newTopic('split');
      const groupId = unique('split');
      const one = recorder();
      const two = recorder();
      await subscribe(bus, { groupId, topics: [topic], fromBeginning: true, handler: one.handler });
      await subscribe(await secondBus(), { groupId, topics: [topic], fromBeginning: true, handler: two.handler });

      // Publish rounds until both consumers took part: the group's rebalance
      // completes in the background, so "eventually split" is what is checked.
      const published: string[] = [];
      const total = () => one.received.length + two.received.length;
      for (let round = 0; round < 50 && (one.received.length === 0 || two.received.length === 0); round++) {
        const batch = Array.from({ length: 16 }, (_, i) => ({ key: `org-${i}`, value: `r${round}-${i}` }));
        await bus.publish(topic, batch);
        published.push(...batch.map((m) => m.value));
        await waitFor(() => total() >= published.length, `round ${round} delivered`);
      }
      await sleep(QUIET_MS);

      assert.ok(one.received.length > 0 && two.received.length > 0, 'both consumers handled messages');
      const handled = [...one.values(), ...two.values()];
      assert.equal(new Set(handled).size, handled.length, 'no message handled twice');
      assert.deepEqual(handled.sort(), published.sort());
    });

    it('resumes from the committed offset after stop and resubscribe', TEST_TIMEOUT, async () => {
      const topic = await newTopic('resume');
      const groupId = unique('resume');
      const early = Array.from({ length: 5 }, (_, i) => ({ key: `org-${i % 2}`, value: `early-${i}` }));
      const late = Array.from({ length: 3 }, (_, i) => ({ key: `org-${i % 2}`, value: `late-${i}` }));
      await bus.publish(topic, early);

      const first = recorder();
      const subscription = await subscribe(bus, { groupId, topics: [topic], fromBeginning: true, handler: first.handler });
      await waitFor(() => first.received.length >= early.length, 'the early messages');
      await subscription.stop();

      await bus.publish(topic, late);
      const second = recorder();
      await subscribe(bus, { groupId, topics: [topic], fromBeginning: true, handler: second.handler });
      await waitFor(() => second.received.length >= late.length, 'the messages published while stopped');
      await sleep(QUIET_MS);

      assert.deepEqual(first.values().sort(), early.map((m) => m.value).sort());
      assert.deepEqual(second.values().sort(), late.map((m) => m.value).sort(), 'only what was not handled before');
    });

    it('redelivers a message whose handler threw, holding back later messages of its partition only', TEST_TIMEOUT, async () => {
      const topic = await newTopic('retry');
      const stuck = ['stuck-0', 'stuck-1', 'stuck-2'].map((value) => ({ key: 'org-stuck', value }));
      // Published once the first failure happened, so their delivery proves the
      // other partitions are not waiting for the failing one.
      const others = Array.from({ length: 12 }, (_, i) => ({ key: `org-other-${i}`, value: `other-${i}` }));
      await bus.publish(topic, stuck);

      const deliveries: ReceivedMessage[] = [];
      let failures = 0;
      let firstFailureAt = 0;
      let othersFlowedDuringFailures = false;
      await subscribe(bus, {
        groupId: unique('retry'),
        topics: [topic],
        fromBeginning: true,
        handler: async (message) => {
          deliveries.push(message);
          if (message.value !== 'stuck-0') return;
          firstFailureAt ||= Date.now();
          othersFlowedDuringFailures ||= deliveries.some((m) => m.value.startsWith('other-') && m.partition !== message.partition);
          // Keep failing until another partition made progress (bounded, so a
          // bus that blocks fails the assertion below instead of hanging).
          const giveUp = Date.now() - firstFailureAt > WAIT_MS / 3;
          if (failures < 2 || (!othersFlowedDuringFailures && !giveUp)) {
            failures += 1;
            throw new Error(`induced failure ${failures}`);
          }
        },
      });
      await waitFor(() => failures >= 1, 'the first failure');
      await bus.publish(topic, others);
      await waitFor(() => deliveries.some((m) => m.value === 'stuck-2'), 'the last stuck message');
      await waitFor(() => others.every((o) => deliveries.some((m) => m.value === o.value)), 'the other messages');
      await sleep(QUIET_MS);

      const attempts = deliveries.filter((m) => m.value === 'stuck-0');
      assert.equal(attempts.length, failures + 1, 'every failure was followed by a redelivery');
      assert.ok(attempts.length >= 3);
      assert.equal(new Set(attempts.map((m) => `${m.partition}/${m.offset}`)).size, 1, 'the same message each time');
      const order = deliveries.filter((m) => m.key === 'org-stuck').map((m) => m.value);
      assert.deepEqual(order, [...attempts.map(() => 'stuck-0'), 'stuck-1', 'stuck-2'], 'later messages waited');
      assert.ok(othersFlowedDuringFailures, 'other partitions kept flowing while one was failing');
    });

    it('does not commit a failed message: the group gets it again after resubscribing', TEST_TIMEOUT, async () => {
      const topic = await newTopic('uncommitted');
      const groupId = unique('uncommitted');
      await bus.publish(topic, [
        { key: 'org-1', value: 'poison' },
        { key: 'org-1', value: 'after' },
      ]);
      let attempts = 0;
      const failing = await subscribe(bus, {
        groupId,
        topics: [topic],
        fromBeginning: true,
        handler: async (message) => {
          attempts += 1;
          throw new Error(`cannot handle ${message.value}`);
        },
      });
      await waitFor(() => attempts >= 2, 'a redelivery');
      await failing.stop();

      const rec = recorder();
      await subscribe(bus, { groupId, topics: [topic], fromBeginning: true, handler: rec.handler });
      await waitFor(() => rec.received.length >= 2, 'both messages');
      assert.deepEqual(rec.values(), ['poison', 'after']);
    });

    it('starts a new group at the end of the log when fromBeginning is false', TEST_TIMEOUT, async () => {
      const topic = await newTopic('latest');
      await bus.publish(
        topic,
        Array.from({ length: 5 }, (_, i) => ({ key: `org-${i}`, value: `history-${i}` })),
      );
      const rec = recorder();
      await subscribe(bus, { groupId: unique('latest'), topics: [topic], fromBeginning: false, handler: rec.handler });
      const fresh = Array.from({ length: 3 }, (_, i) => ({ key: `org-${i}`, value: `fresh-${i}` }));
      await bus.publish(topic, fresh);
      await waitFor(() => rec.received.length >= fresh.length, 'the fresh messages');
      await sleep(QUIET_MS);
      assert.deepEqual(rec.values().sort(), fresh.map((m) => m.value).sort());
    });

    it('continues a group from its committed offset even when fromBeginning is false', TEST_TIMEOUT, async () => {
      const topic = await newTopic('latest-known');
      const groupId = unique('latest-known');
      await bus.publish(topic, [{ key: 'org-1', value: 'first' }]);
      const before = recorder();
      const subscription = await subscribe(bus, { groupId, topics: [topic], fromBeginning: true, handler: before.handler });
      await waitFor(() => before.received.length >= 1, 'the first message');
      await subscription.stop();

      await bus.publish(topic, [{ key: 'org-1', value: 'while-away' }]);
      const rec = recorder();
      await subscribe(bus, { groupId, topics: [topic], fromBeginning: false, handler: rec.handler });
      await waitFor(() => rec.received.length >= 1, 'the message published while away');
      await sleep(QUIET_MS);
      assert.deepEqual(rec.values(), ['while-away']);
    });

    it('publishes a list larger than the bus carries at once, in order, in one call', TEST_TIMEOUT, async () => {
      const topic = await newTopic('large-batch');
      // One key (one partition, one record batch on Kafka), 2.5 times the limit in random text that compression
      // cannot shrink below it: over a broker's default message.max.bytes.
      const size = Math.ceil(bus.maxMessageBytes / 10);
      const count = 25;
      const messages = Array.from({ length: count }, (_, i) => ({
        key: 'org-1',
        value: `${String(i).padStart(4, '0')}:${randomBytes(size).toString('base64').slice(0, size)}`,
      }));
      await bus.publish(topic, messages);
      const rec = recorder();
      await subscribe(bus, { groupId: unique('large-batch'), topics: [topic], fromBeginning: true, handler: rec.handler });
      await waitFor(() => rec.received.length >= count, `${count} messages of ${size} bytes`);
      assert.deepEqual(
        rec.values().map((v) => v.slice(0, 4)),
        messages.map((m) => m.value.slice(0, 4)),
      );
      assert.ok(rec.values().every((v) => v.length === size + 5));
    });

    it('ensureTopics is idempotent, also across clients', TEST_TIMEOUT, async () => {
      const topic = unique('ensure');
      const another = unique('ensure');
      await Promise.all([bus.ensureTopics([topic]), bus.ensureTopics([topic, another])]);
      await bus.ensureTopics([topic]);
      await bus.ensureTopics([]);
      await (await secondBus()).ensureTopics([topic, another]);

      await bus.publish(topic, [{ key: 'org-1', value: 'still works' }]);
      const rec = recorder();
      await subscribe(bus, { groupId: unique('ensure'), topics: [topic], fromBeginning: true, handler: rec.handler });
      await waitFor(() => rec.received.length >= 1, 'the message');
      assert.deepEqual(rec.values(), ['still works']);
    });
  });
}
