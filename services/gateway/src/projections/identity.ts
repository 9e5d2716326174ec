import type { Projection } from '@kb/eventsourcing';
import type { StoreTransaction } from '@kb/store';

export const ORGANIZATIONS = 'organizations';
/** Slug -> organization: inserting claims the slug, so a taken slug fails the whole transaction. */
export const ORG_SLUGS = 'org_slugs';
export const USERS = 'users';
/** Lower-cased email -> user: the same claim for email uniqueness. */
export const USER_EMAILS = 'user_emails';
export const MEMBERSHIPS = 'memberships';
export const ROLES = 'roles';
export const API_KEYS = 'api_keys';
/** Lookup by key hash: the only way a presented key is resolved. */
export const API_KEY_HASHES = 'api_key_hashes';
export const SESSIONS = 'sessions';
/** Lookup by token hash: the only way a presented session token is resolved. */
export const SESSION_TOKENS = 'session_tokens';

export interface OrganizationDoc {
  id: string;
  org_id: string;
  name: string;
  slug: string;
  websites: string[];
  locations: string[];
  runs_enabled: boolean;
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

export interface MembershipDoc {
  id: string;
  org_id: string;
  user_id: string;
  role_id: string;
  joined_at: string;
  status: 'active';
}

export interface RoleDoc {
  id: string;
  role_id: string;
  org_id: string;
  name: string;
  description: string;
  permissions: string[];
  built_in: boolean;
  created_at: string;
  updated_at: string;
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

export interface SessionDoc {
  id: string;
  session_id: string;
  user_id: string;
  org_id: string | null;
  expires_at: string;
  created_at: string;
  ended_at: string | null;
}

export const membershipId = (orgId: string, userId: string) => `${orgId}:${userId}`;

async function update<T extends { id: string }>(tx: StoreTransaction, collection: string, id: string, change: (doc: T) => T) {
  const doc = await tx.get<T>(collection, id);
  if (doc) await tx.put(collection, change(doc));
}

export const identityProjection: Projection = {
  name: 'identity',
  collections: [ORGANIZATIONS, ORG_SLUGS, USERS, USER_EMAILS, MEMBERSHIPS, ROLES, API_KEYS, API_KEY_HASHES, SESSIONS, SESSION_TOKENS],
  indexes: [
    { collection: USERS, fields: ['email_key'] },
    { collection: MEMBERSHIPS, fields: ['org_id'] },
    { collection: MEMBERSHIPS, fields: ['user_id'] },
    { collection: ROLES, fields: ['org_id'] },
    { collection: API_KEYS, fields: ['org_id'] },
  ],
  async apply(tx, event) {
    switch (event.type) {
      case 'organization.created': {
        const d = event.data;
        const doc: OrganizationDoc = {
          id: d.org_id,
          org_id: d.org_id,
          name: d.name,
          slug: d.slug,
          websites: [],
          locations: [],
          runs_enabled: true,
          created_at: d.at,
          updated_at: d.at,
        };
        await tx.put(ORGANIZATIONS, doc);
        await tx.insert(ORG_SLUGS, { id: d.slug, org_id: d.org_id });
        return;
      }
      case 'organization.updated': {
        const d = event.data;
        const org = await tx.get<OrganizationDoc>(ORGANIZATIONS, d.org_id);
        if (!org) return;
        if (d.slug !== undefined && d.slug !== org.slug) {
          await tx.delete(ORG_SLUGS, org.slug);
          await tx.insert(ORG_SLUGS, { id: d.slug, org_id: d.org_id });
        }
        const { org_id: _o, at, ...changes } = d;
        await tx.put(ORGANIZATIONS, { ...org, ...changes, updated_at: at });
        return;
      }
      case 'organization.runs_enabled_changed': {
        const d = event.data;
        await update<OrganizationDoc>(tx, ORGANIZATIONS, d.org_id, (o) => ({ ...o, runs_enabled: d.runs_enabled, updated_at: d.at }));
        return;
      }
      case 'user.registered': {
        const d = event.data;
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
        await tx.insert(USER_EMAILS, { id: doc.email_key, user_id: d.user_id });
        return;
      }
      case 'member.added': {
        const d = event.data;
        const doc: MembershipDoc = {
          id: membershipId(d.org_id, d.user_id),
          org_id: d.org_id,
          user_id: d.user_id,
          role_id: d.role_id,
          joined_at: d.at,
          status: 'active',
        };
        await tx.put(MEMBERSHIPS, doc);
        return;
      }
      case 'member.role_changed': {
        const d = event.data;
        await update<MembershipDoc>(tx, MEMBERSHIPS, membershipId(d.org_id, d.user_id), (m) => ({ ...m, role_id: d.role_id }));
        return;
      }
      case 'member.removed': {
        const d = event.data;
        await tx.delete(MEMBERSHIPS, membershipId(d.org_id, d.user_id));
        return;
      }
      case 'role.created': {
        const d = event.data;
        const doc: RoleDoc = {
          id: d.role_id,
          role_id: d.role_id,
          org_id: d.org_id,
          name: d.name,
          description: d.description,
          permissions: d.permissions,
          built_in: d.built_in,
          created_at: d.at,
          updated_at: d.at,
        };
        await tx.put(ROLES, doc);
        return;
      }
      case 'role.updated': {
        const { org_id: _o, role_id, at, ...changes } = event.data;
        await update<RoleDoc>(tx, ROLES, role_id, (r) => ({ ...r, ...changes, updated_at: at }));
        return;
      }
      case 'role.deleted': {
        const d = event.data;
        await tx.delete(ROLES, d.role_id);
        return;
      }
      case 'session.started': {
        const d = event.data;
        const doc: SessionDoc = {
          id: d.session_id,
          session_id: d.session_id,
          user_id: d.user_id,
          org_id: d.org_id,
          expires_at: d.expires_at,
          created_at: d.at,
          ended_at: null,
        };
        await tx.put(SESSIONS, doc);
        await tx.put(SESSION_TOKENS, { id: d.token_hash, session_id: d.session_id });
        return;
      }
      case 'session.org_switched': {
        const d = event.data;
        await update<SessionDoc>(tx, SESSIONS, d.session_id, (s) => ({ ...s, org_id: d.org_id }));
        return;
      }
      case 'session.ended': {
        const d = event.data;
        await update<SessionDoc>(tx, SESSIONS, d.session_id, (s) => ({ ...s, ended_at: d.at }));
        return;
      }
      case 'api_key.created': {
        const d = event.data;
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
        const d = event.data;
        await update<ApiKeyDoc>(tx, API_KEYS, d.key_id, (k) => ({ ...k, revoked_at: d.at }));
        return;
      }
      default:
        return;
    }
  },
};
