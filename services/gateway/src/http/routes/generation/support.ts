import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import type { ServiceClients } from '../../../clients.js';
import { callerOf } from '../../auth-hook.js';
import { withSubfolders } from '../../intake-support.js';

/** What the generation routes share: the services they call, auth and metering, and small schema helpers. */

export type App = Parameters<FastifyPluginAsyncTypebox>[0];
export type Req = Parameters<typeof callerOf>[0];
export type GenerationClients = Pick<ServiceClients, 'generation' | 'prompts' | 'ingest' | 'kbTree' | 'publishingContent'>;

export const read = { auth: { credential: 'any', permission: 'read:kb' } } as const;
export const write = { auth: { credential: 'any', permission: 'generate:content' } } as const;
export const generate = { auth: { credential: 'any', permission: 'generate:content' }, meter: { operation: 'generation' } } as const;
export const verifyMeter = { auth: { credential: 'any', permission: 'read:kb' }, meter: { operation: 'query' } } as const;

export const Text = (max: number, description?: string) => Type.String({ maxLength: max, ...(description && { description }) });
export const Texts = (description: string, maxItems = 50, maxLength = 500) =>
  Type.Array(Type.String({ minLength: 1, maxLength }), { maxItems, description });

export type AutoPublish = { auto_publish?: unknown; publish_destination_ids?: unknown } | undefined;

/** Calls into the generation service (JSON over gRPC) and the checks several routes make before one. */
export function generationCalls(clients: GenerationClients) {
  const { generation } = clients;
  // Generation judges a folder-scoped caller by the folders its drafts and runs drew on, so it gets the scope with its
  // subfolders (an empty scope stays empty: it sees no draft or run, and settings such as content types still work).
  const call = async <T = unknown>(method: string, body: unknown, req: Req): Promise<T> => {
    const caller = callerOf(req);
    const ctx = caller.folder_scope?.length ? await withSubfolders(clients.kbTree, caller) : caller;
    const r = await generation.call<{ json?: string }>(method, { json: JSON.stringify(body ?? {}) }, ctx);
    return (r.json ? JSON.parse(r.json) : undefined) as T;
  };
  /**
   * Auto-publish with nobody to publish to is 422 where it is asked for (spec
   * section 7): when a content type switches it on, and when a run or an engine
   * rule will use such a content type. The publishing service says who would
   * publish (the named destinations, each enabled, or the default shared set).
   */
  const requirePublisher = async (req: Req, config: AutoPublish) => {
    if (config?.auto_publish !== true) return;
    const ids = Array.isArray(config.publish_destination_ids) ? config.publish_destination_ids : [];
    await clients.publishingContent.call('CheckPublishers', { json: JSON.stringify({ destination_ids: ids }) }, callerOf(req));
  };
  const requirePublisherOf = async (req: Req, contentTypeId: string) =>
    requirePublisher(req, (await call<{ config?: AutoPublish }>('GetContentType', { content_type_id: contentTypeId }, req)).config);
  /** A list call: the items, with the total in X-Total-Count. */
  const listed = async (method: string, body: unknown, req: Req, reply: FastifyReply) => {
    const r = await call<{ items: unknown[]; total_count: number }>(method, body, req);
    void reply.header('x-total-count', String(r.total_count));
    return r.items;
  };
  return { clients, call, requirePublisher, requirePublisherOf, listed };
}
export type GenerationCalls = ReturnType<typeof generationCalls>;
