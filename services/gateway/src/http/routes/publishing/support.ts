import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RpcClient } from '@kb/rpc';
import { callerOf } from '../../auth-hook.js';
import type { RouteAuth } from '../../route-auth.js';

/** What the publishing routes share: auth, the JSON proxy to the publishing service, and the open-object schema helper. */

export type App = Parameters<FastifyPluginAsyncTypebox>[0];

/** An object with the named fields documented; fields added later pass through. */
export const Open = (props: Record<string, TSchema>, id?: string) =>
  Type.Object(props, { additionalProperties: true, ...(id && { $id: id }) });

export const read: { auth: RouteAuth } = { auth: { credential: 'any', permission: 'read:kb' } };
export const submitAuth: { auth: RouteAuth } = { auth: { credential: 'any', permission: 'generate:content' } };
export const publish: { auth: RouteAuth } = { auth: { credential: 'any', permission: 'publish:content' } };
export const analytics: { auth: RouteAuth } = { auth: { credential: 'any', permission: 'read:analytics' } };
export const manage: { auth: RouteAuth } = { auth: { credential: 'any', permission: 'manage:destinations' } };

export interface Call {
  client: RpcClient;
  method: string;
  status?: number;
  /** Lists: the response is { items, total_count }; items are sent, the total goes in X-Total-Count. */
  list?: boolean;
}

/** A route that sends params, query and body merged as one JSON document and answers with the service's JSON. */
function proxy(c: Call, onWrite?: () => void) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const input = { ...(req.query as object), ...(req.body as object), ...(req.params as object) };
    let res: { json: string };
    try {
      res = await c.client.call<{ json: string }>(c.method, { json: JSON.stringify(input) }, callerOf(req));
    } finally {
      // A write that failed may still have changed something (a 502 after other destinations succeeded).
      // A dry run changes nothing.
      if (req.method !== 'GET' && (req.body as { dry_run?: unknown } | undefined)?.dry_run !== true) onWrite?.();
    }
    const out = JSON.parse(res.json) as unknown;
    if (c.status === 204) return reply.status(204).send(null);
    if (c.list) {
      const { items, total_count } = out as { items: unknown[]; total_count: number };
      void reply.header('x-total-count', String(total_count));
      return reply.status(c.status ?? 200).send(items);
    }
    return reply.status(c.status ?? 200).send(out);
  };
}

export interface PublishingClients {
  content: RpcClient;
  destinations: RpcClient;
  webhooks: RpcClient;
}

export type Proxy = (method: string, extra?: Partial<Call>) => ReturnType<typeof proxy>;

/** Route handlers per publishing gRPC service; writes through content and destinations clear cached hosted pages. */
export function publishingProxies(clients: PublishingClients, onSiteChange: () => void) {
  const content: Proxy = (method, extra = {}) => proxy({ client: clients.content, method, ...extra }, onSiteChange);
  const dest: Proxy = (method, extra = {}) => proxy({ client: clients.destinations, method, ...extra }, onSiteChange);
  const hook: Proxy = (method, extra = {}) => proxy({ client: clients.webhooks, method, ...extra });
  return { content, dest, hook };
}
export type PublishingProxies = ReturnType<typeof publishingProxies>;
