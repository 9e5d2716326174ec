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
import type { CallContext } from '@kb/rpc';
import { createAnswersService } from './app/answers.js';
import { createReportsService } from './app/reports.js';
import { createSettingsService } from './app/settings.js';
import { analyticsProjections } from './projections/index.js';
import { COUNT_EXTENTS, type CountExtentDoc } from './projections/collections.js';
import { deletePrompt, putPrompt } from './transport/consumers.js';

describe('tag rows', () => {
  it('follow prompts created, retagged and deleted after their answers: tag reports equal the sum over the tagged prompts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kb-analytics-tags-'));
    const store = createSqliteStore({ path: join(dir, 'a.db') });
    try {
      const clock = fixedClock(new Date('2026-04-01T00:00:00Z'), 1000);
      const commands = createCommandBus({ store, catalog: eventCatalog, projections: analyticsProjections, ids: randomIds, clock });
      const deps = { store, commands, ids: randomIds, clock };
      const org = randomUUID();
      const ctx: CallContext = {
        org_id: org,
        principal: { type: 'api_key', id: 'k' },
        permissions: [],
        folder_scope: null,
        request_id: 'r',
      };
      await createSettingsService(deps).setBrand(ctx, { brand_name: 'Acme', websites: ['acme.com'] });
      const answers = createAnswersService(deps);
      const reports = createReportsService({ store, clock });
      const [p1, p2, p3] = [randomUUID(), randomUUID(), randomUUID()];
      const prompt = (id: string, tags: string[]) => ({ data: { prompt_id: id, org_id: org, name: 'n', text: 'q', tags } }) as never;
      const importDays = (days: string[]) =>
        answers.importAnswers(
          ctx,
          days.flatMap((day, i) =>
            [p1, p2, p3].flatMap((prompt_id, j) =>
              ['m1', 'm2'].map((model) => ({
                prompt_id,
                model,
                location: j === 2 ? 'de' : 'us',
                run_at: `${day}T1${i}:00:00Z`,
                text: j === 1 ? 'Acme first' : 'Globex and Acme',
                citations: [`https://acme.com/${day}`, `https://news.org/${j}`, ...(i % 2 ? ['https://other.net/x'] : [])],
              })),
            ),
          ),
        );
      const windows = [
        { from: '2026-01-10', to: '2026-03-20', tag_id: 'a' },
        { from: '2026-02-01', to: '2026-02-28', tag_id: 'b' },
        { from: '2026-01-01', to: '2026-03-31', tag_id: 'b', model: 'm2' },
        { from: '2026-01-15', to: '2026-03-05', tag_id: 'a', location: 'de' },
      ];
      /** Every tag report from the tag rows and, with the tag rows marked incomplete, summed over the tagged prompts' rows. */
      const check = async () => {
        const extent = (await store.get<CountExtentDoc>(COUNT_EXTENTS, org))!;
        assert.equal(extent.tag_rows, true);
        const all = async () =>
          Promise.all(
            windows.flatMap((q) => [
              reports.overview(ctx, q),
              reports.sources(ctx, 'page', q),
              reports.sourceRules(ctx, q),
              reports.registrableDomains(ctx, q),
              reports.shareOfVoice(ctx, q),
              reports.timeseries(ctx, q),
            ]),
          );
        const fromTagRows = await all();
        await store.transaction((tx) => tx.put(COUNT_EXTENTS, { ...extent, tag_rows: false }));
        const perPrompt = await all();
        await store.transaction((tx) => tx.put(COUNT_EXTENTS, extent));
        assert.deepEqual(fromTagRows, perPrompt);
        return fromTagRows[0]!.totals.answer_count;
      };

      await importDays(['2026-01-12', '2026-01-31', '2026-02-01']);
      await store.transaction(async (tx) => {
        await putPrompt(tx, prompt(p1, ['a']));
        await putPrompt(tx, prompt(p2, ['a', 'b']));
      });
      assert.ok((await check()) > 0);
      await importDays(['2026-02-14', '2026-03-03']);
      await check();
      await store.transaction(async (tx) => {
        await putPrompt(tx, prompt(p1, ['b']));
        await putPrompt(tx, prompt(p3, ['a']));
      });
      await check();
      await store.transaction((tx) => deletePrompt(tx, prompt(p2, [])));
      await importDays(['2026-03-19']);
      await check();

      const before = await snapshotReadModels(store, analyticsProjections);
      await rebuildReadModels(store, analyticsProjections, { pageSize: 2 });
      assert.deepEqual(await snapshotReadModels(store, analyticsProjections), before);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
