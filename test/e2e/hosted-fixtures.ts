import assert from 'node:assert/strict';
import { request } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { DraftRevision } from '@kb/events';
import { parseDocument, DomUtils } from 'htmlparser2';
import { startTestSystem, type TestSystem } from './harness.js';
import { draftFeed, eventually } from './publishing-fixtures.js';

/** Helpers of the hosted-page tests: a draft taken through review to a live hosted page, and reading what it serves. */

type Element = ReturnType<typeof DomUtils.findAll>[number];
type Call = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any; text: string }>;

/** The API with the bootstrap key (the default organization). */
export const withKey =
  (t: TestSystem): Call =>
  (method, path, body) =>
    t.api(method, path, body === undefined ? {} : { body });

/**
 * Feeds the draft as generation would, waits for its piece, submits, approves and
 * publishes it to the default set (the hosted site); returns the page's slug.
 */
export async function publishDraft(feed: ReturnType<typeof draftFeed>, call: Call, d: DraftRevision): Promise<string> {
  await feed.created(d);
  await eventually(async () => (await call('GET', `/org/content/pieces/${d.draft_id}`)).status === 200, `piece ${d.draft_id}`);
  const submitted = await call('POST', `/org/content/pieces/${d.draft_id}/submit`, {});
  assert.equal(submitted.status, 200, submitted.text);
  const approved = await call('POST', `/org/content/pieces/${d.draft_id}/approve`, {});
  assert.equal(approved.status, 200, approved.text);
  const published = await call('POST', `/org/content/pieces/${d.draft_id}/publish`, {});
  assert.equal(published.status, 200, published.text);
  const hosted = published.body.publications.find((p: { type: string }) => p.type === 'hosted');
  assert.ok(hosted?.url, published.text);
  return new URL(hosted.url as string).pathname.split('/').pop()!;
}

type Citation = DraftRevision['sections'][number]['sentences'][number]['citations'][number];

/** A cited span of a document (content and version ids given, or new ones). */
export function citation(quote: string, o: { content_id?: string; version_id?: string; chunk?: number } = {}): Citation {
  const version_id = o.version_id ?? randomUUID();
  return { content_id: o.content_id ?? randomUUID(), version_id, chunk_id: `${version_id}:${o.chunk ?? 0}`, quote };
}

/** A supported sentence with its citations. */
export const sentence = (index: number, text: string, citations: Citation[]) => ({
  index,
  text,
  verdict: 'supported' as const,
  citations,
});

/** A GET with a Host header of our choosing, answering headers too (fetch may not set Host, nor show a redirect's Location). */
export function getAs(
  base: string,
  host: string,
  path: string,
): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path, method: 'GET', headers: { host } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A parsed page and the few questions the tests ask of it. */
export function page(html: string) {
  const doc = parseDocument(html);
  const all = (test: (e: Element) => boolean) => DomUtils.findAll(test, doc.children);
  const one = (test: (e: Element) => boolean) => DomUtils.findOne(test, doc.children);
  return {
    all,
    one,
    /** The elements below `root` that pass the test. */
    allIn: (root: Element, test: (e: Element) => boolean) => DomUtils.findAll(test, root.children),
    text: (e: Element | null | undefined) => (e ? DomUtils.textContent(e) : ''),
    meta: (attr: string, value: string) => one((e) => e.name === 'meta' && e.attribs[attr] === value)?.attribs.content,
    jsonLd: () => JSON.parse(DomUtils.textContent(one((e) => e.name === 'script' && e.attribs.type === 'application/ld+json')!)),
  };
}

/** A test system with a draft feed into its publishing service, and the bootstrap organization's id and slug. */
export async function startHostedSystem(env: Record<string, string> = {}) {
  const t = await startTestSystem(env);
  const feed = draftFeed(t.dataDir);
  const me = await t.api('GET', '/org/me');
  assert.equal(me.status, 200, me.text);
  return { t, feed, org: me.body.org_id as string, slug: me.body.slug as string };
}
