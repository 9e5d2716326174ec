import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import { randomIds, silentLogger, systemClock } from '@kb/platform';
import { eventCatalog } from '@kb/events';
import type { Store } from '@kb/store';
import { createSqliteStore } from '@kb/store/sqlite';
import type { BlobStore } from '@kb/blob';
import { createFsBlobStore } from '@kb/blob/fs';
import { createCommandBus } from '@kb/eventsourcing';
import type { CallContext } from '@kb/rpc';
import { createIntake } from './app/intake.js';
import { createProcessor, isDue, retryDelay } from './app/processor.js';
import { JOBS, type JobDoc } from './app/jobs.js';
import { createExtractionPool, type ExtractionPool } from './extract/pool.js';
import { DEFAULT_LIMITS } from './extract/types.js';
import { CONTENT, type ContentDoc } from './projections/content.js';
import { contentStream } from './domain/content.js';
import { ingestProjections } from './projections/index.js';

/**
 * The processing loop against the real SQLite store, file blobs and worker
 * pool. Transient failures are injected at the blob store (the one I/O the
 * loop does besides the store), as a flaky disk or GridFS would produce them.
 */
const ctx: CallContext = {
  org_id: randomUUID(),
  principal: { type: 'api_key', id: 'k' },
  permissions: [],
  folder_scope: null,
  request_id: 'r',
};

/** A real extraction pool (worker threads), with limits roomy enough for every file these tests extract. */
const extractionPool = (options: { size: number; timeoutMs: number; memoryMb: number; nice?: number }) =>
  createExtractionPool({ ...options, limits: { ...DEFAULT_LIMITS, maxUncompressedBytes: 1e8, maxCompressionRatio: 200 } });

let dir: string;
let store: Store;
let pool: ExtractionPool;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kb-ingest-int-'));
  store = await createSqliteStore({ path: join(dir, 'ingest.db'), clock: systemClock });
  pool = extractionPool({ size: 1, timeoutMs: 20_000, memoryMb: 256 });
});
afterAll(async () => {
  await pool.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The store read through `get` only, as GridFS is: without `localPath` the processor reads the bytes and hands them to the pool. */
function throughGet(blobs: BlobStore): BlobStore {
  const { localPath: _onDisk, ...rest } = blobs;
  return rest;
}

/** Blob reads (through `get`) fail `failures` times before they work (-1: always). */
function flaky(blobs: BlobStore, failures: number): BlobStore & { reads: number } {
  const wrapped = {
    ...throughGet(blobs),
    reads: 0,
    async get(key: string) {
      wrapped.reads++;
      if (failures < 0 || wrapped.reads <= failures) throw new Error('storage unavailable');
      return blobs.get(key);
    },
  };
  return wrapped;
}

function setup(
  blobs: BlobStore,
  owner = 'test',
  extra: {
    leaseMs?: number;
    isOwnerGone?: (owner: string) => boolean;
    maxChunks?: number;
    pool?: ExtractionPool;
    concurrency?: number;
  } = {},
) {
  const commands = createCommandBus({ store, catalog: eventCatalog, projections: ingestProjections, ids: randomIds });
  const processor = createProcessor({
    store,
    commands,
    blobs,
    pool: extra.pool ?? pool,
    clock: systemClock,
    logger: silentLogger(),
    owner,
    concurrency: extra.concurrency ?? 1,
    maxAttempts: 3,
    retryBaseMs: 20,
    leaseMs: extra.leaseMs ?? 60_000,
    ...(extra.isOwnerGone && { isOwnerGone: extra.isOwnerGone }),
    ...(extra.maxChunks !== undefined && { maxChunks: extra.maxChunks }),
    pollMs: 10,
    chunking: { targetChars: 500, overlapChars: 50 },
  });
  const intake = createIntake({
    store,
    commands,
    blobs,
    ids: randomIds,
    clock: systemClock,
    maxUploadBytes: 1e6,
    onQueued: () => processor.notify(),
  });
  return { processor, intake };
}

async function settled(id: string): Promise<ContentDoc> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const item = await store.get<ContentDoc>(CONTENT, id);
    if (item && (item.processing_status === 'completed' || item.processing_status === 'failed')) return item;
    assert.ok(Date.now() < deadline, `still ${item?.processing_status}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('the ingest processing loop', () => {
  it('retries a transient failure with backoff and completes', async () => {
    const blobs = flaky(createFsBlobStore({ root: join(dir, 'b1') }), 2);
    const { processor, intake } = setup(blobs);
    processor.start();
    try {
      const item = await intake.createRaw(ctx, { title: 'Flaky', text: 'Some text to keep.', filing: { parent_id: null, tags: [] } });
      const done = await settled(item.id);
      assert.equal(done.processing_status, 'completed');
      assert.equal(done.attempts, 3);
      assert.equal(blobs.reads, 3);
      assert.equal(await store.count(JOBS), 0, 'the job is gone once settled');
    } finally {
      await processor.stop();
    }
  });

  it('fails with the reason once the attempts run out', async () => {
    const blobs = flaky(createFsBlobStore({ root: join(dir, 'b2') }), -1);
    const { processor, intake } = setup(blobs);
    processor.start();
    try {
      const item = await intake.createRaw(ctx, { title: 'Broken', text: 'Never readable.', filing: { parent_id: null, tags: [] } });
      const done = await settled(item.id);
      assert.equal(done.processing_status, 'failed');
      assert.equal(done.attempts, 3);
      assert.match(done.failure_reason!, /storage unavailable.*gave up after 3 attempts/);
    } finally {
      await processor.stop();
    }
  });

  describe("originals on this machine's disk: the worker reads them itself", () => {
    /** A file store whose `get` is counted: the processor should not call it. */
    function counted(root: string) {
      const blobs = createFsBlobStore({ root });
      const wrapped = { ...blobs, gets: 0, get: (key: string) => (wrapped.gets++, blobs.get(key)) };
      return wrapped;
    }
    /** Queues a raw item with the loop stopped, lets `change` alter its stored original, then processes it. */
    async function processAfter(root: string, change: (path: string) => void) {
      const blobs = counted(root);
      const { processor, intake } = setup(blobs);
      // Text of its own: the same text again would be skipped as a duplicate of the one processed before.
      const text = `Text kept in a file under ${root}.`;
      const item = await intake.createRaw(ctx, { title: 'On disk', text, filing: { parent_id: null, tags: [] } });
      const [job] = await store.find<JobDoc>(JOBS, { where: { content_id: item.id } });
      change(blobs.localPath!(job!.blob_key));
      processor.start();
      try {
        return { done: await settled(item.id), blobs };
      } finally {
        await processor.stop();
      }
    }

    it('completes without the main thread reading the file', async () => {
      const { done, blobs } = await processAfter(join(dir, 'disk1'), () => {});
      assert.equal(done.processing_status, 'completed');
      assert.equal(blobs.gets, 0);
    });

    it('fails at once when the file is gone, and retries one it cannot read until the attempts run out', async () => {
      const gone = await processAfter(join(dir, 'disk2'), (path) => rmSync(path));
      assert.equal(gone.done.processing_status, 'failed');
      assert.equal(gone.done.attempts, 1);
      assert.match(gone.done.failure_reason!, /missing from storage/);

      const unreadable = await processAfter(join(dir, 'disk3'), (path) => {
        rmSync(path);
        mkdirSync(path);
      });
      assert.equal(unreadable.done.processing_status, 'failed');
      assert.equal(unreadable.done.attempts, 3);
      assert.match(unreadable.done.failure_reason!, /Reading the stored file failed.*gave up after 3 attempts/);
    });
  });

  it('takes over a job whose worker died once its lease expires', async () => {
    const blobs = createFsBlobStore({ root: join(dir, 'b3') });
    const first = setup(blobs, 'dead-worker');
    // Queue without a running loop, then mark the job as held by a worker that died just now.
    const item = await first.intake.createRaw(ctx, {
      title: 'Orphan',
      text: 'Left behind by a crash.',
      filing: { parent_id: null, tags: [] },
    });
    const job = (await store.get<JobDoc>(JOBS, item.version_id))!;
    await store.transaction((tx) =>
      tx.put(JOBS, { ...job, status: 'running', attempts: 1, lease_owner: 'dead-worker', lease_expires_at: Date.now() + 300 }),
    );
    const second = setup(blobs, 'survivor');
    second.processor.start();
    try {
      const done = await settled(item.id);
      assert.equal(done.processing_status, 'completed');
      assert.equal(done.attempts, 2);
    } finally {
      await second.processor.stop();
    }
  });
});

describe('one commit per file', () => {
  it('settling a job takes the next due one in the same commit, its events under its own organization', async () => {
    const blobs = createFsBlobStore({ root: join(dir, 'b5') });
    let transactions = 0;
    const counted: Store = { ...store, transaction: (fn) => (transactions++, store.transaction(fn)) };
    const commands = createCommandBus({ store: counted, catalog: eventCatalog, projections: ingestProjections, ids: randomIds });
    const processor = createProcessor({
      store: counted,
      commands,
      blobs,
      pool,
      clock: systemClock,
      logger: silentLogger(),
      owner: 'chain',
      concurrency: 1,
      maxAttempts: 3,
      retryBaseMs: 20,
      leaseMs: 60_000,
      pollMs: 3_600_000,
      chunking: { targetChars: 500, overlapChars: 50 },
    });
    const { intake } = setup(blobs);
    const other: CallContext = { ...ctx, org_id: randomUUID() };
    const items = [];
    for (const [i, c] of [ctx, other, ctx].entries())
      items.push(await intake.createRaw(c, { title: `Chained ${i}`, text: `Text number ${i}.`, filing: { parent_id: null, tags: [] } }));
    processor.start();
    try {
      for (const item of items) assert.equal((await settled(item.id)).processing_status, 'completed');
      // One claim, three settles that each claim the next (the last finds none), one look once the slot is free.
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(transactions, 5);
      for (const [i, item] of items.entries()) {
        const events = await store.readStream(contentStream(item.id));
        const started = events.find((e) => e.type === 'content.processing_started');
        assert.equal(started?.metadata.org_id, i === 1 ? other.org_id : ctx.org_id, "the claim is recorded under the job's organization");
      }
    } finally {
      await processor.stop();
    }
  });
});

describe('files read ahead for the workers', () => {
  /** A pool of one worker that finishes a file only when the test releases it; files handed over wait in its queue. */
  function heldPool() {
    const handed: { filename: string; release: () => void }[] = [];
    const held: ExtractionPool = {
      extract: (input) =>
        new Promise((resolve) => {
          handed.push({
            filename: input.filename,
            release: () => {
              const bytes = 'bytes' in input ? input.bytes : readFileSync(input.path);
              resolve({ format: 'md', blocks: [{ kind: 'paragraph', text: bytes.toString('utf8') }] });
            },
          });
        }),
      close: async () => {},
    };
    return { held, handed };
  }

  async function until(check: () => boolean | Promise<boolean>, what: string) {
    for (let i = 0; !(await check()); i++) {
      assert.ok(i < 1000, what);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  for (const [inHand, label] of [
    [2, 'with one file read ahead, the next file is claimed and handed to the pool while the first is still extracting'],
    [1, 'without, the next file is claimed only once the worker is free'],
  ] as const) {
    it(label, async () => {
      const blobs = createFsBlobStore({ root: join(dir, `ahead-${inHand}`) });
      const { held, handed } = heldPool();
      const { processor, intake } = setup(blobs, `ahead-${inHand}`, { pool: held, concurrency: inHand });
      const org: CallContext = { ...ctx, org_id: randomUUID() };
      const items: ContentDoc[] = [];
      for (let i = 0; i < 3; i++)
        items.push(await intake.createRaw(org, { title: `Ahead ${i}`, text: `Text ${i}.`, filing: { parent_id: null, tags: [] } }));
      const statuses = async () =>
        Promise.all(items.map(async (item) => (await store.get<JobDoc>(JOBS, item.version_id))?.status ?? 'done'));
      processor.start();
      try {
        await until(() => handed.length === inHand, `${inHand} file(s) handed to the pool`);
        // Give the loop time to claim more if it would: it must not go past its jobs in hand.
        await new Promise((r) => setTimeout(r, 100));
        assert.equal(handed.length, inHand);
        assert.deepEqual(await statuses(), inHand === 2 ? ['running', 'running', 'queued'] : ['running', 'queued', 'queued']);
        for (let i = 0; i < 3; i++) {
          await until(() => handed.length > i, `file ${i} handed over`);
          assert.equal(handed[i]!.filename, 'raw.md');
          handed[i]!.release();
        }
        for (const item of items) assert.equal((await settled(item.id)).processing_status, 'completed');
        assert.deepEqual(await statuses(), ['done', 'done', 'done']);
      } finally {
        await processor.stop();
      }
    });
  }
});

describe('caps on what one item becomes', () => {
  it('fails an item that would be stored as more chunks than the cap, at once and with the reason', async () => {
    const blobs = createFsBlobStore({ root: join(dir, 'b7') });
    const { processor, intake } = setup(blobs, 'capped', { maxChunks: 3 });
    const text = Array.from({ length: 20 }, (_, i) => `Paragraph ${i}. ${'Inverters convert direct current. '.repeat(20)}`).join('\n\n');
    processor.start();
    try {
      const item = await intake.createRaw(ctx, { title: 'Long', text, filing: { parent_id: null, tags: [] } });
      const done = await settled(item.id);
      assert.equal(done.processing_status, 'failed');
      assert.equal(done.attempts, 1, 'not retried: it would only fail again');
      assert.match(done.failure_reason!, /would be stored as \d+ chunks, over the limit of 3 per file/);
      const short = await intake.createRaw(ctx, { title: 'Short', text: 'One short paragraph.', filing: { parent_id: null, tags: [] } });
      assert.equal((await settled(short.id)).processing_status, 'completed');
    } finally {
      await processor.stop();
    }
  });
});

describe('job leases held by a heartbeat', () => {
  it('keeps a job whose work outlasts many lease periods: no other worker takes it while its worker lives', async () => {
    const base = createFsBlobStore({ root: join(dir, 'b5') });
    // Reading the file takes 1.5 s: five times the lease.
    const slow: BlobStore = { ...throughGet(base), get: async (key) => (await new Promise((r) => setTimeout(r, 1500)), base.get(key)) };
    const a = setup(slow, 'worker-a', { leaseMs: 300 });
    const b = setup(slow, 'worker-b', { leaseMs: 300 });
    const item = await a.intake.createRaw(ctx, { title: 'Slow', text: 'Takes a while to read.', filing: { parent_id: null, tags: [] } });
    a.processor.start();
    try {
      for (let i = 0; (await store.get<JobDoc>(JOBS, item.version_id))?.status !== 'running'; i++) {
        assert.ok(i < 500, 'worker a claims the job');
        await new Promise((r) => setTimeout(r, 10));
      }
      b.processor.start();
      const done = await settled(item.id);
      assert.equal(done.processing_status, 'completed');
      assert.equal(done.attempts, 1, 'taken once: the heartbeat kept the lease alive');
    } finally {
      await a.processor.stop();
      await b.processor.stop();
    }
  });

  it('on start, takes the running jobs of a previous process at once instead of waiting for their lease', async () => {
    const blobs = createFsBlobStore({ root: join(dir, 'b6') });
    const first = setup(blobs, 'host:1:before-crash');
    const item = await first.intake.createRaw(ctx, {
      title: 'Crashed',
      text: 'Held by a dead process.',
      filing: { parent_id: null, tags: [] },
    });
    const job = (await store.get<JobDoc>(JOBS, item.version_id))!;
    // A lease that would run for ten more minutes.
    await store.transaction((tx) =>
      tx.put(JOBS, { ...job, status: 'running', attempts: 1, lease_owner: 'host:1:before-crash', lease_expires_at: Date.now() + 600_000 }),
    );
    const restarted = setup(blobs, 'host:1:after-restart', { isOwnerGone: (owner) => owner === 'host:1:before-crash' });
    const started = Date.now();
    restarted.processor.start();
    try {
      const done = await settled(item.id);
      assert.equal(done.processing_status, 'completed');
      assert.equal(done.attempts, 2);
      assert.ok(Date.now() - started < 10_000);
    } finally {
      await restarted.processor.stop();
    }
  });
});

describe('deleting content', () => {
  it('removes its original files and drops its pending job', async () => {
    const blobs = createFsBlobStore({ root: join(dir, 'b4') });
    const { processor, intake } = setup(blobs);
    const item = await intake.createRaw(ctx, { title: 'Temporary', text: 'Soon gone.', filing: { parent_id: null, tags: [] } });
    const key = `${ctx.org_id}/${item.version_id}`;
    assert.equal(await blobs.exists(key), true);
    await intake.remove(ctx, item.id);
    assert.equal(await blobs.exists(key), false);
    processor.start();
    try {
      for (let i = 0; (await store.count(JOBS, { content_id: item.id })) > 0; i++) {
        assert.ok(i < 500, 'the job of deleted content is dropped');
        await new Promise((r) => setTimeout(r, 10));
      }
      const doc = await store.get<ContentDoc>(CONTENT, item.id);
      assert.equal(doc?.deleted, true);
      assert.equal(doc?.processing_status, 'queued', 'no processing was recorded for deleted content');
    } finally {
      await processor.stop();
    }
  });
});

describe('the extraction pool', () => {
  /** Nice values of this process's threads, by thread id (Linux: /proc). */
  function threadNice(): Map<number, number> {
    const out = new Map<number, number>();
    for (const tid of readdirSync('/proc/self/task')) {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      out.set(Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
    }
    return out;
  }

  it.skipIf(process.platform !== 'linux')(
    'runs its worker threads at the nice value asked for, leaving the main thread at its own (Linux keeps one per thread)',
    async () => {
      const niceBefore = threadNice();
      const yielding = extractionPool({ size: 2, timeoutMs: 20_000, memoryMb: 256, nice: 7 });
      try {
        const csv = (n: number) => ({ bytes: Buffer.from(`a,b\n${n},2\n`), filename: `n${n}.csv` });
        await Promise.all([yielding.extract(csv(1)), yielding.extract(csv(2))]);
        const niceNow = threadNice();
        const lowered = [...niceNow].filter(([tid, nice]) => nice === 7 && !niceBefore.has(tid));
        assert.equal(lowered.length, 2, 'both worker threads run at nice 7');
        assert.equal(niceNow.get(process.pid), niceBefore.get(process.pid), 'the main thread keeps its priority');
        assert.equal([...niceNow].filter(([, nice]) => nice === 7).length, 2, 'no other thread was changed');
      } finally {
        await yielding.close();
      }
    },
  );

  it("extracts every kind of file within a 64 MB heap per worker (the libraries' source maps are not loaded)", async () => {
    const small = extractionPool({ size: 1, timeoutMs: 60_000, memoryMb: 64 });
    try {
      for (const name of ['sample.pdf', 'sample.docx', 'sample.xlsx', 'sample.pptx', 'sample.doc']) {
        const bytes = readFileSync(fileURLToPath(new URL(`../../../test/fixtures/formats/${name}`, import.meta.url)));
        const result = await small.extract({ bytes, filename: name });
        assert.ok(result.blocks.length > 0, name);
      }
    } finally {
      await small.close();
    }
  });

  it('stops an extraction that runs past its time limit (permanent: the same bytes would time out again) and keeps serving with a fresh worker', async () => {
    const slow = extractionPool({ size: 1, timeoutMs: 1, memoryMb: 256 });
    try {
      const big = Buffer.from(Array.from({ length: 20_000 }, (_, i) => `row ${i},value ${i}`).join('\n'));
      for (let i = 0; i < 2; i++) {
        await assert.rejects(
          slow.extract({ bytes: big, filename: 'big.csv' }),
          (err: Error & { permanent?: boolean }) => /took longer than/.test(err.message) && err.permanent === true,
        );
      }
    } finally {
      await slow.close();
    }
    const result = await pool.extract({ bytes: Buffer.from('a,b\n1,2\n'), filename: 'small.csv' });
    assert.equal(result.format, 'csv');
  });
});

describe('scheduling rules', () => {
  it('a queued job is due at its time; a running one when its lease has expired', () => {
    const base = { status: 'queued', available_at: 100 } as JobDoc;
    assert.equal(isDue(base, 99), false);
    assert.equal(isDue(base, 100), true);
    const running = { status: 'running', lease_expires_at: 500 } as JobDoc;
    assert.equal(isDue(running, 499), false);
    assert.equal(isDue(running, 500), true);
  });
  it('backs off exponentially', () => {
    assert.deepEqual(
      [1, 2, 3, 4].map((n) => retryDelay(n, 1000)),
      [1000, 2000, 4000, 8000],
    );
  });
});
