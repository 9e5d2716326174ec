import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errors, isAppError } from '@kb/platform';
import type { CallContext, RpcClient } from '@kb/rpc';
import type { ApiKeyService } from '../../app/api-keys.js';
import { callerOf } from '../auth-hook.js';
import { Pagination, Timestamp, Uuid, errorResponses } from '../schemas.js';

const manage = { auth: { credential: 'user', permission: 'manage:api_keys' } } as const;
const tags = ['API Keys'];

const CreatedKey = Type.Object({
  key: Type.String({ description: 'the secret: shown in this response only' }),
  key_id: Uuid,
  name: Type.String(),
  hint: Type.String(),
  folder_scope: Type.Union([Type.Array(Uuid), Type.Null()]),
  created_at: Timestamp,
  last_used_at: Type.Union([Timestamp, Type.Null()]),
  revoked_at: Type.Union([Timestamp, Type.Null()]),
});

/**
 * A folder scope names folders of the organization only: unknown ids and ids of
 * documents are one 400 naming each of them (a scope outside the caller's own is 403).
 */
export async function checkFolderScope(kbTree: RpcClient, ctx: CallContext, folderIds: string[]): Promise<void> {
  const unknown: string[] = [];
  const notFolders: string[] = [];
  for (const id of new Set(folderIds)) {
    try {
      await kbTree.call('CheckFolderAccess', { folder_id: id }, ctx);
    } catch (err) {
      if (isAppError(err) && err.kind === 'not_found') unknown.push(id);
      else if (isAppError(err) && err.kind === 'validation') notFolders.push(id);
      else throw err;
    }
  }
  if (unknown.length || notFolders.length) {
    const parts = [
      ...(unknown.length ? [`unknown folder ids: ${unknown.join(', ')}`] : []),
      ...(notFolders.length ? [`ids of documents, not folders: ${notFolders.join(', ')}`] : []),
    ];
    throw errors.validation(`folder_scope: ${parts.join('; ')}`, {
      code: 'invalid_folder_scope',
      details: { field: 'folder_scope', unknown_ids: unknown, not_folder_ids: notFolders },
    });
  }
}

/** The organization's API keys (signed-in users with manage:api_keys only). */
export function apiKeyRoutes(apiKeys: ApiKeyService, kbTree: RpcClient): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/org/api-keys',
      {
        config: manage,
        schema: {
          tags,
          summary: 'Create an API key',
          description:
            'The secret is returned once; only its hash is kept. folder_scope restricts the key to those knowledge-base folders ' +
            '(403 anywhere else in the KB, and on the whole KB when empty); left out or null, the key sees the whole KB. ' +
            'Every id must be a folder of the organization: unknown ids and ids of documents are 400, naming them. ' +
            'Keys never carry the user-only permissions (update:org, manage:*).',
          body: Type.Object(
            {
              name: Type.String({ minLength: 2, maxLength: 255 }),
              folder_scope: Type.Optional(Type.Union([Type.Array(Uuid, { maxItems: 100 }), Type.Null()])),
            },
            { additionalProperties: false },
          ),
          response: { 201: CreatedKey, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => {
        const ctx = callerOf(req);
        if (req.body.folder_scope) await checkFolderScope(kbTree, ctx, req.body.folder_scope);
        return reply.status(201).send(await apiKeys.create(ctx, req.body));
      },
    );

    app.get(
      '/org/api-keys',
      {
        config: manage,
        schema: {
          tags,
          summary: 'List the active API keys',
          description: 'Newest first, without secrets: a redacted hint and the last time each key was used. The total is in X-Total-Count.',
          querystring: Pagination,
          response: { 200: Type.Array(Type.Ref('ApiKey')), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => {
        const { items, total } = await apiKeys.list(callerOf(req), req.query);
        void reply.header('x-total-count', String(total));
        return items;
      },
    );

    app.delete(
      '/org/api-keys/:keyId',
      {
        config: manage,
        schema: {
          tags,
          summary: 'Revoke an API key',
          description: 'Effective at once, in every gateway process: the key gets 401 from the next request on.',
          params: Type.Object({ keyId: Uuid }),
          response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => {
        await apiKeys.revoke(callerOf(req), req.params.keyId);
        return reply.status(204).send(null);
      },
    );
  };
}
