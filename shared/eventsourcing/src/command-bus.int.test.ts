import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { ConcurrencyError, randomIds, type AppError } from '@kb/platform';
import { categoryCreated, createCatalog, promptCreated } from '@kb/events';
import type { Store } from '@kb/store';
import { createSqliteStore } from '@kb/store/sqlite';
import { createCommandBus, publishedEventBytes } from './command-bus.js';
import type { Decider } from './decider.js';
import type { Projection } from './projection.js';

/** A stream loaded and then appended to in one transaction is read once; what execute decides on is never stale. */

const catalog = createCatalog([{ ...categoryCreated, type: 'note.added', topic: 'test.notes' }]);
const notes: Decider<{ org: string }, number> = {
  initialState: () => 0,
  evolve: (n) => n + 1,
  decide: (c) => [{ type: 'note.added', data: { category_id: randomUUID(), org_id: c.org, name: 'note', at: new Date().toISOString() } }],
};
const ORG = randomUUID();
const metadata = { org_id: ORG, actor: 'test' };

let dir: string;
let inner: Store;
/** The SQLite store with every transaction's stream reads counted per stream. */
let store: Store;
const reads = new Map<string, number>();

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'kb-command-bus-'));
  inner = createSqliteStore({ path: join(dir, 'store.db') });
  store = {
    ...inner,
    transaction: (fn) =>
      inner.transaction((tx) =>
        fn({
          ...tx,
          readStream: (id) => {
            reads.set(id, (reads.get(id) ?? 0) + 1);
            return tx.readStream(id);
          },
        }),
      ),
  };
});
afterAll(async () => {
  await inner.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('command sessions', () => {
  const bus = () => createCommandBus({ store, catalog, projections: [], ids: randomIds });

  it('read a stream once for a load followed by an execute, and again for every later execute', async () => {
    reads.clear();
    const stream = `note-${randomUUID()}`;
    const states = await bus().transaction({ metadata }, async (session) => {
      const { version } = await session.load(notes, stream);
      assert.equal(version, 0);
      const first = await session.execute(notes, stream, { org: ORG });
      const second = await session.execute(notes, stream, { org: ORG });
      return [first.state, second.state, (await session.load(notes, stream)).version];
    });
    assert.deepEqual(states, [1, 2, 2]);
    assert.equal(reads.get(stream), 3, 'load + (cached) execute + execute + load');
    assert.equal((await store.readStream(stream)).length, 2);
  });

  it('never carry a loaded history into another transaction', async () => {
    const stream = `note-${randomUUID()}`;
    const commands = bus();
    // A transaction that loads, then fails before its execute: the next one reads the stream afresh.
    await assert.rejects(
      commands.transaction({ metadata }, async (session) => {
        await session.load(notes, stream);
        throw new Error('abandoned');
      }),
      /abandoned/,
    );
    await commands.transaction({ metadata }, (session) => session.execute(notes, stream, { org: ORG }));
    reads.clear();
    const { state } = await commands.transaction({ metadata }, (session) => session.execute(notes, stream, { org: ORG }));
    assert.equal(state, 2);
    assert.equal(reads.get(stream), 1);
  });

  it('still append at the loaded version only: the store rejects a history that moved', async () => {
    const stream = `note-${randomUUID()}`;
    const commands = bus();
    await assert.rejects(
      commands.transaction({ metadata }, async (session) => {
        await session.load(notes, stream);
        // Appended behind the session's back, as another writer would.
        await session.tx.append(stream, 0, [{ id: randomUUID(), type: 'note.added', schema: 1, data: {}, metadata }]);
        await session.execute(notes, stream, { org: ORG });
      }),
      (err: unknown) => err instanceof ConcurrencyError,
    );
    assert.equal((await store.readStream(stream)).length, 0);
  });

  it('let projections forget what they kept for a transaction that failed before its flush', async () => {
    // The SQLite store hands every transaction the same StoreTransaction object, so a projection
    // keeping state by transaction would carry a failed one's into the next without discard.
    const kept = new WeakMap<object, number>();
    const counter: Projection = {
      name: 'counter',
      collections: ['note_counts'],
      async apply(tx) {
        kept.set(tx, (kept.get(tx) ?? 0) + 1);
      },
      async flush(tx) {
        await tx.put('note_counts', { id: 'last', n: kept.get(tx) ?? 0 });
        kept.delete(tx);
      },
      discard(tx) {
        kept.delete(tx);
      },
    };
    const commands = createCommandBus({ store: inner, catalog, projections: [counter], ids: randomIds });
    await assert.rejects(
      commands.transaction({ metadata }, async (session) => {
        await session.execute(notes, `note-${randomUUID()}`, { org: ORG });
        await session.execute(notes, `note-${randomUUID()}`, { org: ORG });
        throw new Error('failed after two appends');
      }),
      /failed after two appends/,
    );
    await commands.transaction({ metadata }, (session) => session.execute(notes, `note-${randomUUID()}`, { org: ORG }));
    assert.deepEqual(await inner.get('note_counts', 'last'), { id: 'last', n: 1 });
  });
});

describe('events the bus cannot carry', () => {
  const limit = 2_000;
  // An event with user-sized text: a prompt's.
  const texts = createCatalog([{ ...promptCreated, type: 'text.added', topic: 'test.texts' }]);
  const named = (text: string): Decider<{ org: string }, number> => ({
    initialState: () => 0,
    evolve: (n) => n + 1,
    decide: (c) => [
      {
        type: 'text.added',
        data: { prompt_id: randomUUID(), org_id: c.org, name: 'prompt', text, tags: [], at: new Date().toISOString() },
      },
    ],
  });
  const limited = () => createCommandBus({ store, catalog: texts, projections: [], ids: randomIds, maxEventBytes: limit });

  it('are never appended: the command fails with 413 event_too_large and the stream is unchanged', async () => {
    const stream = `note-${randomUUID()}`;
    await assert.rejects(
      limited().transaction({ metadata }, (s) => s.execute(named('n'.repeat(limit)), stream, { org: ORG })),
      (err: AppError) => {
        assert.equal(err.httpStatus, 413);
        assert.equal(err.code, 'event_too_large');
        assert.match(err.message, /its text\.added event would be [\d,]+ bytes, over the 2,000 the event bus carries/);
        return true;
      },
    );
    assert.deepEqual(await store.readStream(stream), []);
  });

  it('an event just under the limit is appended, as the relay will send it', async () => {
    const stream = `note-${randomUUID()}`;
    // The envelope without the name, then a name that fills the rest.
    const probe = await createCommandBus({ store, catalog: texts, projections: [], ids: randomIds }).transaction({ metadata }, (s) =>
      s.execute(named(''), `note-${randomUUID()}`, { org: ORG }),
    );
    const base = publishedEventBytes(probe.events[0]!, stream);
    const { events } = await limited().transaction({ metadata }, (s) => s.execute(named('m'.repeat(limit - base)), stream, { org: ORG }));
    assert.equal(publishedEventBytes(events[0]!, stream), limit);
    assert.equal((await store.readStream(stream)).length, 1);
  });
});
