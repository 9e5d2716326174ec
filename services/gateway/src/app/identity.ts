import type { Logger } from 'pino';
import { errors, type Clock, type IdGenerator } from '@kb/platform';
import { DuplicateKeyError, type EventMetadata, type Store } from '@kb/store';
import type { CommandBus } from '@kb/eventsourcing';
import { organizationDecider, organizationStream } from '../domain/organization.js';
import { userDecider, userStream } from '../domain/user.js';
import { apiKeyDecider, apiKeyStream } from '../domain/api-key.js';
import { creditsDecider, creditsStream } from '../domain/credits.js';
import { sessionDecider, sessionStream } from '../domain/session.js';
import {
  API_KEYS,
  API_KEY_HASHES,
  MEMBERSHIPS,
  ORGANIZATIONS,
  ORG_SLUGS,
  ROLES,
  SESSIONS,
  SESSION_TOKENS,
  USERS,
  USER_EMAILS,
  membershipId,
  type ApiKeyDoc,
  type MembershipDoc,
  type OrganizationDoc,
  type RoleDoc,
  type SessionDoc,
  type UserDoc,
} from '../projections/identity.js';
import { hashApiKey, hashPassword, hashToken, keyHint, newSessionToken, verifyPassword } from '../auth/secrets.js';
import { grantedBy, type BuiltInRole } from '../auth/permissions.js';

export interface BootstrapSettings {
  BOOTSTRAP_ORG_NAME?: string | undefined;
  BOOTSTRAP_ADMIN_EMAIL?: string | undefined;
  BOOTSTRAP_ADMIN_PASSWORD?: string | undefined;
  BOOTSTRAP_API_KEY?: string | undefined;
  BOOTSTRAP_CREDITS: number;
}

/** Events that belong to no organization (a user before joining one, sessions) carry this org id. */
export const NO_ORG = '00000000-0000-0000-0000-000000000000';

export const slugify = (name: string): string =>
  name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, 63)
    .replace(/^-+|-+$/g, '') || 'org';

/** `base` with a short suffix, still a valid slug of at most 63 characters. */
export const suffixedSlug = (base: string, suffix: string): string => `${base.slice(0, 62 - suffix.length).replace(/-+$/, '')}-${suffix}`;

/** How often a derived slug is tried again after another organization claimed it first. */
const SLUG_ATTEMPTS = 4;

export interface PublicUser {
  user_id: string;
  email: string;
  name: string;
  created_at: string;
}

export const publicUser = (u: UserDoc): PublicUser => ({ user_id: u.user_id, email: u.email, name: u.name, created_at: u.created_at });

/** A resolved, open session and what it may do in its current organization. */
export interface ResolvedSession {
  session_id: string;
  user_id: string;
  /** null when the user belongs to no organization yet, or left the session's one. */
  org_id: string | null;
  permissions: string[];
  expires_at: string;
}

/** A slug or email claim that lost a race (or was simply taken) is a 409. */
export function claimConflict(err: unknown): never {
  if (err instanceof DuplicateKeyError) {
    if (err.collection === USER_EMAILS) throw errors.conflict('A user with this email exists', { code: 'email_taken' });
    throw errors.conflict('This slug is taken by another organization', { code: 'slug_taken', details: { field: 'slug' } });
  }
  throw err;
}

const BOOTSTRAP_VARIABLES = ['BOOTSTRAP_ORG_NAME', 'BOOTSTRAP_ADMIN_EMAIL', 'BOOTSTRAP_ADMIN_PASSWORD', 'BOOTSTRAP_API_KEY'] as const;

/** What an operator of a gateway on an empty store can do to get a first organization, admin and key. */
export const firstOrganizationAdvice = (missing: readonly string[]): string =>
  `No organization exists yet and ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not set, so no API key works. ` +
  `To create the first organization, its admin and an API key, set ${BOOTSTRAP_VARIABLES.join(', ')} ` +
  '(password of 12+ characters; the key is used exactly as given) and restart the gateway; ' +
  'or sign up with POST /api/v1/auth/signup, log in with POST /api/v1/auth/login, then create an organization with ' +
  'POST /api/v1/orgs and a key with POST /api/v1/org/api-keys';

export function createIdentityService(deps: {
  store: Store;
  commands: CommandBus;
  ids: IdGenerator;
  clock: Clock;
  logger: Logger;
  /** How long a session token stays valid. */
  sessionTtlSeconds: number;
}) {
  const { store, commands, ids, clock } = deps;
  // Compared against when the email is unknown, so a miss costs as much as a wrong password.
  const dummyHash = hashPassword('not-a-real-password-just-timing');

  async function permissionsIn(orgId: string, userId: string): Promise<string[] | undefined> {
    const membership = await store.get<MembershipDoc>(MEMBERSHIPS, membershipId(orgId, userId));
    if (!membership) return undefined;
    const role = await store.get<RoleDoc>(ROLES, membership.role_id);
    return role ? grantedBy(role) : [];
  }

  async function createOrganizationIn(
    s: Parameters<Parameters<CommandBus['transaction']>[1]>[0],
    input: { org_id: string; name: string; slug: string; created_by: string | null; at: string },
  ) {
    const roleIds: Record<BuiltInRole, string> = { admin: ids.uuid(), collaborator: ids.uuid(), viewer: ids.uuid() };
    await s.execute(organizationDecider, organizationStream(input.org_id), { type: 'create', ...input, role_ids: roleIds });
  }

  async function organizationsOf(userId: string) {
    const memberships = await store.find<MembershipDoc>(MEMBERSHIPS, {
      where: { user_id: userId },
      sort: [{ field: 'joined_at', order: 'asc' }],
    });
    const out: { org_id: string; name: string; slug: string; role_id: string; role_name: string; joined_at: string }[] = [];
    for (const m of memberships) {
      const org = await store.get<OrganizationDoc>(ORGANIZATIONS, m.org_id);
      const role = await store.get<RoleDoc>(ROLES, m.role_id);
      if (org)
        out.push({
          org_id: org.org_id,
          name: org.name,
          slug: org.slug,
          role_id: m.role_id,
          role_name: role?.name ?? '',
          joined_at: m.joined_at,
        });
    }
    return out;
  }

  /** The signed-in user, the session's current organization and their permissions there, and every organization they belong to. */
  /** A new session of a user (its token once), acting in orgId, for ttlSeconds. */
  async function startSession(userId: string, orgId: string | null, ttlSeconds: number) {
    const token = newSessionToken();
    const sessionId = ids.uuid();
    const now = clock.now();
    const expiresAt = new Date(now.getTime() + ttlSeconds * 1000).toISOString();
    await commands.transaction({ metadata: { org_id: orgId ?? NO_ORG, actor: `user:${userId}` } }, (s) =>
      s.execute(sessionDecider, sessionStream(sessionId), {
        type: 'start',
        session_id: sessionId,
        user_id: userId,
        org_id: orgId,
        token_hash: hashToken(token),
        expires_at: expiresAt,
        at: now.toISOString(),
      }),
    );
    return { token, expires_at: expiresAt };
  }

  async function me(session: ResolvedSession) {
    const user = await store.get<UserDoc>(USERS, session.user_id);
    if (!user) throw errors.unauthenticated('Unknown user');
    const organizations = await organizationsOf(session.user_id);
    const current = session.org_id ? await store.get<OrganizationDoc>(ORGANIZATIONS, session.org_id) : undefined;
    return {
      user: publicUser(user),
      organization: current ?? null,
      permissions: session.permissions,
      organizations,
      session_expires_at: session.expires_at,
    };
  }

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
      const missing = BOOTSTRAP_VARIABLES.filter((variable) => !settings[variable]);
      if ((await store.count(ORGANIZATIONS)) > 0) return { created: false };
      if (!name || !email || !password || !key) {
        // Otherwise a fresh deployment starts with nobody able to call it, and says nothing.
        deps.logger.warn({ missing }, firstOrganizationAdvice(missing));
        return { created: false };
      }
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
        await createOrganizationIn(s, { org_id: orgId, name, slug: slugify(name), created_by: userId, at });
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
        if (settings.BOOTSTRAP_CREDITS > 0) {
          await s.execute(creditsDecider, creditsStream(orgId), {
            type: 'grant',
            org_id: orgId,
            amount: settings.BOOTSTRAP_CREDITS,
            reason: 'bootstrap',
            at,
          });
        }
      });
      deps.logger.info({ org_id: orgId }, 'bootstrap organization created');
      return { created: true, org_id: orgId };
    },

    async signup(input: { email: string; password: string; name: string }): Promise<PublicUser> {
      const email = input.email.trim();
      // Hashed first, so a taken email costs as much time as a new one (signup does not reveal it).
      const password_hash = await hashPassword(input.password);
      if (await store.get(USER_EMAILS, email.toLowerCase()))
        throw errors.conflict('A user with this email exists', { code: 'email_taken' });
      const userId = ids.uuid();
      const at = clock.now().toISOString();
      await commands
        .transaction({ metadata: { org_id: NO_ORG, actor: `user:${userId}` } }, (s) =>
          s.execute(userDecider, userStream(userId), {
            type: 'register',
            user_id: userId,
            email,
            name: input.name.trim(),
            password_hash,
            at,
          }),
        )
        .catch(claimConflict);
      return { user_id: userId, email, name: input.name.trim(), created_at: at };
    },

    /** Email and password to a new session in the user's first organization (or none yet). */
    async login(input: { email: string; password: string }) {
      const claim = await store.get<{ id: string; user_id: string }>(USER_EMAILS, input.email.trim().toLowerCase());
      const user = claim ? await store.get<UserDoc>(USERS, claim.user_id) : undefined;
      const ok = await verifyPassword(input.password, user?.password_hash ?? (await dummyHash));
      if (!user || !ok) throw errors.unauthenticated('Wrong email or password', { code: 'invalid_login' });
      const orgs = await organizationsOf(user.user_id);
      const orgId = orgs[0]?.org_id ?? null;
      const { token, expires_at: expiresAt } = await startSession(user.user_id, orgId, deps.sessionTtlSeconds);
      const organization = orgId ? await store.get<OrganizationDoc>(ORGANIZATIONS, orgId) : undefined;
      return { token, token_type: 'Bearer' as const, expires_at: expiresAt, user: publicUser(user), organization: organization ?? null };
    },

    /**
     * Trades a session for a short one of the same user and organization, ending
     * the first: the OAuth consent page holds only a session that soon expires.
     */
    async shortSessionFor(session: ResolvedSession, ttlSeconds: number): Promise<string> {
      const short = await startSession(session.user_id, session.org_id, Math.min(ttlSeconds, deps.sessionTtlSeconds));
      await this.logout(session);
      return short.token;
    },

    async logout(session: ResolvedSession): Promise<void> {
      await commands.transaction({ metadata: { org_id: session.org_id ?? NO_ORG, actor: `user:${session.user_id}` } }, (s) =>
        s.execute(sessionDecider, sessionStream(session.session_id), {
          type: 'end',
          session_id: session.session_id,
          at: clock.now().toISOString(),
        }),
      );
    },

    me,

    async switchOrganization(session: ResolvedSession, orgId: string) {
      if (!(await permissionsIn(orgId, session.user_id))) throw errors.notFound('Organization');
      await commands.transaction({ metadata: { org_id: orgId, actor: `user:${session.user_id}` } }, (s) =>
        s.execute(sessionDecider, sessionStream(session.session_id), {
          type: 'switch_org',
          session_id: session.session_id,
          org_id: orgId,
          at: clock.now().toISOString(),
        }),
      );
      return me({ ...session, org_id: orgId, permissions: (await permissionsIn(orgId, session.user_id)) ?? [] });
    },

    /**
     * A new organization with its built-in roles; the creator is its admin and the session switches to it.
     * A slug the caller chose must be free (409). One derived from the name is made free instead: two
     * organizations may well share a name, and a newcomer should not get a 409 for a field they never sent.
     */
    async createOrganization(session: ResolvedSession, input: { name: string; slug?: string | undefined }): Promise<OrganizationDoc> {
      const orgId = ids.uuid();
      const at = clock.now().toISOString();
      const name = input.name.trim();
      const metadata: EventMetadata = { org_id: orgId, actor: `user:${session.user_id}` };
      const base = slugify(name);
      for (let attempt = 1; ; attempt++) {
        let slug = input.slug ?? base;
        if (input.slug === undefined && (attempt > 1 || (await store.get(ORG_SLUGS, base)))) {
          slug = suffixedSlug(base, ids.uuid().replace(/-/g, '').slice(0, 6));
        }
        try {
          await commands.transaction({ metadata }, async (s) => {
            await createOrganizationIn(s, { org_id: orgId, name, slug, created_by: session.user_id, at });
            await s.execute(sessionDecider, sessionStream(session.session_id), {
              type: 'switch_org',
              session_id: session.session_id,
              org_id: orgId,
              at,
            });
          });
          break;
        } catch (err) {
          const slugLost = err instanceof DuplicateKeyError && err.collection === ORG_SLUGS;
          if (!slugLost || input.slug !== undefined || attempt >= SLUG_ATTEMPTS) claimConflict(err);
        }
      }
      const org = await store.get<OrganizationDoc>(ORGANIZATIONS, orgId);
      if (!org) throw errors.internal('Organization vanished after creation');
      return org;
    },

    /** Resolves a presented key; undefined when unknown or revoked (both are 401). */
    async findActiveApiKey(key: string): Promise<ApiKeyDoc | undefined> {
      const byHash = await store.get<{ id: string; key_id: string }>(API_KEY_HASHES, hashApiKey(key));
      if (!byHash) return undefined;
      const doc = await store.get<ApiKeyDoc>(API_KEYS, byHash.key_id);
      return doc && doc.revoked_at === null ? doc : undefined;
    },

    /** A member's permissions in an organization (their role's), undefined when not a member (OAuth grants act with them). */
    memberPermissions: (orgId: string, userId: string) => permissionsIn(orgId, userId),

    /** Resolves a presented session token; undefined when unknown, ended or expired (all 401). */
    async findOpenSession(token: string): Promise<ResolvedSession | undefined> {
      const byHash = await store.get<{ id: string; session_id: string }>(SESSION_TOKENS, hashToken(token));
      if (!byHash) return undefined;
      const session = await store.get<SessionDoc>(SESSIONS, byHash.session_id);
      if (!session || session.ended_at !== null || Date.parse(session.expires_at) <= clock.now().getTime()) return undefined;
      const permissions = session.org_id ? await permissionsIn(session.org_id, session.user_id) : undefined;
      return {
        session_id: session.session_id,
        user_id: session.user_id,
        // A user removed from the session's organization no longer acts in it.
        org_id: permissions ? session.org_id : null,
        permissions: permissions ?? [],
        expires_at: session.expires_at,
      };
    },
  };
}

export type IdentityService = ReturnType<typeof createIdentityService>;
