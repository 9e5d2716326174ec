import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { AppError, errorKinds, randomIds, type ErrorKind } from '@kb/platform';
import { categoryCreated, createCatalog, deadLetterTopic, type EventEnvelope } from '@kb/events';
import { messageBytes, type EventBus, type ReceivedMessage, type Subscription } from '@kb/bus';
import { createSqliteEventBus } from '@kb/bus/sqlite';
import type { Store, StoreTransaction } from '@kb/store';
import { createSqliteStore } from '@kb/store/sqlite';
import { createCommandBus, type CommandBus } from './command-bus.js';
import { createOutboxRelay, type OutboxRelay } from './outbox-relay.js';
import { startEventConsumer } from './consumer.js';
import type { Decider } from './decider.js';
import { waitFor } from '@kb/testing';

/** The outbox relay (publish after commit) and idempotent consumers (inbox, retry vs dead letter) on the embedded adapters. */

const TOPIC = 'test.notes';
// A real event schema on a test topic, and an internal twin that must never reach the bus.
const catalog = createCatalog([
  { ...categoryCreated, type: 'note.added', topic: TOPIC },
  { ...categoryCreated, type: 'note.secret_set', topic: TOPIC, internal: true },
]);

/** The test topic's event, for the consumers' handler table. */
type NoteAdded = { type: 'note.added'; data: Record<string, unknown> };
type NoteCommand = { type: 'add' | 'secret'; org: string; text: string };
const notes: Decider<NoteCommand, number> = {
  initialState: () => 0,
  evolve: (n) => n + 1,
  decide: (c) => [
    {
      type: c.type === 'add' ? 'note.added' : 'note.secret_set',
      data: { category_id: randomUUID(), org_id: c.org, name: c.text, at: new Date().toISOString() },
    },
  ],
};

let dir: string;
let store: Store;
let bus: EventBus;
let commands: CommandBus;
let relay: OutboxRelay;
let received: ReceivedMessage[];
let tap: Subscription;
const subscriptions: Subscription[] = [];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const texts = () => received.map((m) => (JSON.parse(m.value) as EventEnvelope).data.name as string);
const add = (org: string, text: string) =>
  commands.transaction({ metadata: { org_id: org } }, (s) => s.execute(notes, `note-${org}`, { type: 'add', org, text }));

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kb-outbox-'));
  store = createSqliteStore({ path: join(dir, 'service.db') });
  bus = createSqliteEventBus({ path: join(dir, 'bus.db'), pollIntervalMs: 10, retryBackoffMs: { initial: 20, max: 100 } });
  relay = createOutboxRelay({ store, bus, catalog, name: 'test', owner: 'me', pollIntervalMs: 20 });
  commands = createCommandBus({ store, catalog, projections: [], ids: randomIds, onCommitted: () => relay.notify() });
  await relay.start([TOPIC]);
  received = [];
  tap = await bus.subscribe({ groupId: 'tap', topics: [TOPIC], handler: async (m) => void received.push(m) });
});
afterAll(async () => {
  await tap.stop();
  for (const s of subscriptions) await s.stop();
  await relay.stop();
  await bus.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('outbox relay', () => {
  it('publishes an event only after its transaction commits, keyed by org, as the stored envelope', async () => {
    const org = randomUUID();
    let appended: EventEnvelope | undefined;
    await commands.transaction({ metadata: { org_id: org, actor: 'test' } }, async (s) => {
      const { events } = await s.execute(notes, `note-${org}`, { type: 'add', org, text: 'committed' });
      appended = events[0] as unknown as EventEnvelope;
      relay.notify();
      await sleep(150); // several relay polls while the transaction is open
      assert.deepEqual(texts(), [], 'nothing is published before the commit');
    });
    await waitFor(() => received.length === 1, 'the committed event');
    const [message] = received;
    assert.equal(message!.key, org);
    assert.equal(message!.headers.type, 'note.added');
    const envelope = JSON.parse(message!.value) as EventEnvelope;
    assert.equal(envelope.id, appended!.id);
    assert.equal(envelope.position, appended!.position);
    assert.deepEqual(envelope.metadata, { org_id: org, actor: 'test' });
  });

  it('never publishes the events of a rolled-back transaction, nor internal events', async () => {
    const org = randomUUID();
    await assert.rejects(
      commands.transaction({ metadata: { org_id: org } }, async (s) => {
        await s.execute(notes, `note-${org}`, { type: 'add', org, text: 'rolled back' });
        throw new Error('abort');
      }),
    );
    await commands.transaction({ metadata: { org_id: org } }, (s) =>
      s.execute(notes, `secret-${org}`, { type: 'secret', org, text: 'secret' }),
    );
    await add(org, 'after');
    await relay.flush();
    await waitFor(() => texts().includes('after'), 'the later event');
    assert.ok(!texts().includes('rolled back'));
    assert.ok(received.every((m) => m.headers.type === 'note.added'));
  });

  it('keeps each organization in commit order and does not republish after a restart from its checkpoint', async () => {
    const orgs = [randomUUID(), randomUUID(), randomUUID()];
    await Promise.all(
      orgs.map(async (org) => {
        for (let i = 0; i < 15; i++) await add(org, `${org}:${i}`);
      }),
    );
    await waitFor(() => orgs.every((org) => texts().includes(`${org}:14`)), 'every event');
    for (const org of orgs) {
      const mine = received.filter((m) => m.key === org).map((m) => JSON.parse(m.value) as EventEnvelope);
      assert.deepEqual(
        mine.map((e) => e.data.name),
        Array.from({ length: 15 }, (_, i) => `${org}:${i}`),
      );
    }
    const before = received.length;
    const second = createOutboxRelay({ store, bus, catalog, name: 'test', owner: 'me', pollIntervalMs: 20 });
    await second.start([TOPIC]);
    await second.flush();
    await second.stop();
    await sleep(100);
    assert.equal(received.length, before, 'the checkpoint survives a new relay');
  });
});

describe('outbox relay checkpoint', () => {
  it('is written once a batch is unwritten or the relay caught up, so a crash re-publishes less than a batch', async () => {
    const own = createSqliteStore({ path: join(dir, `checkpoint-${randomUUID()}.db`) });
    let checkpointWrites = 0;
    const counted: Store = {
      ...own,
      transaction: (fn) =>
        own.transaction(async (tx) => {
          const put = tx.put;
          return fn({ ...tx, put: (c, doc) => (c === '_checkpoints' && checkpointWrites++, put(c, doc)) });
        }),
    };
    const org = randomUUID();
    const mine = () => received.filter((m) => m.key === org).map((m) => (JSON.parse(m.value) as EventEnvelope).data.name as string);
    // Polls never come: only commits wake it, as under load.
    const relay = (owner: string) =>
      createOutboxRelay({ store: counted, bus, catalog, name: 'cp', owner, batchSize: 4, pollIntervalMs: 3_600_000 });
    /** A relay that starts, publishes what it finds, and stops (cleanly), then the bus settles. */
    const runOnce = async () => {
      const once = relay('me');
      await once.start([TOPIC]);
      await once.flush();
      await once.stop();
      await sleep(100);
    };
    const first = relay('me');
    const writer = createCommandBus({ store: own, catalog, projections: [], ids: randomIds, onCommitted: () => first.notify() });
    try {
      await first.start([TOPIC]);
      for (let i = 0; i < 10; i++) {
        await writer.transaction({ metadata: { org_id: org } }, (s) =>
          s.execute(notes, `note-${org}`, { type: 'add', org, text: `n${i}` }),
        );
        await waitFor(() => mine().length === i + 1, `event ${i} published`);
      }
      assert.equal(checkpointWrites, 2, 'after the 4th and the 8th event, not after each pass');

      // A crash now (no stop): the next relay re-publishes what came after the last write.
      await runOnce();
      assert.deepEqual(mine(), ['n0', 'n1', 'n2', 'n3', 'n4', 'n5', 'n6', 'n7', 'n8', 'n9', 'n8', 'n9'], 'fewer than a batch again');
      assert.equal(checkpointWrites, 3, 'written once caught up');
      await runOnce();
      assert.equal(mine().length, 12, 'nothing more after a clean stop');
    } finally {
      await first.stop();
      await own.close();
    }
  });
});

describe('outbox relay limits and lag', () => {
  it('publishes in batches bounded in bytes, and reports a relay that cannot advance until it does again', async () => {
    const own = createSqliteStore({ path: join(dir, `limits-${randomUUID()}.db`) });
    const sizes: number[] = [];
    let refuse: Error | undefined;
    // The real bus with a small limit, recording what each publish weighs, refusing while `refuse` is set.
    const limited: EventBus = {
      ...bus,
      maxMessageBytes: 2_000,
      publish: async (topic, messages) => {
        if (refuse) throw refuse;
        sizes.push(messages.reduce((sum, m) => sum + messageBytes(m), 0));
        await bus.publish(topic, messages);
      },
    };
    const org = randomUUID();
    const mine = () => received.filter((m) => m.key === org).map((m) => (JSON.parse(m.value) as EventEnvelope).data.name as string);
    const limitedRelay = createOutboxRelay({
      store: own,
      bus: limited,
      catalog,
      name: 'limits',
      owner: 'me',
      pollIntervalMs: 10,
      maxRetryDelayMs: 20,
      failuresBeforeAlert: 3,
    });
    const writer = createCommandBus({ store: own, catalog, projections: [], ids: randomIds, onCommitted: () => limitedRelay.notify() });
    const note = (text: string) =>
      writer.transaction({ metadata: { org_id: org } }, (s) => s.execute(notes, `note-${org}`, { type: 'add', org, text }));
    try {
      for (let i = 0; i < 20; i++) await note(`b${i}`);
      await limitedRelay.start([TOPIC]);
      await waitFor(() => mine().length === 20, 'every event');
      assert.deepEqual(
        mine(),
        Array.from({ length: 20 }, (_, i) => `b${i}`),
      );
      assert.ok(sizes.length >= 4, `several publishes (${sizes.join(', ')} bytes)`);
      assert.ok(
        sizes.every((bytes) => bytes <= 2_000),
        `each under the limit (${sizes.join(', ')} bytes)`,
      );
      await limitedRelay.check();

      refuse = new Error('The request included a message larger than the max message size the server will accept');
      await note('stuck');
      await waitFor(() => limitedRelay.status().failing, 'the relay reports it cannot advance');
      await assert.rejects(
        limitedRelay.check(),
        /outbox relay of limits cannot advance: 1 events .* behind.*the last: The request included a message larger/,
      );

      refuse = undefined;
      await waitFor(() => mine().includes('stuck'), 'the event once the bus takes it');
      await limitedRelay.check();
    } finally {
      await limitedRelay.stop();
      await own.close();
    }
  });
});

describe('outbox relay replicas', () => {
  it('one relays at a time, writing its lease only when a third of it has passed, and another takes over once it ends', async () => {
    const shared = createSqliteStore({ path: join(dir, 'replicas.db') });
    let now = Date.parse('2026-01-01T00:00:00Z');
    const t0 = now;
    const clock = { now: () => new Date(now) };
    const replica = (owner: string) =>
      createOutboxRelay({ store: shared, bus, catalog, name: 'replicas', owner, pollIntervalMs: 3_600_000, leaseMs: 9000, clock });
    const a = replica('a');
    const b = replica('b');
    const writer = createCommandBus({ store: shared, catalog, projections: [], ids: randomIds });
    const org = randomUUID();
    const note = (text: string) =>
      writer.transaction({ metadata: { org_id: org } }, (s) => s.execute(notes, `note-${org}`, { type: 'add', org, text }));
    const lease = async () => (await shared.get<{ id: string; owner: string; expires_at: number }>('_leases', 'outbox:replicas'))!;
    try {
      await a.start([TOPIC]);
      await a.flush();
      await b.start([TOPIC]);
      assert.deepEqual(await lease(), { id: 'outbox:replicas', owner: 'a', expires_at: t0 + 9000 });

      await note('first');
      await b.flush();
      await sleep(100);
      assert.ok(!texts().includes('first'), 'the replica without the lease publishes nothing');
      await a.flush();
      await waitFor(() => texts().includes('first'), 'the holder publishes');

      now = t0 + 2000;
      await note('second');
      await a.flush();
      assert.equal((await lease()).expires_at, t0 + 9000, 'two thirds left: no lease write');
      now = t0 + 3500;
      await note('third');
      await a.flush();
      assert.equal((await lease()).expires_at, t0 + 3500 + 9000, 'under two thirds left: renewed');
      await waitFor(() => texts().includes('third'), 'the holder keeps publishing');

      await a.stop();
      await note('fourth');
      now = t0 + 3500 + 8999;
      await b.flush();
      await sleep(100);
      assert.ok(!texts().includes('fourth'), 'not before the lease ends');
      now = t0 + 3500 + 9001;
      await b.flush();
      await waitFor(() => texts().includes('fourth'), 'the other replica takes over');
      assert.equal((await lease()).owner, 'b');
      assert.equal(texts().filter((t) => t === 'third').length, 1, 'nothing published twice');
    } finally {
      await a.stop();
      await b.stop();
      await shared.close();
    }
  });
});

describe('idempotent event consumer', () => {
  const envelope = (type: string, text: string, id = randomUUID()): EventEnvelope =>
    ({
      id,
      type,
      schema: 1,
      stream_id: 's',
      version: 1,
      position: 1,
      data: { text },
      metadata: { org_id: 'org' },
      recorded_at: new Date().toISOString(),
    }) as EventEnvelope;

  it('handles a redelivered event once (inbox), and rolls back the writes of a failed attempt', async () => {
    const topic = `consumer.${randomUUID()}`;
    let attempts = 0;
    subscriptions.push(
      await startEventConsumer<NoteAdded>({
        bus,
        store,
        groupId: `g-${topic}`,
        topics: [topic],
        handlers: {
          'note.added': async (tx, event) => {
            attempts++;
            const current = await tx.get<{ id: string; n: number }>('counts', 'all');
            await tx.put('counts', { id: 'all', n: (current?.n ?? 0) + 1, last: event.data.text });
            if (attempts === 1) throw new Error('transient, after a write');
          },
        },
      }),
    );
    const once = envelope('note.added', 'dup');
    await bus.publish(topic, [{ key: 'org', value: JSON.stringify(once) }]);
    await bus.publish(topic, [{ key: 'org', value: JSON.stringify(once) }]);
    await bus.publish(topic, [{ key: 'org', value: JSON.stringify(envelope('note.added', 'other')) }]);
    await waitFor(() => attempts === 3, 'two successful attempts after one failure');
    await sleep(150);
    assert.equal(attempts, 3, 'the duplicate was skipped');
    assert.deepEqual(await store.get('counts', 'all'), { id: 'all', n: 2, last: 'other' });
  });

  it('retries retriable errors and dead-letters the rest, for every kind of the taxonomy', async () => {
    const topic = `consumer.${randomUUID()}`;
    const kinds = Object.keys(errorKinds) as ErrorKind[];
    const attempts = new Map<string, number>();
    const handled = new Set<string>();
    const dead: ReceivedMessage[] = [];
    subscriptions.push(
      await bus.subscribe({ groupId: `dlq-${topic}`, topics: [deadLetterTopic(topic)], handler: async (m) => void dead.push(m) }),
    );
    subscriptions.push(
      await startEventConsumer<NoteAdded>({
        bus,
        store,
        groupId: `g-${topic}`,
        topics: [topic],
        handlers: {
          'note.added': async (_tx, event) => {
            const kind = event.data.text as ErrorKind;
            const n = (attempts.get(kind) ?? 0) + 1;
            attempts.set(kind, n);
            if (n === 1) throw new AppError(kind, `first attempt of ${kind}`, { code: `test_${kind}` });
            handled.add(kind);
          },
        },
      }),
    );
    // One key per kind: a retrying message holds back only its own partition.
    for (const kind of kinds) await bus.publish(topic, [{ key: kind, value: JSON.stringify(envelope('note.added', kind)) }]);
    await bus.publish(topic, [{ key: 'junk', value: 'not json' }]);

    const retriable = kinds.filter((k) => errorKinds[k].retriable);
    const terminal = kinds.filter((k) => !errorKinds[k].retriable);
    assert.deepEqual(retriable.map((k) => errorKinds[k].http).sort(), [429, 500, 502, 503]);
    await waitFor(() => retriable.every((k) => handled.has(k)) && dead.length === terminal.length + 1, 'retries and dead letters');
    assert.deepEqual([...handled].sort(), [...retriable].sort());
    const reasons = dead.map((m) => m.headers['x-dead-letter-reason'] ?? '');
    for (const kind of terminal)
      assert.ok(
        reasons.some((r) => r.startsWith(`test_${kind}:`)),
        `${kind} dead-lettered: ${reasons.join(' | ')}`,
      );
    assert.ok(reasons.some((r) => r.startsWith('unparseable')));
    assert.ok(dead.find((m) => m.key === 'junk')?.value === 'not json', 'the original message is kept');
    for (const kind of terminal) assert.equal(attempts.get(kind), 1, `${kind} is not retried`);
  });
});

describe('idempotent event consumer, batches', () => {
  const envelope = (text: string, id: string = randomUUID()): EventEnvelope =>
    ({
      id,
      type: 'note.added',
      schema: 1,
      stream_id: 's',
      version: 1,
      position: 1,
      data: { text },
      metadata: { org_id: 'org' },
      recorded_at: new Date().toISOString(),
    }) as EventEnvelope;

  /** The store, counting transactions; `failCommits` of them run to the end and are then rolled back, as a crash before COMMIT leaves them. */
  function counting(failCommits = 0): Store & { transactions: number } {
    let left = failCommits;
    const wrapped: Store & { transactions: number } = {
      ...store,
      transactions: 0,
      transaction: (fn) =>
        store.transaction(async (tx) => {
          wrapped.transactions++;
          const result = await fn(tx);
          if (left-- > 0) throw new Error('crashed before commit');
          return result;
        }),
    };
    return wrapped;
  }

  /** A topic of one partition holding the events before anyone subscribes, so the consumer reads them as one batch. */
  async function topicWith(events: EventEnvelope[]): Promise<string> {
    const topic = `batch.${randomUUID()}`;
    await bus.ensureTopics([topic]);
    await bus.publish(
      topic,
      events.map((e) => ({ key: 'org', value: JSON.stringify(e) })),
    );
    return topic;
  }

  /** A handler keeping a count per text in the store; `fail` decides per attempt whether it throws after its write. */
  function counter(topic: string, fail: (text: string, attempt: number) => Error | undefined = () => undefined) {
    const attempts = new Map<string, number>();
    return {
      attempts,
      handlers: {
        'note.added': async (tx: StoreTransaction, event: EventEnvelope) => {
          const text = event.data.text as string;
          const attempt = (attempts.get(text) ?? 0) + 1;
          attempts.set(text, attempt);
          const id = `${topic}:${text}`;
          const current = await tx.get<{ id: string; n: number }>('batch_counts', id);
          await tx.put('batch_counts', { id, n: (current?.n ?? 0) + 1 });
          const error = fail(text, attempt);
          if (error) throw error;
        },
      },
      count: async (text: string) => (await store.get<{ id: string; n: number }>('batch_counts', `${topic}:${text}`))?.n,
    };
  }

  it('handles the events in hand in one transaction, each once (a duplicate in the batch is skipped)', async () => {
    const events = Array.from({ length: 20 }, (_, i) => envelope(`n${i}`));
    const topic = await topicWith([...events, events[3]!]);
    const counted = counting();
    const c = counter(topic);
    subscriptions.push(
      await startEventConsumer<NoteAdded>({ bus, store: counted, groupId: `g-${topic}`, topics: [topic], handlers: c.handlers }),
    );
    await waitFor(() => c.attempts.size === 20, 'every event');
    await sleep(150);
    for (let i = 0; i < 20; i++) assert.equal(await c.count(`n${i}`), 1);
    assert.ok(
      [...c.attempts.values()].every((n) => n === 1),
      'no handler ran twice',
    );
    assert.ok(counted.transactions <= 2, `one transaction for the batch, not one per event (${counted.transactions})`);
  });

  it('skips events nobody handles by the type header the relay sets, without parsing their bodies', async () => {
    const topic = `batch.${randomUUID()}`;
    await bus.ensureTopics([topic]);
    const dead: ReceivedMessage[] = [];
    subscriptions.push(
      await bus.subscribe({ groupId: `dlq-${topic}`, topics: [deadLetterTopic(topic)], handler: async (m) => void dead.push(m) }),
    );
    const parse = JSON.parse;
    let parsed = 0;
    JSON.parse = ((text: string, reviver?: Parameters<typeof parse>[1]) => (
      text.length > 100_000 && parsed++,
      parse(text, reviver)
    )) as typeof JSON.parse;
    try {
      const c = counter(topic);
      const big = (text: string) => ({ key: 'org', value: JSON.stringify(envelope(text)), headers: { type: 'note.added' } });
      await bus.publish(topic, [
        ...Array.from({ length: 5 }, () => ({
          key: 'org',
          value: JSON.stringify(envelope('x'.repeat(100_000))),
          headers: { type: 'note.other' },
        })),
        big('kept'),
      ]);
      subscriptions.push(await startEventConsumer<NoteAdded>({ bus, store, groupId: `g-${topic}`, topics: [topic], handlers: c.handlers }));
      await waitFor(() => c.attempts.has('kept'), 'the handled event');
      await sleep(100);
      assert.equal(await c.count('kept'), 1);
      assert.equal(dead.length, 0);
      assert.equal(parsed, 0, 'the skipped bodies were not parsed');
    } finally {
      JSON.parse = parse;
    }
  });

  it('a crash before the batch commits redelivers the whole batch, and the inbox skips it once committed', async () => {
    const events = Array.from({ length: 8 }, (_, i) => envelope(`n${i}`));
    const topic = await topicWith(events);
    const counted = counting(1);
    const c = counter(topic);
    subscriptions.push(
      await startEventConsumer<NoteAdded>({ bus, store: counted, groupId: `g-${topic}`, topics: [topic], handlers: c.handlers }),
    );
    await waitFor(() => [...c.attempts.values()].filter((n) => n === 2).length === 8, 'the batch delivered again');
    // The relay re-publishes after a crash of its own: the same events again.
    await bus.publish(
      topic,
      events.map((e) => ({ key: 'org', value: JSON.stringify(e) })),
    );
    await sleep(300);
    for (let i = 0; i < 8; i++) assert.equal(await c.count(`n${i}`), 1, `n${i} counted once`);
    assert.ok(
      [...c.attempts.values()].every((n) => n === 2),
      'the re-published copies were skipped',
    );
  });

  it('a failure mid-batch rolls the batch back; the events before it commit, the failed one is retried or dead-lettered as alone', async () => {
    const texts = ['a', 'b', 'retry', 'c', 'terminal', 'd'];
    const topic = await topicWith(texts.map((t) => envelope(t)));
    const dead: ReceivedMessage[] = [];
    subscriptions.push(
      await bus.subscribe({ groupId: `dlq-${topic}`, topics: [deadLetterTopic(topic)], handler: async (m) => void dead.push(m) }),
    );
    const c = counter(topic, (text, attempt) => {
      if (text === 'retry' && attempt === 1) return new Error('transient');
      if (text === 'terminal') return new AppError('validation', 'never valid', { code: 'test_terminal' });
      return undefined;
    });
    subscriptions.push(await startEventConsumer<NoteAdded>({ bus, store, groupId: `g-${topic}`, topics: [topic], handlers: c.handlers }));
    await waitFor(() => c.attempts.has('d') && dead.length === 1, 'the last event and the dead letter');
    await sleep(150);
    for (const text of ['a', 'b', 'retry', 'c', 'd']) assert.equal(await c.count(text), 1, `${text} committed once`);
    assert.equal(await c.count('terminal'), undefined, 'the dead-lettered event wrote nothing');
    // Handlers before a failure in the batch run again (rolled back the first time), as on any redelivery.
    assert.ok(c.attempts.get('retry')! >= 2, 'the retriable failure is retried');
    assert.equal(c.attempts.get('terminal'), 1, 'a terminal failure is not retried');
    assert.equal((JSON.parse(dead[0]!.value) as EventEnvelope).data.text, 'terminal');
    assert.ok(dead[0]!.headers['x-dead-letter-reason']?.startsWith('test_terminal:'));
  });
});
