import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { createLogger } from '@kb/platform';
import { startTestSystem, type TestSystem } from './harness.js';
import { draftFeed, eventually, startReceiver } from './publishing-fixtures.js';

/**
 * The review state machine (draft -> in_review -> approved | rejected; a
 * rejected piece is submitted again), publishing only the approved revision
 * (a later one, here a hand edit, is 409 revision_not_approved until it is
 * submitted and approved), and webhook destinations that are live only once
 * their receiver acknowledges.
 */

const SECRET = 'whsec_c2VjcmV0LWZvci10ZXN0cy0xMjM0NTY3ODkw';
let t: TestSystem;
let feed: ReturnType<typeof draftFeed>;
let org: string;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
/** The system's warnings, as logged. */
const warnings: string[] = [];

beforeAll(async () => {
  receiver = await startReceiver(SECRET);
  t = await startTestSystem(
    {
      DELIVERY_TICK_MS: '50',
      DELIVERY_BACKOFF_MS: '50',
      DELIVERY_MAX_ATTEMPTS: '3',
      ALLOW_PRIVATE_DESTINATIONS: 'true',
    },
    { logger: createLogger({ level: 'warn', destination: { write: (line: string) => void warnings.push(line) } }) },
  );
  feed = draftFeed(t.dataDir);
  const me = await t.api('GET', '/org/me');
  assert.equal(me.status, 200, me.text);
  org = me.body.org_id;
});
afterAll(async () => {
  await feed.close();
  await t.stop();
  await receiver.close();
});

const piece = (id: string) => t.api('GET', `/org/content/pieces/${id}`);
const post = (id: string, action: string, body: Record<string, unknown> = {}) =>
  t.api('POST', `/org/content/pieces/${id}/${action}`, { body });
async function arrived(d: { draft_id: string; revision: number }) {
  return eventually(async () => {
    const res = await piece(d.draft_id);
    return res.status === 200 && res.body.revision === d.revision ? res.body : undefined;
  }, `piece ${d.draft_id} r${d.revision}`);
}

describe('publishing behind review', () => {
  it('publishes only the approved revision: a hand edit is 409 naming it until it is submitted and approved', async () => {
    const r1 = await feed.created(feed.draft(org, { title: 'Reviewed otters' }));
    await arrived(r1);
    // Revision 2 (a builder step), submitted, approved and published.
    const r2 = await feed.revised({ ...r1, revision: 2, change: { kind: 'section_generated', section_id: 's1' } });
    await arrived(r2);
    assert.equal((await post(r1.draft_id, 'submit', { reviewer: 'editor@example.com' })).status, 200);
    const approved = await post(r1.draft_id, 'approve');
    assert.equal(approved.status, 200, approved.text);
    assert.equal(approved.body.approved_revision, 2);
    const first = await post(r1.draft_id, 'publish');
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.results[0].result, 'published');

    // Edited by hand to revision 3 (still a supported sentence, so the publish gate passes).
    const section = r2.sections[0]!;
    const r3 = await feed.revised({
      ...r2,
      revision: 3,
      change: { kind: 'section_edited', section_id: section.section_id },
      sections: [
        {
          ...section,
          sentences: section.sentences.map((s) => (s.index === 0 ? { ...s, text: 'Vitamin D is made in the skin from UVB light.' } : s)),
        },
      ],
    });
    const edited = await arrived(r3);
    assert.equal(edited.publishable, true);

    for (const body of [{}, { dry_run: true }]) {
      const refused = await post(r1.draft_id, 'publish', body);
      assert.equal(refused.status, 409, refused.text);
      assert.equal(refused.body.error.code, 'revision_not_approved');
      assert.equal(refused.body.error.message, 'Revision 3 is not approved (the approved revision is 2); submit it for review');
      assert.deepEqual(refused.body.error.details, { revision: 3, approved_revision: 2 });
    }
    const still = await piece(r1.draft_id);
    assert.equal(still.body.approved_revision, 2);
    assert.equal(still.body.status, 'published');
    assert.deepEqual(
      still.body.publications.map((p: { revision: number }) => p.revision),
      [2],
      'revision 2 stays live',
    );

    // Submitted and approved at revision 3, it is published.
    const resubmitted = await post(r1.draft_id, 'submit');
    assert.equal(resubmitted.status, 200, resubmitted.text);
    assert.equal(resubmitted.body.status, 'in_review');
    const reapproved = await post(r1.draft_id, 'approve', { comment: 'Edit checked' });
    assert.equal(reapproved.status, 200, reapproved.text);
    assert.equal(reapproved.body.approved_revision, 3);
    const second = await post(r1.draft_id, 'publish');
    assert.equal(second.status, 200, second.text);
    assert.equal(second.body.results[0].result, 'published');
    const after = await piece(r1.draft_id);
    assert.equal(after.body.status, 'published');
    assert.deepEqual(
      after.body.publications.map((p: { revision: number }) => p.revision),
      [3],
    );
    assert.deepEqual(
      after.body.history.map((h: { event: string }) => h.event),
      ['submitted', 'approved', 'published', 'submitted', 'approved', 'published'],
    );
  });
});

describe('the review state machine', () => {
  it('approves or rejects only a piece in review (409 not_in_review), and a rejected piece only after it is submitted again', async () => {
    const d = await feed.created(feed.draft(org, { title: 'Unreviewed herons' }));
    await arrived(d);
    for (const action of ['approve', 'reject']) {
      const res = await post(d.draft_id, action, { comment: 'No' });
      assert.equal(res.status, 409, res.text);
      assert.equal(res.body.error.code, 'not_in_review');
    }
    assert.equal((await post(d.draft_id, 'publish')).body.error.code, 'not_approved');
    assert.equal((await post(d.draft_id, 'submit')).status, 200);
    assert.equal((await post(d.draft_id, 'submit')).body.error.code, 'already_in_review');
    assert.equal((await post(d.draft_id, 'reject', { comment: 'Too thin' })).status, 200);
    const direct = await post(d.draft_id, 'approve');
    assert.equal(direct.status, 409, direct.text);
    assert.equal(direct.body.error.code, 'not_in_review');
    assert.equal((await post(d.draft_id, 'submit')).status, 200);
    const approved = await post(d.draft_id, 'approve');
    assert.equal(approved.status, 200, approved.text);
    assert.equal(approved.body.status, 'approved');
    const again = await post(d.draft_id, 'submit');
    assert.equal(again.status, 409, 'an approved revision is not submitted again');
    assert.equal(again.body.error.code, 'already_approved');
    const history = (await piece(d.draft_id)).body.history.map((h: { event: string }) => h.event);
    assert.deepEqual(history, ['submitted', 'rejected', 'submitted', 'approved']);
  });
});

describe('a webhook destination is live only once its receiver acknowledges', () => {
  async function hook(path: string) {
    const res = await t.api('POST', '/org/destinations', {
      body: { type: 'webhook', name: `Hook ${path}`, config: { url: `${receiver.url}${path}` }, secret: SECRET },
    });
    assert.equal(res.status, 201, res.text);
    return res.body.destination_id as string;
  }
  async function approvedPiece(title: string) {
    const d = await feed.created(feed.draft(org, { title }));
    await arrived(d);
    assert.equal((await post(d.draft_id, 'submit')).status, 200);
    assert.equal((await post(d.draft_id, 'approve')).status, 200);
    return d;
  }
  const publication = async (id: string, dest: string) =>
    (await piece(id)).body.publications.find((p: { destination_id: string }) => p.destination_id === dest);

  it('a receiver that accepts at once: published and live in the publish response', async () => {
    const dest = await hook('/accepts');
    const d = await approvedPiece('Acknowledged otters');
    const res = await post(d.draft_id, 'publish', { destination_ids: [dest] });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.results[0].result, 'published');
    assert.equal(res.body.status, 'published');
    assert.equal((await publication(d.draft_id, dest)).status, 'live');
  });

  it('a receiver that always fails: 502 naming the pending delivery, then failed (publication, history, status, lifecycle webhook)', async () => {
    receiver.failFirst.set('/fails', Number.MAX_SAFE_INTEGER);
    const sub = await t.api('POST', '/org/webhooks', {
      body: { url: `${receiver.url}/lifecycle`, event_kinds: ['content.published', 'content.publish_failed'], secret: SECRET },
    });
    assert.equal(sub.status, 201, sub.text);
    const dest = await hook('/fails');
    const hosted = (await t.api('GET', '/org/destinations')).body.find((x: { type: string }) => x.type === 'hosted').destination_id;

    const d = await approvedPiece('Unacknowledged otters');
    const res = await post(d.draft_id, 'publish', { destination_ids: [hosted, dest] });
    assert.equal(res.status, 502, res.text);
    assert.equal(res.body.error.code, 'destination_failed');
    const results = Object.fromEntries(res.body.error.details.results.map((r: { type: string }) => [r.type, r]));
    assert.equal(results.hosted.result, 'published');
    assert.equal(results.webhook.result, 'pending', 'retried: not failed yet');
    assert.equal(results.webhook.attempts, 1);
    assert.equal(results.webhook.error, 'receiver answered 503');
    assert.ok(Date.parse(results.webhook.next_attempt_at));

    const failed = await eventually(async () => {
      const p = await publication(d.draft_id, dest);
      return p?.status === 'failed' ? p : undefined;
    }, 'the delivery runs out of attempts');
    assert.match(failed.error, /delivery failed after 3 attempt\(s\): receiver answered 503/);
    const view = (await piece(d.draft_id)).body;
    assert.equal(view.status, 'published', 'still live on the hosted site');
    const failure = view.history.find((h: { event: string }) => h.event === 'publish_failed');
    assert.equal(failure.destination_id, dest);
    const heard = await eventually(
      async () =>
        receiver.received.find(
          (r) => r.path === '/lifecycle' && r.body.type === 'content.publish_failed' && r.body.data.piece_id === d.draft_id,
        ),
      'content.publish_failed',
    );
    assert.equal(heard.body.data.destination_id, dest);
    assert.equal(
      receiver.received.filter((r) => r.path === '/lifecycle' && r.body.type === 'content.published' && r.body.data.piece_id === d.draft_id)
        .length,
      1,
      'content.published for the hosted page only',
    );

    // Taken down from the hosted site, it is live nowhere.
    const down = await post(d.draft_id, 'unpublish', { destination_ids: [hosted] });
    assert.equal(down.status, 200, down.text);
    assert.equal(down.body.status, 'unpublished');
  });

  it('a piece whose only destination failed reads publish_failed; a redelivery the receiver accepts makes it live', async () => {
    receiver.failFirst.set('/later', Number.MAX_SAFE_INTEGER);
    const dest = await hook('/later');
    const d = await approvedPiece('Late otters');
    const res = await post(d.draft_id, 'publish', { destination_ids: [dest] });
    assert.equal(res.status, 502, res.text);
    assert.equal(res.body.error.details.results[0].result, 'pending');
    assert.equal((await piece(d.draft_id)).body.status, 'publishing');
    const failed = await eventually(async () => {
      const p = (await piece(d.draft_id)).body;
      return p.status === 'publish_failed' ? p : undefined;
    }, 'publish_failed');
    assert.equal(failed.publications[0].status, 'failed');
    const deliveryId = res.body.error.details.results[0].delivery_id;

    receiver.failFirst.set('/later', 0);
    const again = await t.api('POST', `/org/webhook-deliveries/${deliveryId}/redeliver`);
    assert.equal(again.status, 202, again.text);
    const live = await eventually(async () => {
      const p = (await piece(d.draft_id)).body;
      return p.status === 'published' ? p : undefined;
    }, 'published after redelivery');
    assert.equal(live.publications[0].status, 'live');
    assert.deepEqual(
      live.history.map((h: { event: string }) => h.event),
      ['submitted', 'approved', 'publish_queued', 'publish_failed', 'published'],
    );
  });
});

describe('operating with ALLOW_PRIVATE_DESTINATIONS', () => {
  it('says so at start, and a failed delivery is logged without the URL’s query', async () => {
    assert.ok(
      warnings.some((l) => l.includes('ALLOW_PRIVATE_DESTINATIONS is on')),
      'the relaxed address policy is logged at start',
    );
    receiver.failFirst.set('/logged?token=query-secret-123', 1000); // the receiver keys by path and query
    const sub = await t.api('POST', '/org/webhooks', {
      body: { url: `${receiver.url}/logged?token=query-secret-123`, event_kinds: ['content.approved'], secret: SECRET },
    });
    assert.equal(sub.status, 201, sub.text);
    const test = await t.api('POST', `/org/webhooks/${sub.body.subscription_id}/test`, { body: {} });
    const line = await eventually(
      async () => warnings.find((l) => l.includes('webhook delivery failed') && l.includes(test.body.delivery_id)),
      'the failed delivery logged',
    );
    assert.match(line, new RegExp(`"url":"${receiver.url}/logged"`));
    assert.ok(!warnings.some((l) => l.includes('query-secret-123')), 'the query is never logged');
    assert.equal((await t.api('DELETE', `/org/webhooks/${sub.body.subscription_id}`)).status, 204);
  });
});
