import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { fixedClock, randomIds } from '@kb/platform';
import { eventCatalog, type DraftRevision } from '@kb/events';
import { createCommandBus, rebuildReadModels, snapshotReadModels } from '@kb/eventsourcing';
import { createSqliteStore } from '@kb/store/sqlite';
import type { CallContext } from '@kb/rpc';
import { createSettingsService } from './app/settings.js';
import { draftDecider, draftStream, runDecider, runStream } from './domain/aggregates.js';
import { generationProjections } from './projections/index.js';

describe('generation read models', () => {
  it('rebuild from the event store to exactly what they were', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kb-generation-rebuild-'));
    const store = createSqliteStore({ path: join(dir, 'g.db') });
    try {
      const clock = fixedClock(new Date('2026-04-01T00:00:00Z'), 1000);
      const commands = createCommandBus({ store, catalog: eventCatalog, projections: generationProjections, ids: randomIds, clock });
      const org = randomUUID();
      const ctx: CallContext = {
        org_id: org,
        principal: { type: 'api_key', id: 'k' },
        permissions: [],
        folder_scope: null,
        request_id: 'r',
      };
      const settings = createSettingsService({ store, commands, ids: randomIds, clock });
      await settings.putBrandKit(ctx, { guidelines: { voice: 'plain', banned_terms: ['cheap'] } });
      await settings.patchBrandKit(ctx, { guidelines: { tone: 'warm' } });
      const type = await settings.createContentType(ctx, { name: 'Guide', config: { sections: [{ title: 'A' }] } });
      await settings.updateContentType(ctx, type.content_type_id, { name: 'Guide 2' });
      const gone = await settings.createContentType(ctx, { name: 'Gone' });
      await settings.deleteContentType(ctx, gone.content_type_id);
      const line = await settings.createProductLine(ctx, { name: 'Solar', details: { a: 1 } });
      await settings.updateProductLine(ctx, line.product_line_id, { name: 'Solar+', details: {} });

      const md = { metadata: { org_id: org } };
      const runId = randomUUID();
      const draftId = randomUUID();
      const contentId = randomUUID();
      const versionId = randomUUID();
      const at = '2026-04-01T00:00:00.000Z';
      const draft: DraftRevision = {
        draft_id: draftId,
        org_id: org,
        run_id: runId,
        revision: 1,
        content_type_id: type.content_type_id,
        content_kind: 'article',
        title: 'T',
        description: 'One.',
        format: 'markdown',
        body: '## A\n\nOne. [1]',
        sections: [
          {
            section_id: 's1',
            title: 'A',
            sentences: [
              {
                index: 0,
                text: 'One.',
                verdict: 'supported',
                citations: [{ content_id: contentId, version_id: versionId, chunk_id: `${versionId}:0`, quote: 'One.' }],
              },
            ],
          },
        ],
        target_prompt_ids: [],
        source_folder_ids: [],
        source_content_ids: [contentId],
        verification: 'verified',
        totals: { sentences: 1, factual: 1, supported: 1, unsupported: 0 },
        stale_sources: [],
        auto_publish: false,
        publish_destination_ids: [],
        at,
      };
      await commands.transaction(md, async (s) => {
        await s.execute(runDecider, runStream(runId), {
          type: 'request',
          run_id: runId,
          org_id: org,
          content_type_id: type.content_type_id,
          scope: { folder_ids: [], tags: [], category_ids: [] },
          caller_folder_scope: null,
          at,
        });
        await s.execute(runDecider, runStream(runId), { type: 'progress', state: 'drafting', progress: 0.4, at });
        await s.execute(draftDecider, draftStream(draftId), { type: 'create', draft });
        await s.execute(runDecider, runStream(runId), { type: 'complete', draft_id: draftId, at });
      });
      await commands.transaction(md, (s) =>
        s.execute(draftDecider, draftStream(draftId), { type: 'mark_stale', content_id: contentId, reason: 'deleted', at }),
      );
      const deletedId = randomUUID();
      await commands.transaction(md, async (s) => {
        await s.execute(draftDecider, draftStream(deletedId), { type: 'create', draft: { ...draft, draft_id: deletedId } });
        await s.execute(draftDecider, draftStream(deletedId), { type: 'delete', at });
      });

      const before = await snapshotReadModels(store, generationProjections);
      assert.equal(before.drafts!.length, 1);
      assert.equal((before.drafts![0] as DraftRevision).stale_sources.length, 1);
      assert.equal(before.content_types!.length, 1);
      await rebuildReadModels(store, generationProjections, { pageSize: 2 });
      assert.deepEqual(await snapshotReadModels(store, generationProjections), before);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
