import type { Logger } from 'pino';
import { type Clock, type IdGenerator } from '@kb/platform';
import type { Store } from '@kb/store';
import type { CommandBus } from '@kb/eventsourcing';
import { organizationDecider, organizationStream } from '../domain/organization.js';
import { userDecider, userStream } from '../domain/user.js';
import { apiKeyDecider, apiKeyStream } from '../domain/api-key.js';
import { creditsDecider, creditsStream } from '../domain/credits.js';
import { API_KEYS, API_KEY_HASHES, ORGANIZATIONS, type ApiKeyDoc } from '../projections/identity.js';
import { hashApiKey, hashPassword, keyHint } from '../auth/secrets.js';

export interface BootstrapSettings {
  BOOTSTRAP_ORG_NAME?: string | undefined;
  BOOTSTRAP_ADMIN_EMAIL?: string | undefined;
  BOOTSTRAP_ADMIN_PASSWORD?: string | undefined;
  BOOTSTRAP_API_KEY?: string | undefined;
  BOOTSTRAP_CREDITS: number;
}

export const slugify = (name: string): string =>
  name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63) || 'org';

export function createIdentityService(deps: { store: Store; commands: CommandBus; ids: IdGenerator; clock: Clock; logger: Logger }) {
  const { store, commands, ids, clock } = deps;

  return {
    /**
     * DESIGN section 6: on an empty store with every BOOTSTRAP_* value set, create the
     * organization, its admin, an unrestricted key with exactly that value, and credits.
     */
    async bootstrap(settings: BootstrapSettings): Promise<{ created: boolean; org_id?: string }> {
      const {
        BOOTSTRAP_ORG_NAME: name,
        BOOTSTRAP_ADMIN_EMAIL: email,
        BOOTSTRAP_ADMIN_PASSWORD: password,
        BOOTSTRAP_API_KEY: key,
      } = settings;
      if (!name || !email || !password || !key) return { created: false };
      if ((await store.count(ORGANIZATIONS)) > 0) return { created: false };
      const passwordHash = await hashPassword(password);
      const at = clock.now().toISOString();
      const orgId = ids.uuid();
      const userId = ids.uuid();
      const keyId = ids.uuid();
      const metadata = { org_id: orgId, actor: 'system:bootstrap' };
      await commands.transaction({ metadata }, async (s) => {
        if ((await s.tx.count(ORGANIZATIONS)) > 0) return;
        await s.execute(userDecider, userStream(userId), {
          type: 'register',
          user_id: userId,
          email,
          name: 'Administrator',
          password_hash: passwordHash,
          at,
        });
        await s.execute(organizationDecider, organizationStream(orgId), {
          type: 'create',
          org_id: orgId,
          name,
          slug: slugify(name),
          created_by: userId,
          at,
        });
        await s.execute(organizationDecider, organizationStream(orgId), {
          type: 'add_member',
          org_id: orgId,
          user_id: userId,
          role: 'admin',
          at,
        });
        await s.execute(apiKeyDecider, apiKeyStream(keyId), {
          type: 'create',
          key_id: keyId,
          org_id: orgId,
          name: 'Bootstrap key',
          key_hash: hashApiKey(key),
          hint: keyHint(key),
          folder_scope: null,
          created_by: userId,
          at,
        });
        await s.execute(creditsDecider, creditsStream(orgId), {
          type: 'grant',
          org_id: orgId,
          amount: settings.BOOTSTRAP_CREDITS,
          reason: 'bootstrap',
          at,
        });
      });
      deps.logger.info({ org_id: orgId }, 'bootstrap organization created');
      return { created: true, org_id: orgId };
    },

    /** Resolves a presented key; undefined when unknown or revoked (both are 401). */
    async findActiveApiKey(key: string): Promise<ApiKeyDoc | undefined> {
      const byHash = await store.get<{ id: string; key_id: string }>(API_KEY_HASHES, hashApiKey(key));
      if (!byHash) return undefined;
      const doc = await store.get<ApiKeyDoc>(API_KEYS, byHash.key_id);
      return doc && doc.revoked_at === null ? doc : undefined;
    },
  };
}

export type IdentityService = ReturnType<typeof createIdentityService>;
