import { errors } from '@kb/platform';
import type { DecidedEvent, Decider, Stored } from '@kb/eventsourcing';
import type { EventsNamed } from '@kb/events';
import { builtInRoles, type BuiltInRole, type Permission } from '../auth/permissions.js';

/**
 * The organization aggregate: its profile, its roles (own copies of the built-in
 * ones plus custom roles) and its members. Roles and members live in one stream
 * so the invariants that tie them together (a role in use cannot go, the last
 * admin cannot leave) are decided on one consistent state.
 */
export interface RoleState {
  name: string;
  built_in: boolean;
  permissions: string[];
  description: string;
}

export interface OrganizationState {
  exists: boolean;
  name: string;
  slug: string;
  websites: string[];
  locations: string[];
  runs_enabled: boolean;
  roles: Record<string, RoleState>;
  /** user_id -> role_id */
  members: Record<string, string>;
}

export interface ProfileChanges {
  name?: string;
  slug?: string;
  websites?: string[];
  locations?: string[];
}

export type OrganizationCommand =
  | {
      type: 'create';
      org_id: string;
      name: string;
      slug: string;
      /** The user who becomes the first admin (null: a system-created organization without one). */
      created_by: string | null;
      /** Ids for the organization's copies of the built-in roles. */
      role_ids: Record<BuiltInRole, string>;
      at: string;
    }
  | { type: 'update_profile'; org_id: string; changes: ProfileChanges; at: string }
  | { type: 'set_runs_enabled'; org_id: string; runs_enabled: boolean; at: string }
  | { type: 'add_member'; org_id: string; user_id: string; role_id: string; at: string }
  | { type: 'change_member_role'; org_id: string; user_id: string; role_id: string; at: string }
  | { type: 'remove_member'; org_id: string; user_id: string; at: string }
  | { type: 'create_role'; org_id: string; role_id: string; name: string; description: string; permissions: Permission[]; at: string }
  | {
      type: 'update_role';
      org_id: string;
      role_id: string;
      name?: string;
      description?: string;
      permissions?: Permission[];
      at: string;
    }
  | { type: 'delete_role'; org_id: string; role_id: string; at: string };

export const organizationStream = (orgId: string) => `organization-${orgId}`;

const sameName = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase();
const sameList = (a: string[], b: string[]) => a.length === b.length && a.every((v, i) => v === b[i]);

export function adminRoleId(state: OrganizationState): string | undefined {
  return Object.entries(state.roles).find(([, r]) => r.built_in && r.name === 'admin')?.[0];
}

function requireRole(state: OrganizationState, roleId: string): RoleState {
  const role = state.roles[roleId];
  if (!role) throw errors.validation('role_id names no role of this organization', { code: 'unknown_role', details: { field: 'role_id' } });
  return role;
}

/** Whether taking `userId` out of the admin role would leave the organization without one. */
function isLastAdmin(state: OrganizationState, userId: string): boolean {
  const admin = adminRoleId(state);
  if (state.members[userId] !== admin) return false;
  return Object.values(state.members).filter((r) => r === admin).length === 1;
}

function decide(command: OrganizationCommand, state: OrganizationState): DecidedEvent[] {
  if (command.type === 'create') {
    if (state.exists) throw errors.conflict('Organization already exists');
    const { org_id, at } = command;
    const events: DecidedEvent[] = [
      { type: 'organization.created', data: { org_id, name: command.name, slug: command.slug, created_by: command.created_by, at } },
    ];
    for (const [name, permissions] of Object.entries(builtInRoles) as [BuiltInRole, Permission[]][]) {
      events.push({
        type: 'role.created',
        data: { org_id, role_id: command.role_ids[name], name, description: `Built-in ${name} role`, permissions, built_in: true, at },
      });
    }
    if (command.created_by) {
      events.push({ type: 'member.added', data: { org_id, user_id: command.created_by, role_id: command.role_ids.admin, at } });
    }
    return events;
  }
  if (!state.exists) throw errors.notFound('Organization');
  const { org_id, at } = command;
  switch (command.type) {
    case 'update_profile': {
      const c = command.changes;
      const changed: Record<string, unknown> = {};
      if (c.name !== undefined && c.name !== state.name) changed.name = c.name;
      if (c.slug !== undefined && c.slug !== state.slug) changed.slug = c.slug;
      if (c.websites !== undefined && !sameList(c.websites, state.websites)) changed.websites = c.websites;
      if (c.locations !== undefined && !sameList(c.locations, state.locations)) changed.locations = c.locations;
      if (Object.keys(changed).length === 0) return [];
      return [{ type: 'organization.updated', data: { org_id, ...changed, at } }];
    }
    case 'set_runs_enabled':
      if (command.runs_enabled === state.runs_enabled) return [];
      return [{ type: 'organization.runs_enabled_changed', data: { org_id, runs_enabled: command.runs_enabled, at } }];
    case 'add_member':
      requireRole(state, command.role_id);
      if (state.members[command.user_id]) throw errors.conflict('User is already a member', { code: 'already_member' });
      return [{ type: 'member.added', data: { org_id, user_id: command.user_id, role_id: command.role_id, at } }];
    case 'change_member_role': {
      if (!state.members[command.user_id]) throw errors.notFound('User');
      requireRole(state, command.role_id);
      if (state.members[command.user_id] === command.role_id) return [];
      if (isLastAdmin(state, command.user_id)) throw errors.conflict('The organization would lose its last admin', { code: 'last_admin' });
      return [{ type: 'member.role_changed', data: { org_id, user_id: command.user_id, role_id: command.role_id, at } }];
    }
    case 'remove_member':
      if (!state.members[command.user_id]) throw errors.notFound('User');
      if (isLastAdmin(state, command.user_id)) throw errors.conflict('The organization would lose its last admin', { code: 'last_admin' });
      return [{ type: 'member.removed', data: { org_id, user_id: command.user_id, at } }];
    case 'create_role': {
      if (Object.values(state.roles).some((r) => sameName(r.name, command.name))) {
        throw errors.conflict('A role with this name exists', { code: 'role_name_taken' });
      }
      const { type: _t, ...data } = command;
      return [{ type: 'role.created', data: { ...data, built_in: false } }];
    }
    case 'update_role': {
      const role = state.roles[command.role_id];
      if (!role) throw errors.notFound('Role');
      const changed: Record<string, unknown> = {};
      if (command.name !== undefined && command.name !== role.name) {
        if (role.built_in) throw errors.conflict('Built-in roles cannot be renamed', { code: 'built_in_role' });
        if (Object.entries(state.roles).some(([id, r]) => id !== command.role_id && sameName(r.name, command.name!))) {
          throw errors.conflict('A role with this name exists', { code: 'role_name_taken' });
        }
        changed.name = command.name;
      }
      if (command.description !== undefined && command.description !== role.description) changed.description = command.description;
      if (command.permissions !== undefined && !sameList([...command.permissions].sort(), [...role.permissions].sort())) {
        // The admin role always holds every permission, so an organization can never lock itself out.
        if (role.built_in && role.name === 'admin') {
          throw errors.conflict('The permissions of the admin role cannot change', { code: 'built_in_role' });
        }
        changed.permissions = command.permissions;
      }
      if (Object.keys(changed).length === 0) return [];
      return [{ type: 'role.updated', data: { org_id, role_id: command.role_id, ...changed, at } }];
    }
    case 'delete_role': {
      const role = state.roles[command.role_id];
      if (!role) throw errors.notFound('Role');
      if (role.built_in) throw errors.conflict('Built-in roles cannot be deleted', { code: 'built_in_role' });
      if (Object.values(state.members).includes(command.role_id)) {
        throw errors.conflict('The role is assigned to members; give them another role first', { code: 'role_in_use' });
      }
      return [{ type: 'role.deleted', data: { org_id, role_id: command.role_id, at } }];
    }
    default: {
      const never: never = command;
      throw new Error(`Unknown command ${JSON.stringify(never)}`);
    }
  }
}

function evolve(state: OrganizationState, event: Stored<EventsNamed<'organization' | 'role' | 'member'>>): OrganizationState {
  const { type, data: d } = event;
  switch (type) {
    case 'organization.created':
      return { ...state, exists: true, name: d.name, slug: d.slug };
    case 'organization.updated':
      return {
        ...state,
        ...(d.name !== undefined && { name: d.name }),
        ...(d.slug !== undefined && { slug: d.slug }),
        ...(d.websites !== undefined && { websites: d.websites }),
        ...(d.locations !== undefined && { locations: d.locations }),
      };
    case 'organization.runs_enabled_changed':
      return { ...state, runs_enabled: d.runs_enabled };
    case 'role.created':
      return {
        ...state,
        roles: {
          ...state.roles,
          [d.role_id]: {
            name: d.name,
            built_in: d.built_in,
            permissions: d.permissions,
            description: d.description,
          },
        },
      };
    case 'role.updated': {
      const id = d.role_id;
      const role = state.roles[id];
      if (!role) return state;
      return {
        ...state,
        roles: {
          ...state.roles,
          [id]: {
            ...role,
            ...(d.name !== undefined && { name: d.name }),
            ...(d.description !== undefined && { description: d.description }),
            ...(d.permissions !== undefined && { permissions: d.permissions }),
          },
        },
      };
    }
    case 'role.deleted': {
      const { [d.role_id]: _gone, ...roles } = state.roles;
      return { ...state, roles };
    }
    case 'member.added':
    case 'member.role_changed':
      return { ...state, members: { ...state.members, [d.user_id]: d.role_id } };
    case 'member.removed': {
      const { [d.user_id]: _gone, ...members } = state.members;
      return { ...state, members };
    }
    default:
      return state;
  }
}

export const organizationDecider: Decider<OrganizationCommand, OrganizationState, EventsNamed<'organization' | 'role' | 'member'>> = {
  initialState: () => ({
    exists: false,
    name: '',
    slug: '',
    websites: [],
    locations: [],
    runs_enabled: true,
    roles: {},
    members: {},
  }),
  evolve,
  decide,
};
