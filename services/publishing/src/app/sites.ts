import { createHash } from 'node:crypto';
import type { Store } from '@kb/store';
import {
  DOMAIN_HOSTS,
  DOMAINS,
  DRAFT_REVISIONS,
  ORGS,
  PAGES,
  SITE_VERSIONS,
  pageId,
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
  renderSitemap,
  type Site,
  type SitePage,
} from '../domain/render.js';

export interface HostedResponse {
  status: number;
  content_type: string;
  body: Buffer;
  etag: string;
  cache_control: string;
}

interface CacheEntry {
  validator: string;
  response: HostedResponse;
}

const HTML = 'text/html; charset=utf-8';
const CACHE_CONTROL = 'public, max-age=60, must-revalidate';

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
      if (rev)
        out.push({
          slug: p.slug,
          title: rev.draft.title,
          description: rev.draft.description,
          published_at: p.published_at,
          updated_at: p.updated_at,
        });
    }
    return out;
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

  async function render(orgId: string, path: string): Promise<HostedResponse> {
    const found = await siteOf(orgId);
    if (!found) return notFound();
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
        return respond(
          200,
          HTML,
          renderPage(
            site,
            {
              slug: page.slug,
              title: rev.draft.title,
              description: rev.draft.description,
              published_at: page.published_at,
              updated_at: page.updated_at,
            },
            rev.draft,
          ),
        );
      }
    }
  }

  /** Which organization a request is for: by slug (under /sites/<slug>/) or by a verified custom domain's Host. */
  async function orgFor(request: { org_slug?: string; host?: string }): Promise<string | undefined> {
    if (request.org_slug) {
      const [org] = await store.find<OrgDoc>(ORGS, { where: { slug: request.org_slug }, limit: 1 });
      return org?.id;
    }
    if (request.host) {
      const host = request.host.toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
      const entry = await store.get<{ id: string; org_id: string; verified: boolean }>(DOMAIN_HOSTS, host);
      return entry?.verified ? entry.org_id : undefined;
    }
    return undefined;
  }

  return {
    siteOf,
    /** The URL a hosted page has (or will have) on the organization's site. */
    async pageUrl(orgId: string, slug: string): Promise<string | undefined> {
      const found = await siteOf(orgId);
      return found ? `${found.site.base_url}/${slug}` : undefined;
    },
    async serve(request: { org_slug?: string; host?: string; path: string }): Promise<HostedResponse> {
      const orgId = await orgFor(request);
      if (!orgId) return notFound();
      const path = request.path.replace(/^\/+/, '').replace(/\/+$/, '');
      const version = (await store.get<{ id: string; version: number }>(SITE_VERSIONS, orgId))?.version ?? 0;
      const key = `${orgId}\u0000${path}`;
      const validator = `${version}`;
      const hit = cache.get(key);
      if (hit && hit.validator === validator) return hit.response;
      const response = await render(orgId, path);
      if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!);
      cache.set(key, { validator, response });
      return response;
    },
    /** Drops every cached render (the slug or name of an organization changed). */
    invalidate() {
      cache.clear();
    },
  };
}

export type SitesService = ReturnType<typeof createSitesService>;
