import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { AppError } from '@kb/platform';
import { organizationDecider, type OrganizationCommand } from './organization.js';
import { builtInRoles } from '../auth/permissions.js';
import { run } from './testing.js';

const ORG = '11111111-1111-4111-8111-111111111111';
const ALICE = '22222222-2222-4222-8222-222222222222';
const BOB = '33333333-3333-4333-8333-333333333333';
const role_ids = {
  admin: 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa',
  collaborator: 'cccccccc-cccc-4ccc-8ccc-cccccccccccc',
  viewer: 'dddddddd-dddd-4ddd-8ddd-dddddddddddd',
};
const CUSTOM = 'eeeeeeee-eeee-4eee-8eee-eeeeeeeeeeee';
const at = '2026-01-01T00:00:00.000Z';
const create: OrganizationCommand = { type: 'create', org_id: ORG, name: 'Acme', slug: 'acme', created_by: ALICE, role_ids, at };

const failsWith = (commands: OrganizationCommand[], kind: string, code?: string) =>
  assert.throws(
    () => run(organizationDecider, commands),
    (err: unknown) => err instanceof AppError && err.kind === kind && (code === undefined || err.code === code),
  );

describe('organization decider', () => {
  it('creates the organization with its own built-in roles and the creator as admin', () => {
    const { state, events } = run(organizationDecider, [create]);
    assert.deepEqual(
      events.map((e) => e.type),
      ['organization.created', 'role.created', 'role.created', 'role.created', 'member.added'],
    );
    assert.deepEqual(state.roles[role_ids.viewer]?.permissions, builtInRoles.viewer);
    assert.equal(state.members[ALICE], role_ids.admin);
    assert.equal(state.runs_enabled, true);
  });

  it('emits runs_enabled_changed only when the switch changes', () => {
    const { events } = run(organizationDecider, [
      create,
      { type: 'set_runs_enabled', org_id: ORG, runs_enabled: true, at },
      { type: 'set_runs_enabled', org_id: ORG, runs_enabled: false, at },
      { type: 'set_runs_enabled', org_id: ORG, runs_enabled: false, at },
    ]);
    const changes = events.filter((e) => e.type === 'organization.runs_enabled_changed');
    assert.deepEqual(
      changes.map((e) => e.data),
      [{ org_id: ORG, runs_enabled: false, at }],
    );
  });

  it('records only the profile fields that change; an empty list clears', () => {
    const { state, events } = run(organizationDecider, [
      create,
      { type: 'update_profile', org_id: ORG, changes: { websites: ['https://a.example'], name: 'Acme' }, at },
      { type: 'update_profile', org_id: ORG, changes: { websites: [] }, at },
    ]);
    const updates = events.filter((e) => e.type === 'organization.updated').map((e) => e.data);
    assert.deepEqual(updates, [
      { org_id: ORG, websites: ['https://a.example'], at },
      { org_id: ORG, websites: [], at },
    ]);
    assert.deepEqual(state.websites, []);
  });

  it('never loses its last admin', () => {
    failsWith([create, { type: 'remove_member', org_id: ORG, user_id: ALICE, at }], 'conflict', 'last_admin');
    failsWith(
      [create, { type: 'change_member_role', org_id: ORG, user_id: ALICE, role_id: role_ids.viewer, at }],
      'conflict',
      'last_admin',
    );
    const { state } = run(organizationDecider, [
      create,
      { type: 'add_member', org_id: ORG, user_id: BOB, role_id: role_ids.admin, at },
      { type: 'remove_member', org_id: ORG, user_id: ALICE, at },
    ]);
    assert.deepEqual(state.members, { [BOB]: role_ids.admin });
  });

  it('rejects a second membership (409), unknown roles (400) and unknown members (404)', () => {
    const add = { type: 'add_member', org_id: ORG, user_id: BOB, role_id: role_ids.viewer, at } as const;
    failsWith([create, add, add], 'conflict', 'already_member');
    failsWith([create, { ...add, role_id: CUSTOM }], 'validation', 'unknown_role');
    failsWith([create, { type: 'remove_member', org_id: ORG, user_id: BOB, at }], 'not_found');
  });

  it('protects built-in roles and roles in use; custom role names are unique regardless of case', () => {
    const custom: Extract<OrganizationCommand, { type: 'create_role' }> = {
      type: 'create_role',
      org_id: ORG,
      role_id: CUSTOM,
      name: 'Editors',
      description: '',
      permissions: ['read:kb'],
      at,
    };
    failsWith([create, { type: 'delete_role', org_id: ORG, role_id: role_ids.viewer, at }], 'conflict', 'built_in_role');
    failsWith([create, { type: 'update_role', org_id: ORG, role_id: role_ids.viewer, name: 'watchers', at }], 'conflict', 'built_in_role');
    failsWith(
      [create, { type: 'update_role', org_id: ORG, role_id: role_ids.admin, permissions: ['read:org'], at }],
      'conflict',
      'built_in_role',
    );
    failsWith([create, custom, { ...custom, role_id: BOB, name: 'EDITORS' }], 'conflict', 'role_name_taken');
    failsWith(
      [
        create,
        custom,
        { type: 'add_member', org_id: ORG, user_id: BOB, role_id: CUSTOM, at },
        { type: 'delete_role', org_id: ORG, role_id: CUSTOM, at },
      ],
      'conflict',
      'role_in_use',
    );
    const { state } = run(organizationDecider, [
      create,
      custom,
      { type: 'update_role', org_id: ORG, role_id: role_ids.viewer, permissions: ['read:org'], at },
      { type: 'delete_role', org_id: ORG, role_id: CUSTOM, at },
    ]);
    assert.equal(state.roles[CUSTOM], undefined);
    assert.deepEqual(state.roles[role_ids.viewer]?.permissions, ['read:org']);
  });
});
