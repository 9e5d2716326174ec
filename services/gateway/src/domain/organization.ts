import { errors } from '@kb/platform';
import type { Decider } from '@kb/eventsourcing';
import type { StoredEvent } from '@kb/store';

export interface OrganizationState {
  exists: boolean;
  members: Record<string, string>;
}

export type OrganizationCommand =
  | { type: 'create'; org_id: string; name: string; slug: string; created_by: string | null; at: string }
  | { type: 'add_member'; org_id: string; user_id: string; role: string; at: string };

export const organizationStream = (orgId: string) => `organization-${orgId}`;

export const organizationDecider: Decider<OrganizationCommand, OrganizationState> = {
  initialState: () => ({ exists: false, members: {} }),
  evolve(state, event: StoredEvent) {
    switch (event.type) {
      case 'organization.created':
        return { ...state, exists: true };
      case 'member.added': {
        const d = event.data as { user_id: string; role: string };
        return { ...state, members: { ...state.members, [d.user_id]: d.role } };
      }
      default:
        return state;
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'create':
        if (state.exists) throw errors.conflict('Organization already exists');
        return [
          {
            type: 'organization.created',
            data: { org_id: command.org_id, name: command.name, slug: command.slug, created_by: command.created_by, at: command.at },
          },
        ];
      case 'add_member':
        if (!state.exists) throw errors.notFound('Organization');
        if (state.members[command.user_id]) throw errors.conflict('User is already a member', { code: 'already_member' });
        return [{ type: 'member.added', data: { org_id: command.org_id, user_id: command.user_id, role: command.role, at: command.at } }];
      default: {
        const never: never = command;
        throw new Error(`Unknown command ${JSON.stringify(never)}`);
      }
    }
  },
};
