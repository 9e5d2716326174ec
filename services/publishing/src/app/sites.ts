import { createHash } from 'node:crypto';
import type { Store } from '@kb/store';
import {
  DESTINATIONS,
  DESTINATION_TOGGLES,
  DOMAIN_HOSTS,
  DOMAINS,
  DRAFT_REVISIONS,
  ORGS,
  PAGES,
  SITE_VERSIONS,
  pageId,
  type DestinationDoc,
  type DomainDoc,
  type DraftRevisionDoc,
  type OrgDoc,
  type PageDoc,
} from '../projections/collections.js';
import {
  renderAtom,
  renderIndex,
  renderLlmsTxt,
  renderPage,
  renderRobots,
  renderSharedRobots,
  renderSitemap,
  sitePageOf,
  type Site,
  type SitePage,
} from '../domain/render.js';
import { sourceTitles } from '../projections/source-titles.js';
import { SHARED_HOSTED_ID } from './destinations.js';

export interface HostedResponse {
  status: number;
  content_type: string;
  body: Buffer;
  etag: string;
  cache_control: string;
  /** Where a redirect (301) leads. */
  location?: string;
}

interface CacheEntry {
  validator: string;
  response: HostedResponse;
}

const HTML = 'text/html; charset=utf-8';
const CACHE_CONTROL = 'public, max-age=60, must-revalidate';
/** How long the shared host's robots.txt is reused: a site's first page reaches it within this time. */
const SHARED_ROBOTS_TTL_MS = 60_000;

/**
 * The hosted destination's pages. Rendered bytes are cached per site and path
 * and validated by the site's version (bumped in the same transaction as any
 * publish, unpublish or domain change), so a warm page costs two key reads.
 */
export function createSitesService(deps: { store: Store; publicBaseUrl: string; maxEntries?: number }) {
  const { store } = deps;
  const base = deps.publicBaseUrl.replace(/\/+$/, '');
  const maxEntries = deps.maxEntries ?? 10_000;
  const cache = new Map<string, CacheEntry>();

  async function siteOf(orgId: string): Promise<{ site: Site; org: OrgDoc } | undefined> {
    const org = await store.get<OrgDoc>(ORGS, orgId);
    if (!org) return undefined;
    const domains = await store.find<DomainDoc>(DOMAINS, {
      where: { org_id: orgId, status: 'verified' },
      sort: [{ field: 'created_at', order: 'asc' }],
    });
    const base_url = domains[0] ? `https://${domains[0].hostname}` : `${base}/sites/${encodeURIComponent(org.slug)}`;
    return { site: { org_name: org.name, base_url }, org };
  }

  async function livePages(orgId: string): Promise<SitePage[]> {
    const pages = await store.find<PageDoc>(PAGES, {
      where: { org_id: orgId, status: 'live' },
      sort: [{ field: 'published_at', order: 'desc' }],
    });
    const out: SitePage[] = [];
    for (const p of pages) {
      const rev = await store.get<DraftRevisionDoc>(DRAFT_REVISIONS, `${p.piece_id}:${p.revision}`);
      if (rev) out.push(sitePageOf({ slug: p.slug, published_at: p.published_at, updated_at: p.updated_at }, rev.draft));
    }
    return out;
  }

  /** The hosted destination is shared and switched per organization; switched off, the site serves nothing. */
  async function hostedEnabled(orgId: string): Promise<boolean> {
    const toggle = await store.get<{ id: string; enabled: boolean }>(DESTINATION_TOGGLES, `${orgId}:${SHARED_HOSTED_ID}`);
    if (toggle) return toggle.enabled;
    return (await store.get<DestinationDoc>(DESTINATIONS, SHARED_HOSTED_ID))?.is_default ?? true;
  }

  const respond = (status: number, content_type: string, text: string): HostedResponse => {
    const body = Buffer.from(text, 'utf8');
    return {
      status,
      content_type,
      body,
      etag: `"${createHash('sha1').update(body).digest('base64url').slice(0, 22)}"`,
      cache_control: CACHE_CONTROL,
    };
  };
  const notFound = () => respond(404, 'text/plain; charset=utf-8', 'Not Found');
  const redirect = (location: string): HostedResponse => ({
    ...respond(301, 'text/plain; charset=utf-8', `Moved Permanently: ${location}`),
    location,
  });

  async function render(orgId: string, path: string): Promise<HostedResponse> {
    const found = await siteOf(orgId);
    // A site whose hosted destination is switched off answers 404 for every path (not 410: it is not gone for
    // good, switching the destination back on brings every page back at the same URL).
    if (!found || !(await hostedEnabled(orgId))) return notFound();
    const { site } = found;
    switch (path) {
      case '':
        return respond(200, HTML, renderIndex(site, await livePages(orgId)));
      case 'sitemap.xml':
        return respond(200, 'application/xml; charset=utf-8', renderSitemap(site, await livePages(orgId)));
      case 'feed.xml':
        return respond(200, 'application/atom+xml; charset=utf-8', renderAtom(site, await livePages(orgId)));
      case 'robots.txt':
        return respond(200, 'text/plain; charset=utf-8', renderRobots(site));
      case 'llms.txt':
        return respond(200, 'text/plain; charset=utf-8', renderLlmsTxt(site, await livePages(orgId)));
      default: {
        if (path.includes('/')) return notFound();
        const page = await store.get<PageDoc>(PAGES, pageId(orgId, path));
        if (!page) return notFound();
        if (page.status === 'gone') return respond(410, 'text/plain; charset=utf-8', 'Gone: this page was unpublished');
        const rev = await store.get<DraftRevisionDoc>(DRAFT_REVISIONS, `${page.piece_id}:${page.revision}`);
        if (!rev) return notFound();
        const { draft } = rev;
        const cited = draft.sections.flatMap((s) => s.sentences.flatMap((x) => x.citations.map((c) => c.content_id)));
        return respond(
          200,
          HTML,
          renderPage(
            site,
            sitePageOf({ slug: page.slug, published_at: page.published_at, updated_at: page.updated_at }, draft),
            draft,
            await sourceTitles(store, orgId, cited),
          ),
        );
      }
    }
  }

  let sharedRobots: { until: number; response: HostedResponse } | undefined;
  /** The shared host's robots.txt: the sitemap of every site served there (switched on, with a live page, no custom domain). */
  async function renderSharedRobotsTxt(): Promise<HostedResponse> {
    if (sharedRobots && sharedRobots.until > Date.now()) return sharedRobots.response;
    const sitemaps: string[] = [];
    for (const org of await store.find<OrgDoc>(ORGS, { sort: [{ field: 'slug', order: 'asc' }] })) {
      const [live] = await store.find<PageDoc>(PAGES, { where: { org_id: org.id, status: 'live' }, limit: 1 });
      if (!live || !(await hostedEnabled(org.id))) continue;
      const found = await siteOf(org.id);
      if (found?.site.base_url.startsWith(`${base}/sites/`)) sitemaps.push(`${found.site.base_url}/sitemap.xml`);
    }
    const response = respond(200, 'text/plain; charset=utf-8', renderSharedRobots(sitemaps));
    sharedRobots = { until: Date.now() + SHARED_ROBOTS_TTL_MS, response };
    return response;
  }

  const sharedHost = new URL(base).hostname.toLowerCase();
  const hostnameOf = (host: string) => host.toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');

  /** The verified custom domain a Host names (none for the shared host, which is never looked up). */
  async function customDomain(host: string | undefined): Promise<{ hostname: string; org_id: string } | undefined> {
    if (!host) return undefined;
    const hostname = hostnameOf(host);
    if (hostname === sharedHost) return undefined;
    const entry = await store.get<{ id: string; org_id: string; verified: boolean }>(DOMAIN_HOSTS, hostname);
    return entry?.verified ? { hostname, org_id: entry.org_id } : undefined;
  }

  async function orgBySlug(slug: string): Promise<string | undefined> {
    const [org] = await store.find<OrgDoc>(ORGS, { where: { slug }, limit: 1 });
    return org?.id;
  }

  /** A site's path, rendered once per site version. */
  async function cached(orgId: string, path: string): Promise<HostedResponse> {
    const version = (await store.get<{ id: string; version: number }>(SITE_VERSIONS, orgId))?.version ?? 0;
    const key = `${orgId}\u0000${path}`;
    const validator = `${version}`;
    const hit = cache.get(key);
    if (hit && hit.validator === validator) return hit.response;
    const response = await render(orgId, path);
    if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!);
    cache.set(key, { validator, response });
    return response;
  }

  return {
    siteOf,
    /** The URL a hosted page has (or will have) on the organization's site. */
    async pageUrl(orgId: string, slug: string): Promise<string | undefined> {
      const found = await siteOf(orgId);
      return found ? `${found.site.base_url}/${slug}` : undefined;
    },
    /**
     * A hosted request: under /sites/<slug>/ (org_slug given) or at the root of a
     * Host. A verified custom domain serves its site at its root and redirects
     * its /sites/<slug>/ paths there (another organization's are 404); the shared
     * host's root has only robots.txt.
     */
    async serve(request: { org_slug?: string; host?: string; path: string }): Promise<HostedResponse> {
      const path = request.path.replace(/^\/+/, '').replace(/\/+$/, '');
      const domain = await customDomain(request.host);
      if (request.org_slug) {
        const orgId = await orgBySlug(request.org_slug);
        if (!orgId) return notFound();
        if (!domain) return cached(orgId, path);
        return domain.org_id === orgId ? redirect(`https://${domain.hostname}/${path}`) : notFound();
      }
      if (domain) return cached(domain.org_id, path);
      return path === 'robots.txt' ? renderSharedRobotsTxt() : notFound();
    },
    /** Drops every cached render (the slug or name of an organization changed). */
    invalidate() {
      cache.clear();
      sharedRobots = undefined;
    },
  };
}

export type SitesService = ReturnType<typeof createSitesService>;
