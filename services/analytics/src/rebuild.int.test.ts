import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { fixedClock, randomIds } from '@kb/platform';
import { eventCatalog } from '@kb/events';
import { createCommandBus, rebuildReadModels, snapshotReadModels } from '@kb/eventsourcing';
import { createSqliteStore } from '@kb/store/sqlite';
import type { CallContext } from '@kb/rpc';
import { createAnswersService } from './app/answers.js';
import { createCompetitorsService } from './app/competitors.js';
import { createSettingsService } from './app/settings.js';
import { createTrackedSourcesService } from './app/tracked-sources.js';
import { analyticsProjections } from './projections/index.js';

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
