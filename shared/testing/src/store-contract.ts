import { describe, it, beforeEach, afterEach } from 'vitest';
import { skippedTest } from './skip.js';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ConcurrencyError } from '@kb/platform';
import { DuplicateKeyError, NestedTransactionError, type NewEvent, type Store } from '@kb/store';

export type StoreFactory = () => Promise<{ store: Store; cleanup: () => Promise<void> } | { skip: string }>;

const event = (type: string, data: Record<string, unknown> = {}): NewEvent => ({
  id: randomUUID(),
  type,
  schema: 1,
  data,
  metadata: { org_id: 'org-1', actor: 'test' },
});

/** The one contract every Store adapter passes (DESIGN section 8.3). */
export function describeStoreContract(name: string, factory: StoreFactory): void {
  describe(`Store contract: ${name}`, async () => {
    const probe = await factory();
    if ('skip' in probe) {
      skippedTest('runs against this adapter', probe.skip);
      return;
    }
    await probe.cleanup();

    let store: Store;
    let cleanup: () => Promise<void>;
    beforeEach(async () => {
      const made = await factory();
      if ('skip' in made) throw new Error(made.skip);
      ({ store, cleanup } = made);
    });
    afterEach(async () => cleanup());

    it('appends to a new stream and reads it back in version order', async () => {
      const stored = await store.transaction((tx) => tx.append('s-1', 0, [event('a.created'), event('a.renamed', { n: 1 })]));
      assert.deepEqual(
        stored.map((e) => [e.stream_id, e.version, e.type]),
        [
          ['s-1', 1, 'a.created'],
          ['s-1', 2, 'a.renamed'],
        ],
      );
      const read = await store.readStream('s-1');
      assert.equal(read.length, 2);
      assert.deepEqual(read[1]!.data, { n: 1 });
      assert.equal(read[0]!.metadata.org_id, 'org-1');
      assert.ok(read[0]!.position < read[1]!.position);
      assert.ok(!Number.isNaN(Date.parse(read[0]!.recorded_at)));
    });

    it('rejects an append at a stale expected version with ConcurrencyError', async () => {
      await store.transaction((tx) => tx.append('s-2', 0, [event('a.created')]));
      await assert.rejects(
        store.transaction((tx) => tx.append('s-2', 0, [event('a.created')])),
        (err: unknown) => err instanceof ConcurrencyError,
      );
      await assert.rejects(
        store.transaction((tx) => tx.append('s-2', 5, [event('a.renamed')])),
        (err: unknown) => err instanceof ConcurrencyError,
      );
      assert.equal((await store.readStream('s-2')).length, 1);
    });

    it('rolls back events and documents together when the transaction throws', async () => {
      await assert.rejects(
        store.transaction(async (tx) => {
          await tx.append('s-3', 0, [event('a.created')]);
          await tx.put('things', { id: 't1', name: 'x' });
          await tx.markProcessed('consumer', 'e-1');
          throw new Error('boom');
        }),
        /boom/,
      );
      assert.deepEqual(await store.readStream('s-3'), []);
      assert.equal(await store.get('things', 't1'), undefined);
      assert.equal(await store.transaction((tx) => tx.markProcessed('consumer', 'e-1')), true);
    });

    it('shows a transaction its own writes and hides them from outside readers until commit', async () => {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let seenInside: unknown;
      const running = store.transaction(async (tx) => {
        await tx.put('things', { id: 't2', name: 'inside' });
        seenInside = await tx.get('things', 't2');
        await gate;
      });
      await new Promise((r) => setTimeout(r, 20));
      assert.equal(await store.get('things', 't2'), undefined);
      release();
      await running;
      assert.deepEqual(seenInside, { id: 't2', name: 'inside' });
      assert.deepEqual(await store.get('things', 't2'), { id: 't2', name: 'inside' });
    });

    it('serialises concurrent read-modify-write transactions without losing updates', async () => {
      await store.transaction((tx) => tx.put('counters', { id: 'c', n: 0 }));
      await Promise.all(
        Array.from({ length: 25 }, () =>
          store.transaction(async (tx) => {
            const c = await tx.get<{ id: string; n: number }>('counters', 'c');
            await new Promise((r) => setImmediate(r));
            await tx.put('counters', { id: 'c', n: c!.n + 1 });
          }),
        ),
      );
      assert.deepEqual(await store.get('counters', 'c'), { id: 'c', n: 25 });
    });

    it('gives concurrent appends to one stream exactly one winner per version', async () => {
      const results = await Promise.allSettled(
        Array.from({ length: 5 }, () =>
          store.transaction(async (tx) => {
            const current = await tx.readStream('s-race');
            await new Promise((r) => setImmediate(r));
            return tx.append('s-race', current.length, [event('a.touched')]);
          }),
        ),
      );
      assert.equal(results.filter((r) => r.status === 'rejected').length, 0, 'serialised transactions all see the latest version');
      const versions = (await store.readStream('s-race')).map((e) => e.version);
      assert.deepEqual(versions, [1, 2, 3, 4, 5]);
    });

    it('refuses a nested transaction instead of deadlocking', async () => {
      await assert.rejects(
        store.transaction(() => store.transaction(async () => 1)),
        (err: unknown) => err instanceof NestedTransactionError,
      );
    });

    it('reads all events after a position in commit order, in pages', async () => {
      for (let i = 0; i < 5; i++) await store.transaction((tx) => tx.append(`s-all-${i}`, 0, [event('a.created', { i })]));
      const first = await store.readAll(0, 3);
      assert.equal(first.length, 3);
      const rest = await store.readAll(first[2]!.position, 100);
      assert.deepEqual(
        [...first, ...rest].map((e) => e.data.i),
        [0, 1, 2, 3, 4],
      );
    });

    it('inserts, replaces, deletes and refuses duplicate inserts', async () => {
      await store.transaction(async (tx) => {
        await tx.insert('things', { id: 'd1', v: 1 });
        await assert.rejects(tx.insert('things', { id: 'd1', v: 2 }), (e: unknown) => e instanceof DuplicateKeyError);
        await tx.put('things', { id: 'd1', v: 3 });
      });
      assert.deepEqual(await store.get('things', 'd1'), { id: 'd1', v: 3 });
      assert.equal(await store.transaction((tx) => tx.delete('things', 'd1')), true);
      assert.equal(await store.transaction((tx) => tx.delete('things', 'd1')), false);
      assert.equal(await store.get('things', 'd1'), undefined);
    });

    it('writes a document given as its JSON text as put would, and finds it by its fields', async () => {
      await store.transaction(async (tx) => {
        await tx.put('things', { id: 'j1', v: 1, kind: 'a' });
        await tx.putJson('things', 'j1', JSON.stringify({ id: 'j1', v: 2, kind: 'b', nested: { n: [1, 2] } }));
        await tx.putJson('things', 'j2', JSON.stringify({ id: 'j2', v: 3, kind: 'b' }));
        assert.deepEqual(await tx.get('things', 'j1'), { id: 'j1', v: 2, kind: 'b', nested: { n: [1, 2] } });
      });
      assert.deepEqual(await store.get('things', 'j2'), { id: 'j2', v: 3, kind: 'b' });
      assert.deepEqual(
        (await store.find('things', { where: { kind: 'b' } })).map((d) => d.id),
        ['j1', 'j2'],
      );
    });

    it('keeps collections apart', async () => {
      await store.transaction(async (tx) => {
        await tx.put('a', { id: 'x', from: 'a' });
        await tx.put('b', { id: 'x', from: 'b' });
      });
      assert.deepEqual(await store.get('a', 'x'), { id: 'x', from: 'a' });
      assert.deepEqual(await store.get('b', 'x'), { id: 'x', from: 'b' });
    });

    it('finds by equality, null, $in and booleans, sorts, pages and counts', async () => {
      await store.ensureIndex('items', ['org_id', 'deleted_at']);
      await store.transaction(async (tx) => {
        await tx.put('items', { id: '1', org_id: 'o1', name: 'b', rank: 2, deleted_at: null, flag: true });
        await tx.put('items', { id: '2', org_id: 'o1', name: 'a', rank: 1, deleted_at: null, flag: false });
        await tx.put('items', { id: '3', org_id: 'o1', name: 'c', rank: 3, deleted_at: '2026-01-01T00:00:00.000Z' });
        await tx.put('items', { id: '4', org_id: 'o2', name: 'd', rank: 4 });
      });
      const live = await store.find('items', { where: { org_id: 'o1', deleted_at: null }, sort: [{ field: 'name', order: 'asc' }] });
      assert.deepEqual(
        live.map((d) => d.id),
        ['2', '1'],
      );
      const byRankDesc = await store.find('items', { sort: [{ field: 'rank', order: 'desc' }], limit: 2, offset: 1 });
      assert.deepEqual(
        byRankDesc.map((d) => d.id),
        ['3', '1'],
      );
      const inList = await store.find('items', { where: { id: { $in: ['1', '4', 'nope'] } } });
      assert.deepEqual(inList.map((d) => d.id).sort(), ['1', '4']);
      assert.deepEqual(
        (await store.find('items', { where: { flag: true } })).map((d) => d.id),
        ['1'],
      );
      assert.equal(await store.count('items', { org_id: 'o1' }), 3);
      assert.equal(await store.count('items', { deleted_at: null }), 3, 'null matches missing fields too');
      assert.equal(await store.count('items', { id: { $in: [] } }), 0);
      assert.equal(await store.count('nothing-here'), 0);
    });

    it('records inbox marks once per consumer and event', async () => {
      assert.equal(await store.transaction((tx) => tx.markProcessed('c1', 'e1')), true);
      assert.equal(await store.transaction((tx) => tx.markProcessed('c1', 'e1')), false);
      assert.equal(await store.transaction((tx) => tx.markProcessed('c2', 'e1')), true);
    });

    it('drops the documents of named collections only', async () => {
      await store.transaction(async (tx) => {
        await tx.put('keep', { id: '1' });
        await tx.put('drop', { id: '1' });
        await tx.append('s-keep', 0, [event('a.created')]);
      });
      await store.dropCollections(['drop']);
      assert.equal(await store.count('drop'), 0);
      assert.equal(await store.count('keep'), 1);
      assert.equal((await store.readStream('s-keep')).length, 1, 'events are never dropped');
    });
  });
}
