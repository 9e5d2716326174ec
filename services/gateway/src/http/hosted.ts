import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RpcClient } from '@kb/rpc';
import { hostedCaller } from './routes/publishing.js';

interface HostedPage {
  status: number;
  content_type: string;
  body: Buffer;
  etag: string;
  cache_control: string;
}

function send(request: FastifyRequest, reply: FastifyReply, page: HostedPage) {
  void reply.header('etag', page.etag).header('cache-control', page.cache_control).header('x-content-type-options', 'nosniff');
  const tags = (request.headers['if-none-match'] ?? '').split(',').map((t) => t.trim().replace(/^W\//, ''));
  if (page.status === 200 && tags.includes(page.etag)) return reply.status(304).send();
  return reply
    .status(page.status)
    .type(page.content_type)
    .send(request.method === 'HEAD' ? undefined : page.body);
}

/**
 * The hosted destination's pages, outside /api/v1: under /sites/<org slug>/ and,
 * for a verified custom domain, at the root of that Host. Publishing renders and
 * caches the bytes; this answers ETag revalidations with 304.
 * Returns the fallback for requests no route matched (custom domains).
 */
export function registerHostedSite(app: FastifyInstance, sites: RpcClient) {
  const serve = async (request: FastifyRequest, reply: FastifyReply, input: { org_slug?: string; host?: string; path: string }) =>
    send(request, reply, await sites.call<HostedPage>('Serve', input, hostedCaller(request.id)));
  const config = { auth: { credential: 'none' as const } };
  const schema = { hide: true };
  app.get('/sites/:org_slug', { config, schema }, (req, reply) =>
    reply.redirect(`/sites/${encodeURIComponent((req.params as { org_slug: string }).org_slug)}/`, 301),
  );
  app.get('/sites/:org_slug/*', { config, schema }, (req, reply) => {
    const p = req.params as { org_slug: string; '*': string };
    return serve(req, reply, { org_slug: p.org_slug, path: p['*'] });
  });

  /** A GET no route matched: the page of a verified custom domain named by Host, else undefined. */
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || request.url.startsWith('/api/')) return undefined;
    const host = request.headers.host;
    if (!host) return undefined;
    const page = await sites.call<HostedPage>('Serve', { host, path: request.url.split('?')[0] ?? '/' }, hostedCaller(request.id));
    if (page.status === 404) return undefined;
    return send(request, reply, page);
  };
}
