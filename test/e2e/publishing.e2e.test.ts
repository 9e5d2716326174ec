import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { parseDocument, DomUtils } from 'htmlparser2';
import { startTestSystem, type TestSystem } from './harness.js';
import { newMember, newOrgAdmin } from './identity-fixtures.js';
import {
  draftFeed,
  eventually,
  getWithHost,
  startDnsServer,
  startFakeGhost,
  startFakeWordPress,
  startReceiver,
} from './publishing-fixtures.js';

const SECRET = `whsec_${Buffer.from('a publishing test secret of 32 b').toString('base64')}`;
const ADMIN = { email: 'admin@example.com', password: 'development-password' };

let t: TestSystem;
let feed: ReturnType<typeof draftFeed>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let wordpress: Awaited<ReturnType<typeof startFakeWordPress>>;
let dns: Awaited<ReturnType<typeof startDnsServer>>;
let org: string;
let slug: string;
let session: string;

beforeAll(async () => {
  dns = await startDnsServer();
  receiver = await startReceiver(SECRET);
  wordpress = await startFakeWordPress('editor', 'abcd efgh ijkl mnop');
  // The receivers, WordPress and Ghost listen on loopback.
  t = await startTestSystem({
    DELIVERY_TICK_MS: '50',
    DELIVERY_BACKOFF_MS: '50',
    DNS_SERVERS: dns.address,
    ALLOW_PRIVATE_DESTINATIONS: 'true',
  });
  feed = draftFeed(t.dataDir);
  const me = await t.api('GET', '/org/me');
  assert.equal(me.status, 200, me.text);
  org = me.body.org_id;
  slug = me.body.slug;
  const login = await t.api('POST', '/auth/login', { key: null, body: ADMIN });
  session = login.body.token;
});
afterAll(async () => {
  await feed.close();
  await t.stop();
  await receiver.close();
  await wordpress.close();
  await dns.close();
});

const site = (path: string, headers: Record<string, string> = {}) => fetch(`${t.url}/sites/${slug}/${path}`, { headers });
const piece = (id: string) => t.api('GET', `/org/content/pieces/${id}`);
async function arrived(d: { draft_id: string; revision: number }) {
  return eventually(async () => {
    const res = await piece(d.draft_id);
    return res.status === 200 && res.body.revision === d.revision ? res.body : undefined;
  }, `piece ${d.draft_id} r${d.revision}`);
}
async function approved(o: Parameters<typeof feed.draft>[1] = {}) {
  const d = await feed.created(feed.draft(org, o));
  await arrived(d);
  await review(d.draft_id);
  return d;
}
/** Submits a piece and approves it (with `key`, or the test's own). */
async function review(id: string, key?: string) {
  const as = key === undefined ? {} : { key };
  const submitted = await t.api('POST', `/org/content/pieces/${id}/submit`, { ...as, body: {} });
  assert.equal(submitted.status, 200, submitted.text);
  const res = await t.api('POST', `/org/content/pieces/${id}/approve`, { ...as, body: {} });
  assert.equal(res.status, 200, res.text);
  return res;
}

describe('content review and the publish gate', () => {
  it('keeps each draft from generation as a piece, with the gate computed', async () => {
    const good = await feed.created(feed.draft(org));
    const bad = await feed.created(feed.draft(org, { verified: false }));
    assert.equal((await arrived(good)).publishable, true);
    const b = await arrived(bad);
    assert.equal(b.publishable, false);
    assert.equal(b.status, 'draft');
    assert.deepEqual(
      b.unsupported_sentences.map((s: { index: number }) => s.index),
      [1],
    );
    const list = await t.api('GET', '/org/content/pieces?limit=100');
    assert.equal(list.status, 200);
    assert.ok(Number(list.headers.get('x-total-count')) >= 2);
  });

  it('answers 422 naming the sentences when an unverified piece is approved or published, and changes nothing', async () => {
    const bad = await feed.created(feed.draft(org, { verified: false }));
    await arrived(bad);
    assert.equal((await t.api('POST', `/org/content/pieces/${bad.draft_id}/submit`, { body: {} })).status, 200);
    const approve = await t.api('POST', `/org/content/pieces/${bad.draft_id}/approve`, { body: {} });
    assert.equal(approve.status, 422, approve.text);
    assert.equal(approve.body.error.code, 'unverified_content');
    assert.equal(approve.body.error.details.sentences[0].text, 'Everyone needs ten times the usual dose.');
    const publish = await t.api('POST', `/org/content/pieces/${bad.draft_id}/publish`, { body: {} });
    assert.equal(publish.status, 422, publish.text);
    const after = await piece(bad.draft_id);
    assert.equal(after.body.status, 'in_review');
    assert.deepEqual(
      after.body.history.map((h: { event: string }) => h.event),
      ['submitted'],
    );
  });

  it('a stale source blocks approval too', async () => {
    const d = await feed.created(feed.draft(org));
    await arrived(d);
    await feed.publish('draft.sources_stale', org, {
      draft_id: d.draft_id,
      org_id: org,
      revision: 1,
      stale_sources: [
        { content_id: d.source_content_ids[0], version_id: randomUUID(), reason: 'new_version', at: new Date().toISOString() },
      ],
      at: new Date().toISOString(),
    });
    await eventually(async () => ((await piece(d.draft_id)).body.stale_sources.length === 1 ? true : undefined), 'stale');
    assert.equal((await t.api('POST', `/org/content/pieces/${d.draft_id}/submit`, { body: {} })).status, 200);
    const res = await t.api('POST', `/org/content/pieces/${d.draft_id}/approve`, { body: {} });
    assert.equal(res.status, 422, res.text);
  });

  it('submit, review queue, reject with a comment, approve: every change recorded with who and when', async () => {
    const d = await feed.created(feed.draft(org));
    await arrived(d);
    const submitted = await t.api('POST', `/org/content/pieces/${d.draft_id}/submit`, { body: { reviewer: 'editor@example.com' } });
    assert.equal(submitted.status, 200, submitted.text);
    assert.equal(submitted.body.status, 'in_review');
    assert.equal((await t.api('POST', `/org/content/pieces/${d.draft_id}/submit`, { body: {} })).status, 409);
    const queue = await t.api('GET', '/org/content/review-queue');
    assert.equal(queue.status, 200);
    const item = queue.body.find((q: { piece_id: string }) => q.piece_id === d.draft_id);
    assert.equal(item.waiting_for, 'editor@example.com');
    assert.equal((await t.api('POST', `/org/content/pieces/${d.draft_id}/reject`, { body: {} })).status, 400);
    const rejected = await t.api('POST', `/org/content/pieces/${d.draft_id}/reject`, { body: { comment: 'Too short' } });
    assert.equal(rejected.status, 200, rejected.text);
    assert.equal(rejected.body.review_comment, 'Too short');
    const early = await t.api('POST', `/org/content/pieces/${d.draft_id}/publish`, { body: {} });
    assert.equal(early.status, 409, 'a rejected piece is not published');
    const direct = await t.api('POST', `/org/content/pieces/${d.draft_id}/approve`, { body: { comment: 'Fine now' } });
    assert.equal(direct.status, 409, 'a rejected piece goes back to review before it is approved');
    assert.equal(direct.body.error.code, 'not_in_review');
    assert.equal((await t.api('POST', `/org/content/pieces/${d.draft_id}/submit`, { body: { comment: 'Longer now' } })).status, 200);
    const ok = await t.api('POST', `/org/content/pieces/${d.draft_id}/approve`, { body: { comment: 'Fine now' } });
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(
      ok.body.history.map((h: { event: string }) => h.event),
      ['submitted', 'rejected', 'submitted', 'approved'],
    );
    for (const h of ok.body.history) {
      assert.equal(h.actor.startsWith('api_key:'), true);
      assert.ok(Date.parse(h.at));
    }
  });

  it('404 for a piece that does not exist or belongs to another organization', async () => {
    assert.equal((await piece(randomUUID())).status, 404);
    const other = await feed.created(feed.draft(randomUUID()));
    await new Promise((r) => setTimeout(r, 300));
    const res = await piece(other.draft_id);
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 'not_found');
    assert.equal((await t.api('POST', `/org/content/pieces/${other.draft_id}/approve`, { body: {} })).status, 404);
  });
});

describe('hosted destination', () => {
  let d: Awaited<ReturnType<typeof approved>>;
  let pageSlug: string;

  beforeAll(async () => {
    d = await approved({ content_kind: 'qa', title: 'Vitamin D questions' });
  });

  it('publishes to the default shared set (hosted) and serves the page with citations, JSON-LD, Open Graph', async () => {
    const res = await t.api('POST', `/org/content/pieces/${d.draft_id}/publish`, { body: {} });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.status, 'published');
    assert.deepEqual(
      res.body.results.map((r: { type: string; result: string }) => [r.type, r.result]),
      [['hosted', 'published']],
    );
    const pub = res.body.publications[0];
    pageSlug = new URL(pub.url).pathname.split('/').pop()!;
    assert.equal(pageSlug, 'vitamin-d-questions');

    const page = await site(pageSlug);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    assert.ok(page.headers.get('etag'));
    assert.match(page.headers.get('cache-control') ?? '', /max-age/);
    // The page shares the console's origin: it is sandboxed and may load, frame or submit nothing.
    const csp = page.headers.get('content-security-policy') ?? '';
    for (const directive of ["default-src 'none'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'", 'sandbox'])
      assert.ok(
        csp.split(';').some((d) => d.trim() === directive),
        `${directive} in ${csp}`,
      );
    assert.doesNotMatch(csp, /script-src/, 'no script may run');
    const html = await page.text();
    const doc = parseDocument(html);
    const title = DomUtils.findOne((e) => e.name === 'title', doc.children);
    assert.equal(DomUtils.textContent(title!), 'Vitamin D questions');
    const meta = (attr: string, value: string) =>
      DomUtils.findOne((e) => e.name === 'meta' && e.attribs[attr] === value, doc.children)?.attribs.content;
    assert.equal(meta('name', 'description'), d.description);
    assert.equal(meta('property', 'og:title'), 'Vitamin D questions');
    assert.ok(meta('property', 'og:url')?.endsWith(`/sites/${slug}/${pageSlug}`));
    const canonical = DomUtils.findOne((e) => e.name === 'link' && e.attribs.rel === 'canonical', doc.children);
    assert.ok(canonical?.attribs.href?.endsWith(`/${pageSlug}`));
    // Inline citations link to the references, which quote the sources (escaped).
    const cites = DomUtils.findAll((e) => e.name === 'a' && e.attribs.class === 'cite', doc.children);
    assert.deepEqual(
      cites.map((a) => a.attribs.href),
      ['#ref-1', '#ref-2'],
    );
    const ref1 = DomUtils.findOne((e) => e.attribs.id === 'ref-1', doc.children);
    assert.match(DomUtils.textContent(ref1!), /Quoted passage 0 <b>& more<\/b>/);
    const script = DomUtils.findOne((e) => e.name === 'script' && e.attribs.type === 'application/ld+json', doc.children);
    const ld = JSON.parse(DomUtils.textContent(script!));
    assert.equal(ld['@context'], 'https://schema.org');
    const types = ld['@graph'].map((n: { '@type': string }) => n['@type']);
    assert.deepEqual(types, ['Article', 'FAQPage']);
    assert.equal(ld['@graph'][0].headline, 'Vitamin D questions');
    assert.equal(ld['@graph'][0].citation.length, 2);
    assert.equal(ld['@graph'][1].mainEntity[0]['@type'], 'Question');
    assert.equal(ld['@graph'][1].mainEntity[0].acceptedAnswer['@type'], 'Answer');
  });

  it('answers 304 to a matching If-None-Match', async () => {
    const first = await site(pageSlug);
    await first.arrayBuffer();
    const again = await site(pageSlug, { 'if-none-match': first.headers.get('etag')! });
    assert.equal(again.status, 304);
  });

  it('lists the page in sitemap.xml, the Atom feed, llms.txt and the index; robots.txt names the sitemap', async () => {
    const sitemap = await (await site('sitemap.xml')).text();
    assert.equal(XMLValidator.validate(sitemap), true);
    const sm = new XMLParser({ ignoreAttributes: false }).parse(sitemap);
    assert.equal(sm.urlset['@_xmlns'], 'http://www.sitemaps.org/schemas/sitemap/0.9');
    const locs = [sm.urlset.url].flat().map((u: { loc: string }) => u.loc);
    assert.ok(locs.some((l: string) => l.endsWith(`/sites/${slug}/${pageSlug}`)));
    const atom = await (await site('feed.xml')).text();
    assert.equal(XMLValidator.validate(atom), true);
    const feedDoc = new XMLParser({ ignoreAttributes: false }).parse(atom);
    assert.equal(feedDoc.feed['@_xmlns'], 'http://www.w3.org/2005/Atom');
    const entries = [feedDoc.feed.entry].flat();
    assert.ok(entries.some((e: { title: string }) => e.title === 'Vitamin D questions'));
    for (const e of entries) for (const k of ['id', 'title', 'updated', 'link']) assert.ok(k in e, k);
    assert.match(await (await site('llms.txt')).text(), new RegExp(`\\[Vitamin D questions\\]\\(.*/${pageSlug}\\)`));
    assert.match(await (await site('robots.txt')).text(), /Sitemap: .*\/sitemap\.xml/);
    assert.match(await (await site('')).text(), /Vitamin D questions/);
    assert.equal((await site('no-such-page')).status, 404);
    assert.equal((await fetch(`${t.url}/sites/no-such-org/${pageSlug}`)).status, 404);
  });

  it('publishing the same revision again is idempotent; a new revision updates the page', async () => {
    const again = await t.api('POST', `/org/content/pieces/${d.draft_id}/publish`, { body: {} });
    assert.equal(again.status, 200, again.text);
    assert.equal(again.body.results[0].result, 'unchanged');
    assert.equal(again.body.history.filter((h: { event: string }) => h.event === 'published').length, 1);
    await feed.revised({ ...d, revision: 2, title: 'Vitamin D questions, revised' });
    await arrived({ draft_id: d.draft_id, revision: 2 });
    await review(d.draft_id); // a new revision is published once approved
    const res = await t.api('POST', `/org/content/pieces/${d.draft_id}/publish`, { body: {} });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.results[0].result, 'published');
    const html = await (await site(pageSlug)).text();
    assert.match(html, /<title>Vitamin D questions, revised<\/title>/);
  });

  it('unpublish answers 410 for the page and drops it from the sitemap and feed', async () => {
    const res = await t.api('POST', `/org/content/pieces/${d.draft_id}/unpublish`, { body: {} });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.status, 'unpublished');
    assert.equal((await site(pageSlug)).status, 410);
    assert.doesNotMatch(await (await site('sitemap.xml')).text(), new RegExp(pageSlug));
    assert.doesNotMatch(await (await site('feed.xml')).text(), new RegExp(pageSlug));
    assert.equal((await t.api('POST', `/org/content/pieces/${d.draft_id}/unpublish`, { body: {} })).status, 409);
  });

  it('with the default set switched off and no destination named, publishing is 422 (no publisher)', async () => {
    const list = await t.api('GET', '/org/destinations');
    assert.equal(list.status, 200);
    const hosted = list.body.find((x: { type: string }) => x.type === 'hosted');
    assert.equal(hosted.scope, 'shared');
    assert.equal(hosted.enabled, true);
    const off = await t.api('PATCH', `/org/destinations/${hosted.destination_id}`, { body: { enabled: false } });
    assert.equal(off.status, 200, off.text);
    assert.equal(off.body.enabled, false);
    const p = await approved();
    const res = await t.api('POST', `/org/content/pieces/${p.draft_id}/publish`, { body: {} });
    assert.equal(res.status, 422, res.text);
    assert.equal(res.body.error.code, 'no_publisher');
    const named = await t.api('POST', `/org/content/pieces/${p.draft_id}/publish`, { body: { destination_ids: [hosted.destination_id] } });
    assert.equal(named.status, 422, 'a switched-off destination is not a publisher');
    assert.equal((await t.api('PATCH', `/org/destinations/${hosted.destination_id}`, { body: { enabled: true } })).status, 200);
    assert.equal((await t.api('POST', `/org/content/pieces/${p.draft_id}/publish`, { body: {} })).status, 200);
  });
});

describe('webhook destination and lifecycle webhooks', () => {
  let destination: { destination_id: string };

  it('creates a webhook destination whose secret is never returned; unknown config keys are 400', async () => {
    const bad = await t.api('POST', '/org/destinations', {
      body: { type: 'webhook', name: 'Hook', config: { url: `${receiver.url}/dest`, extra: 1 }, secret: SECRET },
    });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(
      (await t.api('POST', '/org/destinations', { body: { type: 'webhook', name: 'Hook', config: { url: `${receiver.url}/dest` } } }))
        .status,
      400,
    );
    const res = await t.api('POST', '/org/destinations', {
      body: { type: 'webhook', name: 'Hook', config: { url: `${receiver.url}/dest` }, secret: SECRET },
    });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.has_secret, true);
    assert.doesNotMatch(res.text, /whsec_/);
    destination = res.body;
    const got = await t.api('GET', `/org/destinations/${destination.destination_id}`);
    assert.doesNotMatch(got.text, /whsec_/);
    assert.equal((await t.api('GET', `/org/destinations/${randomUUID()}`)).status, 404);
  });

  it('delivers the piece signed to a receiver that fails twice before accepting, logging every attempt', async () => {
    receiver.failFirst.set('/dest', 2);
    const sub = await t.api('POST', '/org/webhooks', {
      body: { url: `${receiver.url}/lifecycle`, event_kinds: ['content.published', 'content.approved'], secret: SECRET },
    });
    assert.equal(sub.status, 201, sub.text);
    assert.doesNotMatch(sub.text, /whsec_/);
    const d = await approved();
    const res = await t.api('POST', `/org/content/pieces/${d.draft_id}/publish`, {
      body: { destination_ids: [destination.destination_id] },
    });
    // The first attempt failed: 502 saying the delivery is pending (retried), not that it is live.
    assert.equal(res.status, 502, res.text);
    assert.equal(res.body.error.details.results[0].result, 'pending');
    assert.equal(res.body.error.details.results[0].error, 'receiver answered 503');
    const got = await eventually(
      async () => receiver.received.find((r) => r.path === '/dest' && r.body.data.piece_id === d.draft_id),
      'destination webhook',
    );
    assert.equal(got.body.type, 'content.published');
    assert.equal(got.body.data.title, d.title);
    assert.equal(receiver.badSignatures, 0);
    const log = await t.api('GET', `/org/destinations/${destination.destination_id}/deliveries`);
    assert.equal(log.status, 200);
    const delivery = log.body.find((x: { delivery_id: string }) => x.delivery_id === got.id);
    assert.equal(delivery.status, 'delivered');
    assert.equal(delivery.attempts, 3);
    assert.deepEqual(
      delivery.log.map((a: { status_code: number }) => a.status_code),
      [503, 503, 204],
    );
    const live = await eventually(async () => {
      const p = await piece(d.draft_id);
      return p.body.status === 'published' ? p.body : undefined;
    }, 'live once the receiver acknowledged');
    assert.equal(live.publications[0].status, 'live');
    // The lifecycle subscription hears content.approved and content.published for the piece.
    const kinds = await eventually(async () => {
      const k = receiver.received.filter((r) => r.path === '/lifecycle' && r.body.data.piece_id === d.draft_id).map((r) => r.body.type);
      return k.length >= 2 ? k.sort() : undefined;
    }, 'lifecycle webhooks');
    assert.deepEqual(kinds, ['content.approved', 'content.published']);
  });

  it('announces prompt.won and prompt.lost when a prompt\u2019s outcome over its latest answers turns, once each', async () => {
    const sub = await t.api('POST', '/org/webhooks', {
      body: { url: `${receiver.url}/prompts`, event_kinds: ['prompt.won', 'prompt.lost'], secret: SECRET },
    });
    assert.equal(sub.status, 201, sub.text);
    assert.equal((await t.api('PUT', '/org/analytics/settings', { body: { brand_name: 'Acme' } })).status, 200);
    const rival = await t.api('POST', '/org/competitors', { body: { name: 'Initech' } });
    assert.ok([201, 409].includes(rival.status), rival.text);
    const prompt = randomUUID();
    const at = (day: number) => new Date(Date.UTC(2026, 2, day, 12)).toISOString();
    const answer = (day: number, model: string, brands: string[]) => ({
      answer_id: randomUUID(),
      prompt_id: prompt,
      model,
      location: 'us',
      run_at: at(day),
      text: brands.length ? `${brands.join(' and ')} are good.` : 'Nobody named.',
      citations: [],
      brands,
    });
    const heard = () =>
      receiver.received
        .filter((r) => r.path === '/prompts' && r.body.data.prompt_id === prompt)
        .map((r) => [r.body.type, r.body.data.previous]);
    const importAnswers = async (...answers: ReturnType<typeof answer>[]) =>
      assert.equal((await t.api('POST', '/org/analytics/answers/import', { body: answers })).status, 200);

    await importAnswers(answer(1, 'gpt-4o', ['Acme', 'Initech']));
    await eventually(async () => (heard().length >= 1 ? true : undefined), 'prompt.won');
    await importAnswers(answer(2, 'gpt-4o', ['Acme']), answer(1, 'claude', ['Initech']));
    await importAnswers(answer(3, 'gpt-4o', ['Initech']));
    await eventually(async () => (heard().length >= 2 ? true : undefined), 'prompt.lost');
    await importAnswers(answer(2, 'gpt-4o', ['Acme']));
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(
      heard(),
      [
        ['prompt.won', 'none'],
        ['prompt.lost', 'tied'],
      ],
      'won, then tied (no webhook), then lost; an older answer changes nothing',
    );
  });

  it('sends a sample event on test, lists deliveries, redelivers with the same webhook-id (409 while pending)', async () => {
    const subs = await t.api('GET', '/org/webhooks');
    const sub = subs.body[0];
    const test = await t.api('POST', `/org/webhooks/${sub.subscription_id}/test`, { body: { event_kind: 'content.approved' } });
    assert.equal(test.status, 202, test.text);
    const got = await eventually(async () => receiver.received.find((r) => r.id === test.body.delivery_id), 'sample');
    assert.equal(got.body.data.test, true);
    const log = await t.api('GET', `/org/webhooks/${sub.subscription_id}/deliveries`);
    assert.equal(log.status, 200);
    assert.ok(
      log.body.some((x: { delivery_id: string; status: string }) => x.delivery_id === test.body.delivery_id && x.status === 'delivered'),
    );
    const before = receiver.attempts.get(test.body.delivery_id)!;
    const again = await t.api('POST', `/org/webhook-deliveries/${test.body.delivery_id}/redeliver`);
    assert.equal(again.status, 202, again.text);
    await eventually(async () => receiver.attempts.get(test.body.delivery_id)! > before, 'redelivery');
    assert.equal(receiver.duplicates >= 1, true, 'the receiver saw the same webhook-id again');
    assert.equal((await t.api('POST', `/org/webhook-deliveries/${randomUUID()}/redeliver`)).status, 404);
    assert.equal((await t.api('POST', `/org/webhooks/${randomUUID()}/test`, { body: {} })).status, 404);
    assert.equal(
      (await t.api('POST', '/org/webhooks', { body: { url: receiver.url, event_kinds: ['prompt.unknown'], secret: SECRET } })).status,
      400,
    );
  });

  it('never follows a redirect: a 302 is a failed attempt and its target gets no request', async () => {
    const target = await startReceiver(SECRET);
    const redirector = createServer((_req, res) => res.writeHead(302, { location: `${target.url}/moved` }).end());
    await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r));
    try {
      const sub = await t.api('POST', '/org/webhooks', {
        body: {
          url: `http://127.0.0.1:${(redirector.address() as AddressInfo).port}/in`,
          event_kinds: ['content.approved'],
          secret: SECRET,
        },
      });
      assert.equal(sub.status, 201, sub.text);
      const test = await t.api('POST', `/org/webhooks/${sub.body.subscription_id}/test`, { body: {} });
      const attempt = await eventually(async () => {
        const log = await t.api('GET', `/org/webhooks/${sub.body.subscription_id}/deliveries`);
        return log.body.find((d: { delivery_id: string; attempts: number }) => d.delivery_id === test.body.delivery_id && d.attempts > 0);
      }, 'the redirected attempt');
      assert.equal(attempt.log[0].status_code, 302);
      assert.equal(attempt.log[0].error, 'receiver answered 302 (redirects are not followed)');
      assert.equal(target.attempts.size + target.badSignatures, 0);
      assert.equal((await t.api('DELETE', `/org/webhooks/${sub.body.subscription_id}`)).status, 204);
    } finally {
      await new Promise((r) => redirector.close(r));
      await target.close();
    }
  });

  it('deleting a subscription cancels its pending deliveries: no attempt after the deletion', async () => {
    const gone = await t.api('POST', '/org/webhooks', {
      body: { url: `${receiver.url}/always-failing`, event_kinds: ['content.approved'], secret: SECRET },
    });
    const clock = await t.api('POST', '/org/webhooks', {
      body: { url: `${receiver.url}/clock`, event_kinds: ['content.approved'], secret: SECRET },
    });
    receiver.failFirst.set('/always-failing', 1000);
    receiver.failFirst.set('/clock', 4);
    const test = await t.api('POST', `/org/webhooks/${gone.body.subscription_id}/test`, { body: {} });
    const id = test.body.delivery_id as string;
    await eventually(async () => (receiver.attempts.get(id) ?? 0) >= 1, 'a first failed attempt');
    assert.equal((await t.api('DELETE', `/org/webhooks/${gone.body.subscription_id}`)).status, 204);
    const atDeletion = receiver.attempts.get(id)!;
    // The other subscription's delivery fails four times before it is accepted: long enough for several retries of the first.
    const tick = await t.api('POST', `/org/webhooks/${clock.body.subscription_id}/test`, { body: {} });
    await eventually(async () => receiver.received.some((r) => r.id === tick.body.delivery_id), 'the clock delivery');
    assert.ok(
      receiver.attempts.get(id)! <= atDeletion + 1,
      `attempts went on after the deletion: ${atDeletion} -> ${receiver.attempts.get(id)}`,
    );
    assert.equal((await t.api('POST', `/org/webhook-deliveries/${id}/redeliver`)).status, 404);
    assert.equal((await t.api('DELETE', `/org/webhooks/${clock.body.subscription_id}`)).status, 204);
  });

  it('removing a webhook destination cancels its pending deliveries: no attempt after the removal, the publish recorded as failed', async () => {
    const doomed = await t.api('POST', '/org/destinations', {
      body: { type: 'webhook', name: 'Doomed hook', config: { url: `${receiver.url}/dest-always-failing` }, secret: SECRET },
    });
    assert.equal(doomed.status, 201, doomed.text);
    const clock = await t.api('POST', '/org/webhooks', {
      body: { url: `${receiver.url}/dest-clock`, event_kinds: ['content.approved'], secret: SECRET },
    });
    receiver.failFirst.set('/dest-always-failing', 1000);
    receiver.failFirst.set('/dest-clock', 4);
    const d = await approved();
    const res = await t.api('POST', `/org/content/pieces/${d.draft_id}/publish`, {
      body: { destination_ids: [doomed.body.destination_id] },
    });
    assert.equal(res.status, 502, res.text);
    assert.equal(res.body.error.details.results[0].result, 'pending');
    const log = await t.api('GET', `/org/destinations/${doomed.body.destination_id}/deliveries`);
    const id = log.body[0].delivery_id as string;
    await eventually(async () => (receiver.attempts.get(id) ?? 0) >= 1, 'a first failed attempt');
    assert.equal((await t.api('DELETE', `/org/destinations/${doomed.body.destination_id}?on_live_content=leave`)).status, 204);
    const atRemoval = receiver.attempts.get(id)!;
    // The subscription's delivery fails four times before it is accepted: long enough for several retries of the first.
    const tick = await t.api('POST', `/org/webhooks/${clock.body.subscription_id}/test`, { body: {} });
    await eventually(async () => receiver.received.some((r) => r.id === tick.body.delivery_id), 'the clock delivery');
    assert.ok(
      receiver.attempts.get(id)! <= atRemoval + 1,
      `attempts went on after the removal: ${atRemoval} -> ${receiver.attempts.get(id)}`,
    );
    assert.equal((await t.api('POST', `/org/webhook-deliveries/${id}/redeliver`)).status, 404);
    const failed = await eventually(async () => {
      const p = await piece(d.draft_id);
      return p.body.publications.some((x: { status: string }) => x.status === 'failed') ? p.body : undefined;
    }, 'the pending publish recorded as failed');
    assert.notEqual(failed.status, 'published');
    assert.equal((await t.api('DELETE', `/org/webhooks/${clock.body.subscription_id}`)).status, 204);
  });

  it('removing the destination with unpublish takes every live piece off it (content.unpublished delivered)', async () => {
    assert.equal((await t.api('DELETE', `/org/destinations/${destination.destination_id}`)).status, 400, 'on_live_content is required');
    const res = await t.api('DELETE', `/org/destinations/${destination.destination_id}?on_live_content=unpublish`);
    assert.equal(res.status, 204, res.text);
    await eventually(
      async () => receiver.received.find((r) => r.path === '/dest' && r.body.type === 'content.unpublished'),
      'unpublished webhook',
    );
    assert.equal((await t.api('GET', `/org/destinations/${destination.destination_id}`)).status, 404);
    const subs = await t.api('GET', '/org/webhooks');
    for (const s of subs.body) assert.equal((await t.api('DELETE', `/org/webhooks/${s.subscription_id}`)).status, 204);
    assert.equal((await t.api('GET', '/org/webhooks')).body.length, 0);
  });
});

describe('WordPress destination', () => {
  let wp: { destination_id: string };

  it('creates, updates and deletes the remote post following publish, republish and removal', async () => {
    const res = await t.api('POST', '/org/destinations', {
      body: { type: 'wordpress', name: 'Blog', config: { base_url: wordpress.url, username: 'editor' }, secret: 'abcd efgh ijkl mnop' },
    });
    assert.equal(res.status, 201, res.text);
    wp = res.body;
    const d = await approved({ title: 'WordPress piece' });
    const pub = await t.api('POST', `/org/content/pieces/${d.draft_id}/publish`, { body: { destination_ids: [wp.destination_id] } });
    assert.equal(pub.status, 200, pub.text);
    assert.equal(wordpress.posts.size, 1);
    const [post] = [...wordpress.posts.values()];
    assert.equal(post!.title, 'WordPress piece');
    assert.equal(post!.status, 'publish');
    assert.match(String(post!.content), /class="cite"/);
    assert.equal(pub.body.publications[0].url, `https://blog.example.test/?p=${String(post!.id)}`);
    await feed.revised({ ...d, revision: 2, title: 'WordPress piece, revised' });
    await arrived({ draft_id: d.draft_id, revision: 2 });
    await review(d.draft_id); // a new revision is published once approved
    assert.equal(
      (await t.api('POST', `/org/content/pieces/${d.draft_id}/publish`, { body: { destination_ids: [wp.destination_id] } })).status,
      200,
    );
    assert.equal(wordpress.posts.size, 1);
    assert.equal([...wordpress.posts.values()][0]!.title, 'WordPress piece, revised');

    // A failing WordPress: 502, the failed attempt recorded, nothing else changed.
    const other = await approved({ title: 'Second WordPress piece' });
    wordpress.failing = true;
    const failed = await t.api('POST', `/org/content/pieces/${other.draft_id}/publish`, { body: { destination_ids: [wp.destination_id] } });
    assert.equal(failed.status, 502, failed.text);
    assert.doesNotMatch(failed.text, /database is down/, 'the remote body is never echoed');
    wordpress.failing = false;
    const after = await piece(other.draft_id);
    assert.equal(after.body.status, 'approved');
    assert.deepEqual(after.body.publications, []);
    const attempt = after.body.history.find((h: { event: string }) => h.event === 'publish_failed');
    assert.equal(attempt.error, 'WordPress answered 500 (Internal Server Error)');

    const removed = await t.api('DELETE', `/org/destinations/${wp.destination_id}?on_live_content=delete`);
    assert.equal(removed.status, 204, removed.text);
    assert.equal(wordpress.posts.size, 0);
    assert.ok(wordpress.calls.some((c) => c.method === 'DELETE' && c.path.includes('force=true')));
    const gone = await piece(d.draft_id);
    assert.equal(gone.body.publications[0].status, 'deleted');
  });

  it('two first publishes of a piece at once create one remote post (the second finds the first)', async () => {
    const res = await t.api('POST', '/org/destinations', {
      body: {
        type: 'wordpress',
        name: 'Blog twice',
        config: { base_url: wordpress.url, username: 'editor' },
        secret: 'abcd efgh ijkl mnop',
      },
    });
    assert.equal(res.status, 201, res.text);
    const d = await approved({ title: 'Raced WordPress piece' });
    const creates = () => wordpress.calls.filter((c) => c.method === 'POST' && /\/posts(\?|$)/.test(c.path)).length;
    const before = creates();
    const both = await Promise.all(
      [0, 1, 2].map(() =>
        t.api('POST', `/org/content/pieces/${d.draft_id}/publish`, { body: { destination_ids: [res.body.destination_id] } }),
      ),
    );
    assert.deepEqual(
      both.map((r) => r.status),
      [200, 200, 200],
    );
    assert.equal(creates() - before, 1, 'one remote post');
    const results = both.map((r) => r.body.results[0].result).sort();
    assert.deepEqual(results, ['published', 'unchanged', 'unchanged']);
    assert.equal((await piece(d.draft_id)).body.publications.length, 1);
    assert.equal((await t.api('DELETE', `/org/destinations/${res.body.destination_id}?on_live_content=delete`)).status, 204);
  });

  it('rejects a wordpress destination without a base_url (400)', async () => {
    const res = await t.api('POST', '/org/destinations', {
      body: { type: 'wordpress', name: 'Blog', config: { username: 'x' }, secret: 'abcdefghij' },
    });
    assert.equal(res.status, 400);
  });
});

describe('Ghost destination', () => {
  it('creates, updates, unpublishes and deletes the remote post over the Admin API (JWT)', async () => {
    const adminKey = `6489c8e4f1a2b3c4d5e6f708:${'ab12'.repeat(16)}`;
    const ghost = await startFakeGhost(adminKey);
    try {
      assert.equal(
        (
          await t.api('POST', '/org/destinations', {
            body: { type: 'ghost', name: 'Ghost', config: { admin_url: ghost.url, base_url: 'x' }, secret: adminKey },
          })
        ).status,
        400,
      );
      const res = await t.api('POST', '/org/destinations', {
        body: { type: 'ghost', name: 'Ghost', config: { admin_url: ghost.url }, secret: adminKey },
      });
      assert.equal(res.status, 201, res.text);
      assert.doesNotMatch(res.text, /ab12ab12/);
      const dest = res.body.destination_id as string;
      const d = await approved({ title: 'Ghost piece' });
      const pub = await t.api('POST', `/org/content/pieces/${d.draft_id}/publish`, { body: { destination_ids: [dest] } });
      assert.equal(pub.status, 200, pub.text);
      const [post] = [...ghost.posts.values()];
      assert.equal(post!.title, 'Ghost piece');
      assert.equal(post!.status, 'published');
      assert.match(String(post!.html), /<sup><a class="cite" href="#ref-1" title="[^"]*">\[1\]<\/a><\/sup>/);
      assert.equal(pub.body.publications[0].url, 'https://ghost.example.test/ghost-piece/');
      await feed.revised({ ...d, revision: 2, title: 'Ghost piece, revised' });
      await arrived({ draft_id: d.draft_id, revision: 2 });
      await review(d.draft_id); // a new revision is published once approved
      assert.equal((await t.api('POST', `/org/content/pieces/${d.draft_id}/publish`, { body: { destination_ids: [dest] } })).status, 200);
      assert.equal(ghost.posts.size, 1);
      assert.equal([...ghost.posts.values()][0]!.title, 'Ghost piece, revised');
      const un = await t.api('POST', `/org/content/pieces/${d.draft_id}/unpublish`, { body: { destination_ids: [dest] } });
      assert.equal(un.status, 200, un.text);
      assert.equal([...ghost.posts.values()][0]!.status, 'draft');
      assert.equal((await t.api('POST', `/org/content/pieces/${d.draft_id}/publish`, { body: { destination_ids: [dest] } })).status, 200);
      assert.equal([...ghost.posts.values()][0]!.status, 'published');
      const del = await t.api('POST', `/org/content/pieces/${d.draft_id}/unpublish`, { body: { destination_ids: [dest], mode: 'delete' } });
      assert.equal(del.status, 200, del.text);
      assert.equal(ghost.posts.size, 0);
    } finally {
      await ghost.close();
    }
  });
});

describe('custom domains', () => {
  it('registers, refuses to verify without the TXT record (422), verifies, serves by Host, stops at once on removal', async () => {
    const d = await approved({ title: 'Domain piece' });
    assert.equal((await t.api('POST', `/org/content/pieces/${d.draft_id}/publish`, { body: {} })).status, 200);
    const reg = await t.api('POST', '/org/domains', { body: { hostname: 'Docs.Example.test' } });
    assert.equal(reg.status, 201, reg.text);
    assert.equal(reg.body.hostname, 'docs.example.test');
    assert.equal(reg.body.status, 'pending');
    assert.equal((await t.api('POST', '/org/domains', { body: { hostname: 'docs.example.test' } })).status, 409);
    assert.equal((await t.api('POST', '/org/domains', { body: { hostname: 'not a host' } })).status, 400);
    const byHost = () => getWithHost(t.url, 'docs.example.test', '/domain-piece');
    assert.equal((await byHost()).status, 404, 'an unverified domain serves nothing');
    const early = await t.api('POST', `/org/domains/${reg.body.domain_id}/verify`);
    assert.equal(early.status, 422, early.text);
    dns.records.set(reg.body.verification.name, [reg.body.verification.value]);
    const ok = await t.api('POST', `/org/domains/${reg.body.domain_id}/verify`);
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.status, 'verified');
    const page = await byHost();
    assert.equal(page.status, 200);
    assert.match(page.text, /<link rel="canonical" href="https:\/\/docs\.example\.test\/domain-piece">/);
    const sitemap = (await getWithHost(t.url, 'docs.example.test:443', '/sitemap.xml')).text;
    assert.match(sitemap, /https:\/\/docs\.example\.test\/domain-piece/);
    assert.equal((await t.api('DELETE', `/org/domains/${reg.body.domain_id}`)).status, 204);
    assert.equal((await byHost()).status, 404);
    assert.equal((await t.api('GET', `/org/domains/${reg.body.domain_id}`)).status, 404);
    assert.equal((await t.api('POST', `/org/domains/${randomUUID()}/verify`)).status, 404);
  });
});

describe('permissions and folder scope', () => {
  it('a viewer gets 403 on approve, publish and destinations; a folder-scoped key cannot publish content from outside its folders', async () => {
    const admin = await newOrgAdmin(t, 'pubadmin');
    const viewer = await newMember(t, admin, 'viewer');
    const d = await feed.created(feed.draft(admin.org_id));
    await eventually(
      async () => ((await admin.call('GET', `/org/content/pieces/${d.draft_id}`)).status === 200 ? true : undefined),
      'admin piece',
    );
    assert.equal((await viewer.call('POST', `/org/content/pieces/${d.draft_id}/approve`, {})).status, 403);
    assert.equal((await viewer.call('POST', `/org/content/pieces/${d.draft_id}/publish`, {})).status, 403);
    assert.equal(
      (
        await viewer.call('POST', '/org/destinations', {
          type: 'webhook',
          name: 'x',
          config: { url: 'http://x.test' },
          secret: 'abcdefghijk',
        })
      ).status,
      403,
    );
    assert.equal((await viewer.call('GET', `/org/content/pieces/${d.draft_id}`)).status, 200);
    assert.equal((await t.api('POST', `/org/content/pieces/${d.draft_id}/approve`, { key: null })).status, 401);

    // A key's folder scope names real folders (an unknown id is 400 when the key is created).
    const created = await t.api('POST', '/org/kb/folders', { body: { name: `Publisher folder ${randomUUID()}` } });
    assert.equal(created.status, 201, created.text);
    const folder = created.body.kb_node_id as string;
    const key = await t.api('POST', '/org/api-keys', {
      key: null,
      headers: { authorization: `Bearer ${session}` },
      body: { name: 'Scoped publisher', folder_scope: [folder] },
    });
    assert.equal(key.status, 201, key.text);
    const outside = await feed.created(feed.draft(org, { source_folder_ids: [randomUUID()] }));
    const inside = await feed.created(feed.draft(org, { source_folder_ids: [folder] }));
    await arrived(outside);
    await arrived(inside);
    assert.equal((await t.api('POST', `/org/content/pieces/${outside.draft_id}/approve`, { key: key.body.key, body: {} })).status, 403);
    await review(inside.draft_id, key.body.key);
    assert.equal((await t.api('POST', `/org/content/pieces/${inside.draft_id}/publish`, { key: key.body.key, body: {} })).status, 200);

    // The scope covers the folders below its own, at any depth, and nothing beside it.
    const sub = await t.api('POST', '/org/kb/folders', { body: { name: 'Sub', parent_id: folder } });
    assert.equal(sub.status, 201, sub.text);
    const subSub = await t.api('POST', '/org/kb/folders', { body: { name: 'Sub sub', parent_id: sub.body.kb_node_id } });
    assert.equal(subSub.status, 201, subSub.text);
    const sibling = await t.api('POST', '/org/kb/folders', { body: { name: `Sibling ${randomUUID()}` } });
    assert.equal(sibling.status, 201, sibling.text);
    const below = await feed.created(feed.draft(org, { source_folder_ids: [subSub.body.kb_node_id, folder] }));
    const beside = await feed.created(feed.draft(org, { source_folder_ids: [subSub.body.kb_node_id, sibling.body.kb_node_id] }));
    await arrived(below);
    await arrived(beside);
    await eventually(async () => {
      const res = await t.api('POST', `/org/content/pieces/${below.draft_id}/submit`, { key: key.body.key, body: {} });
      return res.status === 200 ? true : undefined;
    }, 'a piece drawn from a sub-folder of the key’s folder is submitted by it');
    const approvedBelow = await t.api('POST', `/org/content/pieces/${below.draft_id}/approve`, { key: key.body.key, body: {} });
    assert.equal(approvedBelow.status, 200, approvedBelow.text);
    assert.equal((await t.api('POST', `/org/content/pieces/${below.draft_id}/publish`, { key: key.body.key, body: {} })).status, 200);
    assert.equal((await t.api('POST', `/org/content/pieces/${beside.draft_id}/approve`, { key: key.body.key, body: {} })).status, 403);
  });
});

describe('auto-publish', () => {
  it('publishes a verified draft whose content type asks for it to the default set', async () => {
    const d = await feed.created(feed.draft(org, { auto_publish: true, title: 'Auto published piece' }));
    const p = await eventually(async () => {
      const res = await piece(d.draft_id);
      return res.status === 200 && res.body.status === 'published' ? res.body : undefined;
    }, 'auto-publish');
    assert.equal(p.publications[0].type, 'hosted');
    assert.equal((await site('auto-published-piece')).status, 200);
  });
});

describe('closed loop', () => {
  it('reports the target prompts\u2019 figures before and after publication, and lists pieces whose prompts moved', async () => {
    const prompt = randomUUID();
    const d = await approved({ title: 'Loop piece', target_prompt_ids: [prompt] });
    assert.equal((await t.api('GET', `/org/content/pieces/${d.draft_id}/outcome`)).status, 409, 'not published yet');
    assert.equal((await t.api('POST', `/org/content/pieces/${d.draft_id}/publish`, { body: {} })).status, 200);
    assert.equal((await t.api('PUT', '/org/analytics/settings', { body: { brand_name: 'Acme' } })).status, 200);
    const today = new Date();
    const yesterday = new Date(today.getTime() - 86_400_000);
    const answer = (at: Date, brands: string[]) => ({
      answer_id: randomUUID(),
      prompt_id: prompt,
      model: 'gpt-4o',
      location: 'us',
      run_at: at.toISOString(),
      text: brands.length ? `${brands.join(' and ')} are good.` : 'Nobody named.',
      citations: [],
      brands,
    });
    const imported = await t.api('POST', '/org/analytics/answers/import', {
      body: [answer(yesterday, ['Globex']), answer(today, ['Acme'])],
    });
    assert.equal(imported.status, 200, imported.text);
    const res = await t.api('GET', `/org/content/pieces/${d.draft_id}/outcome`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.window_days, 1);
    const [p] = res.body.prompts;
    assert.equal(p.prompt_id, prompt);
    assert.equal(p.before.answer_count, 1);
    assert.equal(p.before.mention_rate, 0);
    assert.equal(p.after.mention_rate, 1);
    assert.equal(p.movement, 'won');
    assert.equal(res.body.moved, true);
    const moved = await t.api('GET', '/org/content/outcomes');
    assert.equal(moved.status, 200, moved.text);
    assert.ok(moved.body.items.some((i: { piece_id: string }) => i.piece_id === d.draft_id));
    assert.equal((await t.api('GET', `/org/content/pieces/${randomUUID()}/outcome`)).status, 404);
  });
});
