import { createHmac } from 'node:crypto';
import { errors } from '@kb/platform';
import type { DestinationAdapter, ResolvedDestination } from './port.js';
import type { OutboundPolicy } from '@kb/platform/outbound';
import { closedConfig, destinationUrl, remoteFailure, unreachable } from './config.js';

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

/** The Admin API token: a 5-minute HS256 JWT signed with the hex secret of an `id:secret` admin key, audience /admin/. */
export function ghostToken(adminKey: string, nowSeconds: number): string {
  const [id, secret] = adminKey.split(':');
  if (!id || !secret || !/^[0-9a-f]+$/i.test(secret))
    throw errors.downstream('The Ghost admin key is not <id>:<hex secret>', { code: 'destination_failed' });
  const header = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT', kid: id }));
  const payload = b64url(JSON.stringify({ iat: nowSeconds, exp: nowSeconds + 300, aud: '/admin/' }));
  const signature = createHmac('sha256', Buffer.from(secret, 'hex')).update(`${header}.${payload}`).digest('base64url');
  return `${header}.${payload}.${signature}`;
}

/**
 * Ghost over its Admin API (`/ghost/api/admin/posts/`, `Authorization: Ghost <jwt>`).
 * Publish creates a post from HTML, republish updates it (Ghost wants the post's
 * current updated_at), unpublish makes it a draft, delete deletes it.
 */
export function createGhostAdapter(options: {
  timeoutMs: number;
  policy: OutboundPolicy;
  now?: () => number;
  fetch?: typeof fetch;
}): DestinationAdapter {
  const doFetch = options.fetch ?? fetch;
  const now = options.now ?? (() => Date.now());

  async function call(d: ResolvedDestination, method: string, path: string, body?: unknown): Promise<Record<string, unknown> | undefined> {
    const base = String(d.config.admin_url).replace(/\/+$/, '');
    let res: Response;
    try {
      res = await doFetch(`${base}/ghost/api/admin${path}`, {
        method,
        headers: {
          authorization: `Ghost ${ghostToken(d.secret ?? '', Math.floor(now() / 1000))}`,
          'accept-version': 'v5.0',
          accept: 'application/json',
          ...(body !== undefined && { 'content-type': 'application/json' }),
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(options.timeoutMs),
      });
    } catch (err) {
      throw unreachable('Ghost', base, err);
    }
    if (!res.ok) throw remoteFailure('Ghost', res);
    const text = await res.text();
    if (!text) return undefined;
    try {
      return JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw errors.downstream('Ghost answered with something that is not JSON', { code: 'destination_failed' });
    }
  }
  const postOf = (res: Record<string, unknown> | undefined) => {
    const post = (res?.posts as Record<string, unknown>[] | undefined)?.[0];
    if (!post?.id) throw errors.downstream('Ghost answered without a post', { code: 'destination_failed' });
    return post;
  };
  const current = async (d: ResolvedDestination, id: string) => postOf(await call(d, 'GET', `/posts/${encodeURIComponent(id)}/`));

  return {
    type: 'ghost',
    secret: 'required',
    validateConfig: (config) =>
      closedConfig(config, {
        admin_url: { required: true, check: destinationUrl(options.policy), hint: 'the Ghost site URL, e.g. https://blog.example.com' },
      }),
    async publish(d, r) {
      const fields = {
        title: r.draft.title,
        html: r.html,
        custom_excerpt: r.draft.description.slice(0, 300),
        slug: r.slug,
        status: 'published',
      };
      const post = r.remote_id
        ? postOf(
            await call(d, 'PUT', `/posts/${encodeURIComponent(r.remote_id)}/?source=html`, {
              posts: [{ ...fields, updated_at: (await current(d, r.remote_id)).updated_at }],
            }),
          )
        : postOf(await call(d, 'POST', '/posts/?source=html', { posts: [fields] }));
      return { remote_id: String(post.id), ...(typeof post.url === 'string' && { url: post.url }) };
    },
    async unpublish(d, p, mode) {
      if (!p.remote_id) return {};
      if (mode === 'delete') await call(d, 'DELETE', `/posts/${encodeURIComponent(p.remote_id)}/`);
      else
        await call(d, 'PUT', `/posts/${encodeURIComponent(p.remote_id)}/`, {
          posts: [{ status: 'draft', updated_at: (await current(d, p.remote_id)).updated_at }],
        });
      return {};
    },
  };
}
