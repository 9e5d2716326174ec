import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startTestSystem, type TestSystem } from './harness.js';
import { newOrgAdmin } from './identity-fixtures.js';
import { draftFeed, startDnsServer } from './publishing-fixtures.js';
import { getAs, publishDraft, withKey } from './hosted-fixtures.js';

/**
 * Where hosted pages answer: robots.txt at the shared host's root naming every
 * site's sitemap, a custom domain that sends its /sites/<slug>/ paths to its own
 * root, and a site that answers 404 while its hosted destination is switched off.
 */
// The console answers "/" on the shared host when it is built; a custom domain's "/" is its site's index all the same.
const consoleDir = join(new URL('../../', import.meta.url).pathname, 'web/console/dist');
const withConsole = existsSync(join(consoleDir, 'index.html'));

let t: TestSystem;
let feed: ReturnType<typeof draftFeed>;
let dns: Awaited<ReturnType<typeof startDnsServer>>;
let org: string;
let slug: string;
let pageSlug: string;
let other: Awaited<ReturnType<typeof newOrgAdmin>> & { slug: string; pageSlug: string };

beforeAll(async () => {
  dns = await startDnsServer();
  t = await startTestSystem({ DNS_SERVERS: dns.address, ...(withConsole && { CONSOLE_DIR: consoleDir }) });
  feed = draftFeed(t.dataDir);
  const me = await t.api('GET', '/org/me');
  assert.equal(me.status, 200, me.text);
  org = me.body.org_id;
  slug = me.body.slug;
  pageSlug = await publishDraft(feed, withKey(t), feed.draft(org, { title: 'Routing piece' }));
  // A second organization with a live page of its own.
  const admin = await newOrgAdmin(t, 'hostedrouting');
  const otherMe = await admin.call('GET', '/org/me');
  assert.equal(otherMe.status, 200, otherMe.text);
  other = {
    ...admin,
    slug: otherMe.body.slug,
    pageSlug: await publishDraft(feed, admin.call, feed.draft(admin.org_id, { title: 'Other organization piece' })),
  };
});
afterAll(async () => {
  await feed?.close();
  await t?.stop();
  await dns?.close();
});

describe('hosted routing', () => {
  it('serves robots.txt at the shared host root, naming the sitemap of every site', async () => {
    const res = await fetch(`${t.url}/robots.txt`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    const robots = await res.text();
    assert.match(robots, /^User-agent: \*$/m);
    assert.match(robots, /^Disallow: \/api\/$/m);
    const sitemaps = [...robots.matchAll(/^Sitemap: (\S+)$/gm)].map((m) => new URL(m[1]!).pathname);
    assert.ok(sitemaps.includes(`/sites/${slug}/sitemap.xml`), robots);
    assert.ok(sitemaps.includes(`/sites/${other.slug}/sitemap.xml`), robots);
    // The per-site one stays where it was.
    assert.equal((await fetch(`${t.url}/sites/${slug}/robots.txt`)).status, 200);
  });

  it('redirects a custom domain’s /sites/<slug>/ paths to its own paths; another organization’s are 404', async () => {
    const reg = await t.api('POST', '/org/domains', { body: { hostname: 'docs.routing.test' } });
    assert.equal(reg.status, 201, reg.text);
    dns.records.set(reg.body.verification.name, [reg.body.verification.value]);
    assert.equal((await t.api('POST', `/org/domains/${reg.body.domain_id}/verify`)).status, 200);

    const onDomain = (path: string) => getAs(t.url, 'docs.routing.test', path);
    assert.equal((await onDomain(`/${pageSlug}`)).status, 200);
    const home = await onDomain('/');
    assert.equal(home.status, 200);
    assert.match(home.text, /<link rel="canonical" href="https:\/\/docs\.routing\.test\/">/, 'the domain’s root is its site index');
    assert.ok(home.text.includes(`href="https://docs.routing.test/${pageSlug}"`));
    if (withConsole)
      assert.doesNotMatch(await (await fetch(`${t.url}/`)).text(), /docs\.routing\.test/, 'the shared host’s root stays the console');
    for (const [path, target] of [
      [`/sites/${slug}/${pageSlug}`, `https://docs.routing.test/${pageSlug}`],
      [`/sites/${slug}/`, 'https://docs.routing.test/'],
      [`/sites/${slug}/sitemap.xml`, 'https://docs.routing.test/sitemap.xml'],
    ] as const) {
      const res = await onDomain(path);
      assert.ok(res.status === 301 || res.status === 308, `${path}: ${res.status}`);
      assert.equal(res.headers.location, target, path);
    }
    assert.equal((await onDomain(`/sites/${other.slug}/${other.pageSlug}`)).status, 404, 'a domain serves only its own site');
    // The domain's own robots.txt names its own sitemap.
    const robots = await onDomain('/robots.txt');
    assert.equal(robots.status, 200);
    assert.match(robots.text, /^Sitemap: https:\/\/docs\.routing\.test\/sitemap\.xml$/m);
    // The shared host still serves the site under /sites/<slug>/.
    assert.equal((await fetch(`${t.url}/sites/${slug}/${pageSlug}`)).status, 200);
    assert.equal((await t.api('DELETE', `/org/domains/${reg.body.domain_id}`)).status, 204);
  });

  it('answers 404 for every page while the hosted destination is switched off, and serves them again when it is on', async () => {
    const list = await t.api('GET', '/org/destinations');
    const hosted = list.body.find((x: { type: string }) => x.type === 'hosted');
    const paths = [pageSlug, '', 'sitemap.xml', 'feed.xml', 'llms.txt'];
    for (const p of paths) assert.equal((await fetch(`${t.url}/sites/${slug}/${p}`)).status, 200, p);
    const before = await (await fetch(`${t.url}/sites/${slug}/${pageSlug}`)).text();

    const off = await t.api('PATCH', `/org/destinations/${hosted.destination_id}`, { body: { enabled: false } });
    assert.equal(off.status, 200, off.text);
    for (const p of paths) assert.equal((await fetch(`${t.url}/sites/${slug}/${p}`)).status, 404, `${p} while switched off`);
    // The other organization's site is not affected.
    assert.equal((await fetch(`${t.url}/sites/${other.slug}/${other.pageSlug}`)).status, 200);

    const on = await t.api('PATCH', `/org/destinations/${hosted.destination_id}`, { body: { enabled: true } });
    assert.equal(on.status, 200, on.text);
    for (const p of paths) assert.equal((await fetch(`${t.url}/sites/${slug}/${p}`)).status, 200, `${p} when back on`);
    assert.equal(await (await fetch(`${t.url}/sites/${slug}/${pageSlug}`)).text(), before, 'the same page comes back');
  });
});
