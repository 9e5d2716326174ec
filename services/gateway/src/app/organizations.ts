import { errors, type Clock, type IdGenerator } from '@kb/platform';
import type { Store } from '@kb/store';
import type { CommandBus } from '@kb/eventsourcing';
import type { CallContext } from '@kb/rpc';
import { organizationDecider, organizationStream, type OrganizationCommand, type ProfileChanges } from '../domain/organization.js';
import {
  MEMBERSHIPS,
  ORGANIZATIONS,
  ROLES,
  USERS,
  USER_EMAILS,
  membershipId,
  type MembershipDoc,
  type OrganizationDoc,
  type RoleDoc,
  type UserDoc,
} from '../projections/identity.js';
import { grantedBy, lacking, type Permission } from '../auth/permissions.js';
import { claimConflict } from './identity.js';

export const actorOf = (ctx: CallContext) => `${ctx.principal.type}:${ctx.principal.id}`;
const metadataOf = (ctx: CallContext) => ({ org_id: ctx.org_id, actor: actorOf(ctx), request_id: ctx.request_id });

/** OrgUserResponse: the user, their role, and the relationship. */
export interface OrgUser {
  user: { id: string; email: string; name: string };
  role: { role_id: string; name: string };
  joined_at: string;
  status: 'active';
}

export interface RoleView {
  role_id: string;
  name: string;
  description: string;
  permissions: string[];
  built_in: boolean;
  created_at: string;
  updated_at: string;
}

const roleView = (r: RoleDoc): RoleView => ({
  role_id: r.role_id,
  name: r.name,
  description: r.description,
  permissions: grantedBy(r),
  built_in: r.built_in,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

/**
 * No escalation: a caller only hands out, and only touches, what they hold themselves. Without
 * this, anyone with manage:users could make themselves admin, and anyone with manage:roles could
 * add any permission to their own role. Admins hold everything, so nothing changes for them.
 */
function requireHeld(ctx: CallContext, wanted: readonly string[], what: string): void {
  const missing = lacking(ctx.permissions, wanted);
  if (missing.length > 0) {
    throw errors.forbidden(`${what} carries ${missing.join(', ')}, which your own role does not grant`, {
      code: 'permission_escalation',
      details: { missing },
    });
  }
}

/** The organization profile, its members and its roles; every call is scoped to ctx.org_id. */
export function createOrganizationService(deps: {
  store: Store;
  commands: CommandBus;
  ids: IdGenerator;
  clock: Clock;
  /** After a member is removed: what they authorized in the organization ends (their OAuth grants). */
  onMemberRemoved?: (orgId: string, userId: string) => Promise<void>;
}) {
  const { store, commands, ids, clock } = deps;
  const now = () => clock.now().toISOString();

  async function execute(ctx: CallContext, command: OrganizationCommand) {
    await commands
      .transaction({ metadata: metadataOf(ctx) }, (s) => s.execute(organizationDecider, organizationStream(ctx.org_id), command))
      .catch(claimConflict);
  }

  async function getOrganization(ctx: CallContext): Promise<OrganizationDoc> {
    const org = await store.get<OrganizationDoc>(ORGANIZATIONS, ctx.org_id);
    if (!org) throw errors.notFound('Organization');
    return org;
  }

  async function orgUser(m: MembershipDoc): Promise<OrgUser> {
    const user = await store.get<UserDoc>(USERS, m.user_id);
    const role = await store.get<RoleDoc>(ROLES, m.role_id);
    return {
      user: { id: m.user_id, email: user?.email ?? '', name: user?.name ?? '' },
      role: { role_id: m.role_id, name: role?.name ?? '' },
      joined_at: m.joined_at,
      status: m.status,
    };
  }

  async function membership(ctx: CallContext, userId: string): Promise<MembershipDoc> {
    const m = await store.get<MembershipDoc>(MEMBERSHIPS, membershipId(ctx.org_id, userId));
    if (!m) throw errors.notFound('User');
    return m;
  }

  /** A role_id in a body must name one of this organization's roles. */
  async function requireRole(ctx: CallContext, roleId: string): Promise<RoleDoc> {
    const role = await store.get<RoleDoc>(ROLES, roleId);
    if (!role || role.org_id !== ctx.org_id) {
      throw errors.validation('role_id names no role of this organization', { code: 'unknown_role', details: { field: 'role_id' } });
    }
    return role;
  }

  /** The permissions a member holds now (nothing when their role is gone). */
  async function heldBy(m: MembershipDoc): Promise<string[]> {
    const role = await store.get<RoleDoc>(ROLES, m.role_id);
    return role ? grantedBy(role) : [];
  }

  async function getRole(ctx: CallContext, roleId: string): Promise<RoleDoc> {
    const role = await store.get<RoleDoc>(ROLES, roleId);
    if (!role || role.org_id !== ctx.org_id) throw errors.notFound('Role');
    return role;
  }

  async function listUsers(ctx: CallContext, page: { limit: number; offset: number }): Promise<{ items: OrgUser[]; total: number }> {
    const where = { org_id: ctx.org_id };
    const [memberships, total] = await Promise.all([
      store.find<MembershipDoc>(MEMBERSHIPS, {
        where,
        sort: [
          { field: 'joined_at', order: 'asc' },
          { field: 'id', order: 'asc' },
        ],
        ...page,
      }),
      store.count(MEMBERSHIPS, where),
    ]);
    return { items: await Promise.all(memberships.map(orgUser)), total };
  }

  return {
    getOrganization,

    async updateOrganization(ctx: CallContext, changes: ProfileChanges): Promise<OrganizationDoc> {
      await getOrganization(ctx);
      await execute(ctx, { type: 'update_profile', org_id: ctx.org_id, changes, at: now() });
      return getOrganization(ctx);
    },

    async setRunsEnabled(ctx: CallContext, runsEnabled: boolean): Promise<OrganizationDoc> {
      await getOrganization(ctx);
      await execute(ctx, { type: 'set_runs_enabled', org_id: ctx.org_id, runs_enabled: runsEnabled, at: now() });
      return getOrganization(ctx);
    },

    listUsers,

    async getUser(ctx: CallContext, userId: string): Promise<OrgUser> {
      return orgUser(await membership(ctx, userId));
    },

    /** Adds an existing user, named by id or email, with one of the organization's roles. */
    async addUser(
      ctx: CallContext,
      input: { user_id?: string | undefined; email?: string | undefined; role_id: string },
    ): Promise<OrgUser> {
      let userId = input.user_id;
      if (userId === undefined && input.email !== undefined) {
        userId = (await store.get<{ id: string; user_id: string }>(USER_EMAILS, input.email.trim().toLowerCase()))?.user_id;
      }
      if (!userId || !(await store.get<UserDoc>(USERS, userId))) throw errors.notFound('User');
      await getOrganization(ctx);
      requireHeld(ctx, grantedBy(await requireRole(ctx, input.role_id)), 'That role');
      await execute(ctx, { type: 'add_member', org_id: ctx.org_id, user_id: userId, role_id: input.role_id, at: now() });
      return orgUser(await membership(ctx, userId));
    },

    async changeUserRole(ctx: CallContext, userId: string, roleId: string): Promise<OrgUser> {
      requireHeld(ctx, await heldBy(await membership(ctx, userId)), "That user's current role");
      requireHeld(ctx, grantedBy(await requireRole(ctx, roleId)), 'That role');
      await execute(ctx, { type: 'change_member_role', org_id: ctx.org_id, user_id: userId, role_id: roleId, at: now() });
      return orgUser(await membership(ctx, userId));
    },

    async removeUser(ctx: CallContext, userId: string): Promise<void> {
      requireHeld(ctx, await heldBy(await membership(ctx, userId)), "That user's role");
      await execute(ctx, { type: 'remove_member', org_id: ctx.org_id, user_id: userId, at: now() });
      await deps.onMemberRemoved?.(ctx.org_id, userId);
    },

    /** Members: who belongs to the organization, with their role and what it allows. */
    async listMembers(ctx: CallContext, page: { limit: number; offset: number }) {
      const { items, total } = await listUsers(ctx, page);
      const roles = await store.find<RoleDoc>(ROLES, { where: { org_id: ctx.org_id } });
      const granted = new Map(roles.map((r) => [r.role_id, grantedBy(r)]));
      return {
        total,
        items: items.map((u) => ({
          user_id: u.user.id,
          email: u.user.email,
          name: u.user.name,
          role_id: u.role.role_id,
          role_name: u.role.name,
          permissions: granted.get(u.role.role_id) ?? [],
          joined_at: u.joined_at,
          status: u.status,
        })),
      };
    },

    async listRoles(ctx: CallContext): Promise<RoleView[]> {
      const roles = await store.find<RoleDoc>(ROLES, {
        where: { org_id: ctx.org_id },
        sort: [
          { field: 'created_at', order: 'asc' },
          { field: 'name', order: 'asc' },
        ],
      });
      return roles.map(roleView);
    },

    async getRole(ctx: CallContext, roleId: string): Promise<RoleView> {
      return roleView(await getRole(ctx, roleId));
    },

    async createRole(
      ctx: CallContext,
      input: { name: string; description?: string | undefined; permissions: Permission[] },
    ): Promise<RoleView> {
      const roleId = ids.uuid();
      await getOrganization(ctx);
      requireHeld(ctx, input.permissions, 'The new role');
      await execute(ctx, {
        type: 'create_role',
        org_id: ctx.org_id,
        role_id: roleId,
        name: input.name.trim(),
        description: input.description ?? '',
        permissions: [...new Set(input.permissions)],
        at: now(),
      });
      return roleView(await getRole(ctx, roleId));
    },

    async updateRole(
      ctx: CallContext,
      roleId: string,
      input: { name?: string | undefined; description?: string | undefined; permissions?: Permission[] | undefined },
    ): Promise<RoleView> {
      const role = await getRole(ctx, roleId);
      requireHeld(ctx, grantedBy(role), 'That role');
      if (input.permissions !== undefined) requireHeld(ctx, input.permissions, 'The changed role');
      await execute(ctx, {
        type: 'update_role',
        org_id: ctx.org_id,
        role_id: roleId,
        ...(input.name !== undefined && { name: input.name.trim() }),
        ...(input.description !== undefined && { description: input.description }),
        ...(input.permissions !== undefined && { permissions: [...new Set(input.permissions)] }),
        at: now(),
      });
      return roleView(await getRole(ctx, roleId));
    },

    async deleteRole(ctx: CallContext, roleId: string): Promise<void> {
      await getRole(ctx, roleId);
      await execute(ctx, { type: 'delete_role', org_id: ctx.org_id, role_id: roleId, at: now() });
    },
  };
}

export type OrganizationService = ReturnType<typeof createOrganizationService>;
