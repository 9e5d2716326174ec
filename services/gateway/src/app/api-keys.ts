import { errors, type Clock, type IdGenerator } from '@kb/platform';
import type { Store } from '@kb/store';
import type { CommandBus } from '@kb/eventsourcing';
import type { CallContext } from '@kb/rpc';
import { apiKeyDecider, apiKeyStream } from '../domain/api-key.js';
import { API_KEYS, type ApiKeyDoc } from '../projections/identity.js';
import { hashApiKey, keyHint, newApiKey } from '../auth/secrets.js';
import { actorOf } from './organizations.js';

/**
 * When each key was last used. Not a projection (usage is not a domain fact and
 * would be too chatty as events); written at most once per interval per key.
 */
export const API_KEY_USAGE = 'api_key_usage';
const USAGE_WRITE_INTERVAL_MS = 60_000;

export interface ApiKeyView {
  key_id: string;
  name: string;
  /** The first and last characters of the secret, to recognise it. */
  hint: string;
  folder_scope: string[] | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export function createApiKeyService(deps: { store: Store; commands: CommandBus; ids: IdGenerator; clock: Clock }) {
  const { store, commands, ids, clock } = deps;
  const lastWritten = new Map<string, number>();

  async function view(doc: ApiKeyDoc): Promise<ApiKeyView> {
    const usage = await store.get<{ id: string; last_used_at: string }>(API_KEY_USAGE, doc.key_id);
    return {
      key_id: doc.key_id,
      name: doc.name,
      hint: doc.hint,
      folder_scope: doc.folder_scope,
      created_at: doc.created_at,
      last_used_at: usage?.last_used_at ?? null,
      revoked_at: doc.revoked_at,
    };
  }

  return {
    /** The secret is in this answer only; the store keeps its hash. */
    async create(
      ctx: CallContext,
      input: { name: string; folder_scope?: string[] | null | undefined },
    ): Promise<ApiKeyView & { key: string }> {
      const key = newApiKey();
      const keyId = ids.uuid();
      const at = clock.now().toISOString();
      await commands.transaction({ metadata: { org_id: ctx.org_id, actor: actorOf(ctx), request_id: ctx.request_id } }, (s) =>
        s.execute(apiKeyDecider, apiKeyStream(keyId), {
          type: 'create',
          key_id: keyId,
          org_id: ctx.org_id,
          name: input.name.trim(),
          key_hash: hashApiKey(key),
          hint: keyHint(key),
          folder_scope: input.folder_scope === undefined || input.folder_scope === null ? null : [...new Set(input.folder_scope)],
          created_by: ctx.principal.type === 'user' ? ctx.principal.id : null,
          at,
        }),
      );
      const doc = await store.get<ApiKeyDoc>(API_KEYS, keyId);
      if (!doc) throw errors.internal('API key vanished after creation');
      return { ...(await view(doc)), key };
    },

    /** Active keys, newest first; revoked ones are gone from the list. */
    async list(ctx: CallContext, page: { limit: number; offset: number }): Promise<{ items: ApiKeyView[]; total: number }> {
      const where = { org_id: ctx.org_id, revoked_at: null };
      const [docs, total] = await Promise.all([
        store.find<ApiKeyDoc>(API_KEYS, {
          where,
          sort: [
            { field: 'created_at', order: 'desc' },
            { field: 'id', order: 'asc' },
          ],
          ...page,
        }),
        store.count(API_KEYS, where),
      ]);
      return { items: await Promise.all(docs.map(view)), total };
    },

    /** Effective at once: every process resolves keys from the store on each request. */
    async revoke(ctx: CallContext, keyId: string): Promise<void> {
      const doc = await store.get<ApiKeyDoc>(API_KEYS, keyId);
      if (!doc || doc.org_id !== ctx.org_id || doc.revoked_at !== null) throw errors.notFound('API key');
      await commands.transaction({ metadata: { org_id: ctx.org_id, actor: actorOf(ctx), request_id: ctx.request_id } }, (s) =>
        s.execute(apiKeyDecider, apiKeyStream(keyId), { type: 'revoke', key_id: keyId, org_id: ctx.org_id, at: clock.now().toISOString() }),
      );
    },

    /** Notes a use of the key (best effort, throttled per process). */
    async recordUse(keyId: string): Promise<void> {
      const now = clock.now();
      if (now.getTime() - (lastWritten.get(keyId) ?? 0) < USAGE_WRITE_INTERVAL_MS) return;
      lastWritten.set(keyId, now.getTime());
      await store.transaction((tx) => tx.put(API_KEY_USAGE, { id: keyId, last_used_at: now.toISOString() }));
    },
  };
}

export type ApiKeyService = ReturnType<typeof createApiKeyService>;
