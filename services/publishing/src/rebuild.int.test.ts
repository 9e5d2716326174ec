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
import { publishingProjections } from './projections/index.js';
import { DRAFTS, DRAFT_REVISIONS, ORGS } from './projections/collections.js';
import { createSecretBox } from './app/secrets.js';
import { createDestinationsService } from './app/destinations.js';
import { createSitesService } from './app/sites.js';
import { createPiecesService } from './app/pieces.js';
import { createDomainsService } from './app/domains.js';
import { createSubscriptionsService } from './app/subscriptions.js';
import { createHostedAdapter } from './destinations/hosted.js';
import { createWebhookAdapter } from './destinations/webhook.js';

const draft = (org: string): DraftRevision => {
  const version_id = randomUUID();
  return {
    draft_id: randomUUID(),
    org_id: org,
    revision: 1,
    content_type_id: randomUUID(),
    content_kind: 'article',
    title: 'A piece',
    description: 'About it',
    format: 'markdown',
    body: 'x',
    sections: [
      {
        section_id: 's',
        title: 'T',
        sentences: [
          {
            index: 0,
            text: 'A fact.',
            verdict: 'supported',
            citations: [{ content_id: randomUUID(), version_id, chunk_id: `${version_id}:0`, quote: 'q' }],
          },
        ],
      },
    ],
    target_prompt_ids: [],
    source_folder_ids: [],
    source_content_ids: [],
    verification: 'verified',
    totals: { sentences: 1, factual: 1, supported: 1, unsupported: 0 },
    stale_sources: [],
    auto_publish: false,
    publish_destination_ids: [],
    at: '2026-04-01T00:00:00.000Z',
  };
};

describe('publishing read models', () => {
  it('rebuild from the event store to exactly what they were', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kb-publishing-rebuild-'));
    const store = createSqliteStore({ path: join(dir, 'p.db') });
    try {
      const clock = fixedClock(new Date('2026-04-01T00:00:00Z'), 1000);
      const commands = createCommandBus({ store, catalog: eventCatalog, projections: publishingProjections, ids: randomIds, clock });
      const deps = {
        store,
        commands,
        ids: randomIds,
        clock,
        secrets: createSecretBox('a-test-key-of-some-length'),
        onDeliveriesQueued: () => undefined,
      };
      const org = randomUUID();
      const ctx: CallContext = {
        org_id: org,
        principal: { type: 'api_key', id: 'k' },
        permissions: [],
        folder_scope: null,
        request_id: 'r',
      };
      const adapters = { hosted: createHostedAdapter(), webhook: createWebhookAdapter({ policy: { allowPrivate: true } }) };
      const destinations = createDestinationsService({ ...deps, adapters });
      const sites = createSitesService({ store, publicBaseUrl: 'http://localhost:8080' });
      const pieces = createPiecesService({ ...deps, adapters, destinations, sites, ackWaitMs: 0 });
      await destinations.seedShared();
      await store.transaction(async (tx) => {
        await tx.put(ORGS, { id: org, slug: 'acme', name: 'Acme' });
      });
      const drafts = [draft(org), draft(org), draft(org)];
      await store.transaction(async (tx) => {
        for (const [i, d] of drafts.entries()) {
          await tx.put(DRAFTS, { id: d.draft_id, org_id: org, revision: 1, draft: d, deleted: false, created_at: d.at, seq: i });
          await tx.put(DRAFT_REVISIONS, { id: `${d.draft_id}:1`, draft: d });
        }
      });
      const hook = await destinations.create(ctx, {
        type: 'webhook',
        name: 'Hook',
        config: { url: 'http://127.0.0.1:9/x' },
        secret: 'whsec_c2VjcmV0LXNlY3JldA==',
      });
      await pieces.submit(ctx, drafts[0]!.draft_id, { reviewer: 'ed' });
      await pieces.approve(ctx, drafts[0]!.draft_id, {});
      await pieces.publish(ctx, drafts[0]!.draft_id, {});
      await pieces.publish(ctx, drafts[0]!.draft_id, { destination_ids: [hook.destination_id] });
      await pieces.submit(ctx, drafts[1]!.draft_id, {});
      await pieces.approve(ctx, drafts[1]!.draft_id, {});
      await pieces.publish(ctx, drafts[1]!.draft_id, {});
      await pieces.unpublish(ctx, drafts[1]!.draft_id, { mode: 'unpublish' });
      await pieces.submit(ctx, drafts[2]!.draft_id, {});
      await pieces.reject(ctx, drafts[2]!.draft_id, { comment: 'no' });
      await destinations.setEnabled(ctx, (await destinations.list(ctx))[0]!.destination_id, false);
      const domains = createDomainsService({ ...deps, resolver: { resolveTxt: async () => [[]] }, random: () => Buffer.alloc(16, 7) });
      const dom = await domains.register(ctx, { hostname: 'docs.acme.test' });
      const verifier = createDomainsService({
        ...deps,
        resolver: { resolveTxt: async () => [[dom.verification.value]] },
        random: () => Buffer.alloc(16),
      });
      await verifier.verify(ctx, dom.domain_id);
      await domains.register(ctx, { hostname: 'old.acme.test' }).then((d) => domains.remove(ctx, d.domain_id));
      const subs = createSubscriptionsService({ ...deps, policy: { allowPrivate: true } });
      const sub = await subs.create(ctx, {
        url: 'http://127.0.0.1:9/y',
        event_kinds: ['content.published'],
        secret: 'a-secret-of-16-chars',
      });
      await subs.create(ctx, { url: 'http://127.0.0.1:9/z', event_kinds: ['content.approved'], secret: 'a-secret-of-16-chars' });
      await subs.remove(ctx, sub.subscription_id);

      const before = await snapshotReadModels(store, publishingProjections);
      assert.ok(
        Object.values(before).every((docs) => docs.length > 0),
        'every read model has something in it',
      );
      const progress = await rebuildReadModels(store, publishingProjections, { pageSize: 3 });
      assert.ok(progress.events > 10);
      assert.deepEqual(await snapshotReadModels(store, publishingProjections), before);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
