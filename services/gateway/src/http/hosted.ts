import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RpcClient } from '@kb/rpc';
import { hostedCaller } from './routes/publishing.js';

interface HostedPage {
  status: number;
  content_type: string;
  body: Buffer;
  etag: string;
  cache_control: string;
  /** Where a redirect leads (a custom domain asked for a /sites/<slug>/ path). */
  location?: string;
}

/**
 * The gateway's micro-cache of hosted responses: a warm page costs a map lookup
 * instead of a gRPC call. Entries live `ttlMs` (how stale another gateway replica
 * can be after a change); every publishing write through this gateway clears it.
 */
export function createHostedCache(ttlMs: number, maxEntries = 10_000) {
  const entries = new Map<string, { page: HostedPage; expires: number }>();
  return {
    get(key: string): HostedPage | undefined {
      const e = entries.get(key);
      if (!e) return undefined;
      if (e.expires > Date.now()) return e.page;
      entries.delete(key);
      return undefined;
    },
    set(key: string, page: HostedPage) {
      if (ttlMs <= 0) return;
      if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!);
      entries.set(key, { page, expires: Date.now() + ttlMs });
    },
    clear: () => entries.clear(),
  };
}
export type HostedCache = ReturnType<typeof createHostedCache>;

/**
 * Hosted pages share an origin with the console and the API, so they run in a
 * sandbox (an opaque origin: no access to the console's storage) and may load
 * nothing: their only resources are the inline stylesheet and a JSON-LD data
 * block, which is never executed. No framing, no forms, no <base>.
 */
export const HOSTED_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; sandbox";

function send(request: FastifyRequest, reply: FastifyReply, page: HostedPage) {
  void reply
    .header('etag', page.etag)
    .header('cache-control', page.cache_control)
    .header('x-content-type-options', 'nosniff')
    .header('content-security-policy', HOSTED_CSP)
    .header('referrer-policy', 'strict-origin-when-cross-origin');
  if (page.location) void reply.header('location', page.location);
  const tags = (request.headers['if-none-match'] ?? '').split(',').map((t) => t.trim().replace(/^W\//, ''));
  if (page.status === 200 && tags.includes(page.etag)) return reply.status(304).send();
  return reply
    .status(page.status)
    .type(page.content_type)
    .send(request.method === 'HEAD' ? undefined : page.body);
}

/**
 * The hosted destination's pages, outside /api/v1: under /sites/<org slug>/ and,
 * for a verified custom domain, at the root of that Host (which redirects its own
 * /sites/<slug>/ paths to the root). Publishing renders and caches the bytes and
 * decides by Host; this answers ETag revalidations with 304. /robots.txt is the
 * custom domain's own, or on the shared host one naming every site's sitemap.
 * Returns the fallback for requests no route matched (custom domains).
 */
export function registerHostedSite(app: FastifyInstance, sites: RpcClient, cache: HostedCache) {
  const fetchPage = async (request: FastifyRequest, input: { org_slug?: string; host?: string; path: string }) => {
    const key = `${input.org_slug ?? ''}\u0000${input.host?.toLowerCase() ?? ''}\u0000${input.path}`;
    const hit = cache.get(key);
    if (hit) return hit;
    const page = await sites.call<HostedPage>('Serve', input, hostedCaller(request.id));
    cache.set(key, page);
    return page;
  };
  const serve = async (request: FastifyRequest, reply: FastifyReply, input: { org_slug?: string; host?: string; path: string }) =>
    send(request, reply, await fetchPage(request, input));
  const hostOf = (request: FastifyRequest) => (request.headers.host ? { host: request.headers.host } : {});
  const config = { auth: { credential: 'none' as const } };
  const schema = { hide: true };
  app.get('/sites/:org_slug', { config, schema }, (req, reply) =>
    reply.redirect(`/sites/${encodeURIComponent((req.params as { org_slug: string }).org_slug)}/`, 301),
  );
  app.get('/sites/:org_slug/*', { config, schema }, (req, reply) => {
    const p = req.params as { org_slug: string; '*': string };
    return serve(req, reply, { org_slug: p.org_slug, ...hostOf(req), path: p['*'] });
  });
  app.get('/robots.txt', { config, schema }, (req, reply) => serve(req, reply, { ...hostOf(req), path: 'robots.txt' }));
  // "/" is the console's on the shared host, and a custom domain's site index: the Host decides first.
  app.addHook('onRequest', async (request, reply) => {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || !request.headers.host || request.url.split('?')[0] !== '/') return;
    const page = await fetchPage(request, { host: request.headers.host, path: '' });
    if (page.status !== 404) return send(request, reply, page);
  });

  /** A GET no route matched: the page of a verified custom domain named by Host, else undefined. */
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || request.url.startsWith('/api/')) return undefined;
    const host = request.headers.host;
    if (!host) return undefined;
    const page = await fetchPage(request, { host, path: request.url.split('?')[0] ?? '/' });
    if (page.status === 404) return undefined;
    return send(request, reply, page);
  };
}
