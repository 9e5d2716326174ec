import { errors } from '@kb/platform';
import type { DestinationAdapter, ResolvedDestination } from './port.js';
import type { OutboundPolicy } from '@kb/platform/outbound';
import { closedConfig, destinationUrl, remoteFailure, unreachable } from './config.js';

/**
 * WordPress over its REST API (wp-json/wp/v2/posts) with an application password
 * (HTTP Basic). Publish creates a post, republish updates it, unpublish turns it
 * back into a draft, delete deletes it for good.
 */
export function createWordPressAdapter(options: { timeoutMs: number; policy: OutboundPolicy; fetch?: typeof fetch }): DestinationAdapter {
  const doFetch = options.fetch ?? fetch;

  async function call(d: ResolvedDestination, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
    const base = String(d.config.base_url).replace(/\/+$/, '');
    const auth = Buffer.from(`${String(d.config.username)}:${d.secret ?? ''}`).toString('base64');
    let res: Response;
    try {
      res = await doFetch(`${base}/wp-json/wp/v2${path}`, {
        method,
        headers: {
          authorization: `Basic ${auth}`,
          accept: 'application/json',
          ...(body !== undefined && { 'content-type': 'application/json' }),
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(options.timeoutMs),
      });
    } catch (err) {
      throw unreachable('WordPress', base, err);
    }
    if (!res.ok) throw remoteFailure('WordPress', res);
    const text = await res.text();
    try {
      return JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw errors.downstream('WordPress answered with something that is not JSON', { code: 'destination_failed' });
    }
  }

  return {
    type: 'wordpress',
    secret: 'required',
    validateConfig: (config) =>
      closedConfig(config, {
        base_url: { required: true, check: destinationUrl(options.policy), hint: 'the site URL, e.g. https://blog.example.com' },
        username: { required: true, check: (v) => typeof v === 'string' && v.length > 0 && v.length <= 200, hint: 'a WordPress user name' },
      }),
    async publish(d, r) {
      const post = { title: r.draft.title, content: r.html, excerpt: r.draft.description, slug: r.slug, status: 'publish' };
      const res = r.remote_id
        ? await call(d, 'POST', `/posts/${encodeURIComponent(r.remote_id)}`, post)
        : await call(d, 'POST', '/posts', post);
      if (res.id === undefined) throw errors.downstream('WordPress answered without a post id', { code: 'destination_failed' });
      return { remote_id: String(res.id), ...(typeof res.link === 'string' && { url: res.link }) };
    },
    async unpublish(d, p, mode) {
      if (!p.remote_id) return {};
      if (mode === 'delete') await call(d, 'DELETE', `/posts/${encodeURIComponent(p.remote_id)}?force=true`);
      else await call(d, 'POST', `/posts/${encodeURIComponent(p.remote_id)}`, { status: 'draft' });
      return {};
    },
  };
}
