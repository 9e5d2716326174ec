import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { fixedClock, randomIds } from '@kb/platform';
import { eventCatalog } from '@kb/events';
import { createCommandBus, createOutboxRelay, rebuildReadModels, snapshotReadModels } from '@kb/eventsourcing';
import { createSqliteStore } from '@kb/store/sqlite';
import { createSqliteEventBus } from '@kb/bus/sqlite';
import type { ReceivedMessage } from '@kb/bus';
import { topics } from '@kb/events';
import type { CallContext } from '@kb/rpc';
import { createAnswersService } from './app/answers.js';
import { createCompetitorsService } from './app/competitors.js';
import { createSettingsService } from './app/settings.js';
import { createTrackedSourcesService } from './app/tracked-sources.js';
import { analyticsProjections } from './projections/index.js';
import { ANSWER_BODIES, LATEST_ANSWERS, type LatestAnswerDoc } from './projections/collections.js';

describe('analytics read models', () => {
  it('rebuild from the event store to exactly what they were', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kb-analytics-rebuild-'));
    const store = createSqliteStore({ path: join(dir, 'a.db') });
    try {
      const clock = fixedClock(new Date('2026-04-01T00:00:00Z'), 1000);
      const commands = createCommandBus({ store, catalog: eventCatalog, projections: analyticsProjections, ids: randomIds, clock });
      const deps = { store, commands, ids: randomIds, clock };
      const ctx: CallContext = {
        org_id: randomUUID(),
        principal: { type: 'api_key', id: 'k' },
        permissions: [],
        folder_scope: null,
        request_id: 'r',
      };
      const answers = createAnswersService(deps);
      const prompt = randomUUID();
      const answer = (day: number, text: string, citations: string[]) => ({
        prompt_id: prompt,
        model: 'm',
        location: 'us',
        run_at: `2026-03-0${day}T10:00:00Z`,
        text,
        citations,
      });
      await answers.importAnswers(ctx, [answer(1, 'Acme and Globex', ['https://acme.com/a'])]);
      await createSettingsService(deps).setBrand(ctx, { brand_name: 'Acme', websites: ['acme.com'] });
      const sources = createTrackedSourcesService(deps);
      const rule = await sources.create(ctx, { match_type: 'host', pattern: 'news.org', tier: 'tracked' });
      const competitors = createCompetitorsService(deps);
      const globex = await competitors.create(ctx, { name: 'Globex' });
      await answers.importAnswers(ctx, [
        answer(3, 'Globex then Acme; Hooli', ['https://acme.com/b', 'https://news.org/x']),
        answer(2, 'Acme alone', []),
      ]);
      await sources.update(ctx, rule.source_id, { match_type: 'domain', pattern: 'news.org', tier: 'primary' });
      await competitors.update(ctx, globex.competitor_id, { name: 'Globex Corp', aliases: ['Globex'] });
      await answers.importAnswers(ctx, [answer(4, 'Globex Corp wins', ['https://news.org/y'])]);
      await competitors.remove(ctx, globex.competitor_id);
      const before = await snapshotReadModels(store, analyticsProjections);
      assert.ok((before.daily_counts ?? []).length > 0 && (before.latest_answers ?? []).length === 1);
      await rebuildReadModels(store, analyticsProjections, { pageSize: 3 });
      assert.deepEqual(await snapshotReadModels(store, analyticsProjections), before);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('superseded answers (rule 6)', () => {
  it('keep no text, URLs as cited or brand list in the event store or the bus log, and replay still rebuilds', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kb-analytics-bodies-'));
    const store = createSqliteStore({ path: join(dir, 'a.db') });
    const bus = createSqliteEventBus({ path: join(dir, 'bus.db') });
    try {
      const clock = fixedClock(new Date('2026-04-01T00:00:00Z'), 1000);
      const relay = createOutboxRelay({ store, bus, catalog: eventCatalog, name: 'analytics', owner: 'test', clock });
      const commands = createCommandBus({
        store,
        catalog: eventCatalog,
        projections: analyticsProjections,
        ids: randomIds,
        clock,
        onCommitted: () => relay.notify(),
      });
      await relay.start([topics.answers, topics.analytics]);
      const deps = { store, commands, ids: randomIds, clock };
      const ctx: CallContext = {
        org_id: randomUUID(),
        principal: { type: 'api_key', id: 'k' },
        permissions: [],
        folder_scope: null,
        request_id: 'r',
      };
      await createSettingsService(deps).setBrand(ctx, { brand_name: 'Acme', websites: ['acme.com'] });
      const answers = createAnswersService(deps);
      const prompt = randomUUID();
      const answer = (day: number, text: string, citations: string[], brands?: string[]) => ({
        prompt_id: prompt,
        model: 'm',
        location: 'us',
        run_at: `2026-03-0${day}T10:00:00Z`,
        text,
        citations,
        ...(brands && { brands }),
      });
      // The first answer is superseded by the second; the third arrives late (older than the latest).
      await answers.importAnswers(ctx, [
        answer(1, 'Acme first SECRET-ONE', ['https://acme.com/a?utm_source=SPELLING-ONE'], ['Acme', 'BrandOne']),
      ]);
      const [latest] = (await answers.importAnswers(ctx, [answer(3, 'Acme latest KEPT-TEXT', ['https://www.acme.com/b/'])])).results;
      await answers.importAnswers(ctx, [answer(2, 'late SECRET-TWO Hooli', ['https://news.org/x?utm_medium=SPELLING-TWO'])]);
      await relay.flush();

      const events = await store.readAll(0, 1000);
      const answerEvents = events.filter((e) => e.type === 'answer.collected');
      assert.equal(answerEvents.length, 3);
      for (const e of answerEvents) {
        assert.equal(e.schema, 2);
        assert.equal('text' in e.data, false);
        assert.equal('citations' in e.data, false);
      }
      const history = JSON.stringify(events);
      for (const secret of ['SECRET-ONE', 'SECRET-TWO', 'KEPT-TEXT', 'SPELLING-ONE', 'SPELLING-TWO'])
        assert.equal(history.includes(secret), false, `${secret} is in the event store`);

      const received: ReceivedMessage[] = [];
      const sub = await bus.subscribe({
        groupId: 'reader',
        topics: [topics.answers],
        handler: async (m) => void received.push(m),
      });
      for (let i = 0; i < 200 && received.length < 3; i++) await new Promise((r) => setTimeout(r, 20));
      await sub.stop();
      assert.equal(received.length, 3);
      const log = received.map((m) => m.value).join('\n');
      for (const secret of ['SECRET-ONE', 'SECRET-TWO', 'KEPT-TEXT', 'SPELLING-ONE', 'SPELLING-TWO'])
        assert.equal(log.includes(secret), false, `${secret} is in the bus log`);

      // Only the latest answer's body is kept; its text and URLs as cited are shown.
      const bodies = await store.find<{ id: string }>(ANSWER_BODIES);
      assert.deepEqual(
        bodies.map((b) => b.id),
        [latest!.answer_id],
      );
      const [doc] = await store.find<LatestAnswerDoc>(LATEST_ANSWERS);
      assert.equal(doc!.text, 'Acme latest KEPT-TEXT');
      assert.deepEqual(
        doc!.citations.map((c) => [c.url, c.tier]),
        [['https://www.acme.com/b/', 'primary']],
      );

      const before = await snapshotReadModels(store, analyticsProjections);
      await rebuildReadModels(store, analyticsProjections, { pageSize: 2 });
      assert.deepEqual(await snapshotReadModels(store, analyticsProjections), before);
      await relay.stop();
    } finally {
      await bus.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('schema-1 answer events (text inside the event)', () => {
  it('still fold on replay: counts from the text, the latest answer with its text', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kb-analytics-legacy-'));
    const store = createSqliteStore({ path: join(dir, 'a.db') });
    try {
      const org = randomUUID();
      const answerId = randomUUID();
      const data = {
        answer_id: answerId,
        org_id: org,
        prompt_id: randomUUID(),
        model: 'm',
        location: 'us',
        run_at: '2026-03-01T10:00:00Z',
        text: 'Legacy text about Hooli',
        citations: ['https://news.org/a', 'https://news.org/a'],
        brands: ['Hooli'],
        origin: 'import',
      };
      await store.transaction((tx) =>
        tx.append(`answer-${answerId}`, 0, [{ id: randomUUID(), type: 'answer.collected', schema: 1, data, metadata: { org_id: org } }]),
      );
      await rebuildReadModels(store, analyticsProjections);
      const [doc] = await store.find<LatestAnswerDoc>(LATEST_ANSWERS);
      assert.equal(doc!.text, 'Legacy text about Hooli');
      assert.equal(doc!.citations.length, 2);
      assert.equal(doc!.other_brand_mention_count, 1);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
