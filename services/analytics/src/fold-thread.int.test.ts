import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { fixedClock, randomIds } from '@kb/platform';
import { eventCatalog } from '@kb/events';
import { createCommandBus, rebuildReadModels, snapshotReadModels } from '@kb/eventsourcing';
import { createSqliteStore } from '@kb/store/sqlite';
import type { Store } from '@kb/store';
import type { CallContext } from '@kb/rpc';
import { createAnswersService } from './app/answers.js';
import { createCompetitorsService } from './app/competitors.js';
import { createSettingsService } from './app/settings.js';
import { createTrackedSourcesService } from './app/tracked-sources.js';
import { analyticsProjections } from './projections/index.js';
import { createFoldThread, type FoldThread } from './projections/fold-thread.js';
import type { RowWrite } from './projections/row-overlay.js';
import { ANSWER_BODIES, COUNT_EXTENTS, LATEST_ANSWERS, type LatestAnswerDoc } from './projections/collections.js';
import { putPrompt } from './transport/consumers.js';

const PROMPTS = [randomUUID(), randomUUID(), randomUUID()];
const CITED = [
  'https://acme.com/a',
  'https://docs.acme.com/guide',
  'https://acme.com/careers',
  'https://news.example.org/x',
  'https://globex.com/compare/1',
  'https://blog.example.co.uk/p',
];
const TEXTS = ['Acme is best', 'Globex beats Acme', 'Initech, Umbrella and Acme', 'nothing named'];

/** Answers of the given days for every prompt, model and location, varied deterministically. */
function answersOf(days: string[], seed: number) {
  let n = seed;
  return days.flatMap((day) =>
    PROMPTS.flatMap((prompt_id) =>
      ['gpt', 'sonar'].flatMap((model) =>
        ['us', 'de'].map((location) => {
          n++;
          return {
            answer_id: randomUUID(),
            prompt_id,
            model,
            location,
            run_at: `${day}T${String(n % 24).padStart(2, '0')}:00:00Z`,
            text: TEXTS[n % TEXTS.length]!,
            citations: CITED.filter((_, i) => (n + i) % 3 === 0),
          };
        }),
      ),
    ),
  );
}

async function world(store: Store) {
  const clock = fixedClock(new Date('2026-04-01T00:00:00Z'), 1000);
  const commands = createCommandBus({ store, catalog: eventCatalog, projections: analyticsProjections, ids: randomIds, clock });
  const deps = { store, commands, ids: randomIds, clock };
  const org = randomUUID();
  const ctx: CallContext = { org_id: org, principal: { type: 'api_key', id: 'k' }, permissions: [], folder_scope: null, request_id: 'r' };
  await createSettingsService(deps).setBrand(ctx, { brand_name: 'Acme', websites: ['acme.com'] });
  await createCompetitorsService(deps).create(ctx, { name: 'Globex' });
  await createCompetitorsService(deps).create(ctx, { name: 'Initech' });
  const rules = createTrackedSourcesService(deps);
  await rules.create(ctx, { match_type: 'path_prefix', pattern: 'https://acme.com/careers', tier: 'secondary' });
  await rules.create(ctx, { match_type: 'host', pattern: 'news.example.org', tier: 'tracked' });
  const tag = (prompt_id: string, tags: string[]) =>
    store.transaction((tx) => putPrompt(tx, { data: { prompt_id, org_id: org, name: 'n', text: 'q', tags } } as never));
  await tag(PROMPTS[0]!, ['t1']);
  await tag(PROMPTS[1]!, ['t1', 't2']);
  return { deps, ctx, tag };
}

/** Every piece of a job, in order. */
async function allPieces(job: AsyncIterable<RowWrite[]>): Promise<RowWrite[][]> {
  const out: RowWrite[][] = [];
  for await (const piece of job) out.push(piece);
  return out;
}

/**
 * Imports two batches (days, then a later day with a backfill) through `thread` and checks the
 * rows, latest answers and kept bodies equal a rebuild's.
 */
async function importMatchesRebuild(thread: FoldThread): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'kb-fold-thread-'));
  const store = createSqliteStore({ path: join(dir, 'a.db') });
  try {
    const { deps, ctx } = await world(store);
    const answers = createAnswersService({ ...deps, foldThread: { thread, minAnswers: 1 } });
    await answers.importAnswers(ctx, answersOf(['2026-01-30', '2026-01-31'], 0));
    const res = await answers.importAnswers(ctx, answersOf(['2026-02-02', '2026-01-20'], 50));
    assert.equal(res.accepted, 24);
    const folded = await snapshotReadModels(store, analyticsProjections);
    const latest = (folded[LATEST_ANSWERS] as LatestAnswerDoc[]).map((d) => d.answer_id).sort();
    assert.equal(latest.length, 12);
    assert.deepEqual((await store.find(ANSWER_BODIES)).map((b) => b.id).sort(), latest);
    await rebuildReadModels(store, analyticsProjections);
    assert.deepEqual(await snapshotReadModels(store, analyticsProjections), folded);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A thread that counts the batches handed to it. */
function counting(thread: FoldThread) {
  const counted = {
    calls: 0,
    thread: { ...thread, merge: (...args: Parameters<FoldThread['merge']>) => (counted.calls++, thread.merge(...args)) },
  };
  return counted;
}

describe('the fold thread', () => {
  it('equal what folding the same answers on the request thread gives (a rebuild), across days, backfill, duplicates and retags', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kb-count-thread-'));
    const store = createSqliteStore({ path: join(dir, 'a.db') });
    const thread = createFoldThread();
    try {
      const { deps, ctx, tag } = await world(store);
      const counted = counting(thread);
      const threaded = createAnswersService({ ...deps, foldThread: { thread: counted.thread, minAnswers: 10 } });
      const inline = createAnswersService(deps);

      const first = answersOf(['2026-01-30', '2026-01-31'], 0);
      assert.equal((await threaded.importAnswers(ctx, first)).accepted, first.length);
      // A batch with an answer imported before: the thread's work is taken back and the batch folds here.
      const second = [...answersOf(['2026-02-01'], 100), first[3]!];
      const res = await threaded.importAnswers(ctx, second);
      assert.deepEqual([res.accepted, res.rejected], [second.length - 1, 1]);
      await tag(PROMPTS[2]!, ['t2']);
      await tag(PROMPTS[0]!, []);
      // A later day and a backfilled one in one batch; then a small batch that stays on this thread.
      await threaded.importAnswers(ctx, answersOf(['2026-02-03', '2026-01-15'], 200));
      await threaded.importAnswers(ctx, answersOf(['2026-02-03'], 300).slice(0, 5));
      await inline.importAnswers(ctx, answersOf(['2026-02-04'], 400));
      await threaded.importAnswers(ctx, answersOf(['2026-03-01', '2026-02-04'], 500));
      assert.equal(counted.calls, 4);

      const folded = await snapshotReadModels(store, analyticsProjections);
      assert.ok(folded[COUNT_EXTENTS]!.length === 1 && folded[LATEST_ANSWERS]!.length === 12);
      // Rule 6: only the latest answer of each combination keeps its body (the thread deleted the rest).
      const latest = (folded[LATEST_ANSWERS] as LatestAnswerDoc[]).map((d) => d.answer_id).sort();
      assert.deepEqual((await store.find(ANSWER_BODIES)).map((b) => b.id).sort(), latest);
      assert.ok((folded[LATEST_ANSWERS] as LatestAnswerDoc[]).every((d) => d.run_at.startsWith('2026-03-01') && d.text !== ''));
      await rebuildReadModels(store, analyticsProjections);
      assert.deepEqual(await snapshotReadModels(store, analyticsProjections), folded);
    } finally {
      await thread.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a thread that fails leaves the import to fold here: same rows, bodies and latest answers as a rebuild', async () => {
    const failing: FoldThread = {
      // eslint-disable-next-line require-yield
      merge: async function* () {
        throw new Error('the thread died');
      },
      close: async () => undefined,
    };
    await importMatchesRebuild(failing);
  });

  it('a thread that fails after the transaction wrote part of its work: the import runs again without it, same rows as a rebuild', async () => {
    const thread = createFoldThread();
    try {
      let jobs = 0;
      const interrupted: FoldThread = {
        // The real thread's first piece (a write of every kind it makes, in small pieces), then a failure.
        merge: async function* (...args) {
          jobs++;
          for await (const piece of thread.merge(...args)) {
            yield piece;
            if (piece.length > 0) throw new Error('the thread died part way');
          }
        },
        close: async () => undefined,
      };
      await importMatchesRebuild(interrupted);
      assert.equal(jobs, 2);
    } finally {
      await thread.close();
    }
  });

  it('answers a job it cannot do with an error (and says why), and takes the next one', async () => {
    const warnings: unknown[] = [];
    const thread = createFoldThread({ logger: { warn: (o: unknown) => void warnings.push(o) } });
    const dir = mkdtempSync(join(tmpdir(), 'kb-fold-thread-'));
    const store = createSqliteStore({ path: join(dir, 'a.db') });
    try {
      await assert.rejects(allPieces(thread.merge(join(dir, 'absent.db'), [], {}, [])), /fold thread: .*absent\.db/s);
      assert.equal(warnings.length, 1);
      const pieces = await store.transaction((tx) => allPieces(thread.merge(tx.file!, [], {}, [])));
      assert.deepEqual(pieces, [[]]);
    } finally {
      await thread.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
