import type { Projection } from '@kb/eventsourcing';
import type { ApiKeyCreated, CreditsGranted, MemberAdded, OrganizationCreated, UserRegistered } from '@kb/events';

export const ORGANIZATIONS = 'organizations';
export const USERS = 'users';
export const MEMBERSHIPS = 'memberships';
export const API_KEYS = 'api_keys';
/** Lookup by key hash: the only way a presented key is resolved. */
export const API_KEY_HASHES = 'api_key_hashes';
export const CREDIT_BALANCES = 'credit_balances';

export interface OrganizationDoc {
  id: string;
  org_id: string;
  name: string;
  slug: string;
  created_at: string;
  updated_at: string;
}

export interface UserDoc {
  id: string;
  user_id: string;
  email: string;
  email_key: string;
  name: string;
  password_hash: string;
  created_at: string;
}

export interface ApiKeyDoc {
  id: string;
  key_id: string;
  org_id: string;
  name: string;
  hint: string;
  folder_scope: string[] | null;
  created_by: string | null;
  created_at: string;
  revoked_at: string | null;
}

export interface CreditBalanceDoc {
  id: string;
  org_id: string;
  balance: number;
}

export const identityProjection: Projection = {
  name: 'identity',
  collections: [ORGANIZATIONS, USERS, MEMBERSHIPS, API_KEYS, API_KEY_HASHES, CREDIT_BALANCES],
  indexes: [
    { collection: USERS, fields: ['email_key'] },
    { collection: MEMBERSHIPS, fields: ['org_id'] },
    { collection: API_KEYS, fields: ['org_id'] },
  ],
  async apply(tx, event) {
    switch (event.type) {
      case 'organization.created': {
        const d = event.data as OrganizationCreated;
        const doc: OrganizationDoc = { id: d.org_id, org_id: d.org_id, name: d.name, slug: d.slug, created_at: d.at, updated_at: d.at };
        await tx.put(ORGANIZATIONS, doc);
        return;
      }
      case 'user.registered': {
        const d = event.data as UserRegistered;
        const doc: UserDoc = {
          id: d.user_id,
          user_id: d.user_id,
          email: d.email,
          email_key: d.email.toLowerCase(),
          name: d.name,
          password_hash: d.password_hash,
          created_at: d.at,
        };
        await tx.put(USERS, doc);
        return;
      }
      case 'member.added': {
        const d = event.data as MemberAdded;
        await tx.put(MEMBERSHIPS, { id: `${d.org_id}:${d.user_id}`, org_id: d.org_id, user_id: d.user_id, role: d.role, joined_at: d.at });
        return;
      }
      case 'api_key.created': {
        const d = event.data as ApiKeyCreated;
        const doc: ApiKeyDoc = {
          id: d.key_id,
          key_id: d.key_id,
          org_id: d.org_id,
          name: d.name,
          hint: d.hint,
          folder_scope: d.folder_scope,
          created_by: d.created_by,
          created_at: d.at,
          revoked_at: null,
        };
        await tx.put(API_KEYS, doc);
        await tx.put(API_KEY_HASHES, { id: d.key_hash, key_id: d.key_id });
        return;
      }
      case 'api_key.revoked': {
        const d = event.data as { key_id: string; at: string };
        const key = await tx.get<ApiKeyDoc>(API_KEYS, d.key_id);
        if (key) await tx.put(API_KEYS, { ...key, revoked_at: d.at });
        return;
      }
      case 'credits.granted': {
        const d = event.data as CreditsGranted;
        const current = await tx.get<CreditBalanceDoc>(CREDIT_BALANCES, d.org_id);
        await tx.put(CREDIT_BALANCES, { id: d.org_id, org_id: d.org_id, balance: (current?.balance ?? 0) + d.amount });
        return;
      }
      default:
        return;
    }
  },
};
