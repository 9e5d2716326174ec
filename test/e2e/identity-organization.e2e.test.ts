import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { API_KEY, startTestSystem, type TestSystem } from './harness.js';
import { logIn, newApiKey, newMember, newOrgAdmin, roleId, signUpAndLogIn } from './identity-fixtures.js';

let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem();
});
afterAll(async () => t.stop());

describe('GET /org/me', () => {
  it("answers a session and an API key with the credential's organization", async () => {
    const admin = await newOrgAdmin(t, 'me');
    const bySession = await admin.call('GET', '/org/me');
    assert.equal(bySession.status, 200);
    assert.equal(bySession.body.org_id, admin.org_id);
    const { key } = await newApiKey(admin, { name: 'Finder' });
    const byKey = await t.api('GET', '/org/me', { key });
    assert.equal(byKey.status, 200);
    assert.deepEqual(byKey.body, bySession.body);
    assert.equal((await t.api('GET', '/org/me', { key: API_KEY })).body.name, 'Development');
  });

  it('answers no credential with 401 and a user without an organization with 404', async () => {
    assert.equal((await t.api('GET', '/org/me', { key: null })).status, 401);
    const loner = await signUpAndLogIn(t, 'loner');
    assert.equal((await loner.call('GET', '/org/me')).status, 404);
  });
});

describe('PUT /org/me', () => {
  it('changes only the fields sent; an empty array clears websites or locations', async () => {
    const admin = await newOrgAdmin(t, 'profile');
    const slug = `profile-${Date.now()}`;
    const first = await admin.call('PUT', '/org/me', {
      slug,
      websites: ['https://example.com', 'https://blog.example.com'],
      locations: ['Berlin', 'Lisbon'],
    });
    assert.equal(first.status, 200);
    assert.equal(first.body.slug, slug);
    assert.deepEqual(first.body.websites, ['https://example.com', 'https://blog.example.com']);
    const renamed = await admin.call('PUT', '/org/me', { name: 'Renamed Org', websites: [] });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.name, 'Renamed Org');
    assert.equal(renamed.body.slug, slug);
    assert.deepEqual(renamed.body.websites, []);
    assert.deepEqual(renamed.body.locations, ['Berlin', 'Lisbon']);
    assert.ok(renamed.body.updated_at >= renamed.body.created_at);
    assert.deepEqual((await admin.call('GET', '/org/me')).body, renamed.body);
    const unchanged = await admin.call('PUT', '/org/me', {});
    assert.deepEqual(unchanged.body, renamed.body);
  });

  it("answers another organization's slug with 409 and frees a slug that was changed", async () => {
    const a = await newOrgAdmin(t, 'slug-a');
    const b = await newOrgAdmin(t, 'slug-b');
    const slug = `taken-${Date.now()}`;
    assert.equal((await a.call('PUT', '/org/me', { slug })).status, 200);
    assert.equal((await b.call('PUT', '/org/me', { slug })).status, 409);
    assert.equal((await a.call('PUT', '/org/me', { slug: `${slug}-moved` })).status, 200);
    assert.equal((await b.call('PUT', '/org/me', { slug })).status, 200);
  });

  it('answers bad values with 400 and changes nothing', async () => {
    const admin = await newOrgAdmin(t, 'badvalues');
    const before = (await admin.call('GET', '/org/me')).body;
    for (const body of [
      { slug: 'Has Spaces' },
      { websites: ['not a url'] },
      { websites: 'https://example.com' },
      { locations: [''] },
      { name: 'x' },
      { owner: 'me' },
    ]) {
      assert.equal((await admin.call('PUT', '/org/me', body)).status, 400, JSON.stringify(body));
    }
    assert.equal((await admin.call('PUT', '/org/me')).status, 400, 'the body is required');
    assert.deepEqual((await admin.call('GET', '/org/me')).body, before);
  });

  it('answers an API key with 401 and a viewer with 403', async () => {
    const admin = await newOrgAdmin(t, 'putauth');
    const viewer = await newMember(t, admin, 'viewer');
    assert.equal((await t.api('PUT', '/org/me', { body: { name: 'By key' } })).status, 401);
    assert.equal((await viewer.call('PUT', '/org/me', { name: 'By viewer' })).status, 403);
  });
});

describe('PATCH /org/me/runs-enabled', () => {
  it('switches runs off and on for a user with update:org', async () => {
    const admin = await newOrgAdmin(t, 'runs');
    const off = await admin.call('PATCH', '/org/me/runs-enabled', { runs_enabled: false });
    assert.equal(off.status, 200);
    assert.equal(off.body.runs_enabled, false);
    assert.equal((await admin.call('GET', '/org/me')).body.runs_enabled, false);
    assert.equal((await admin.call('PATCH', '/org/me/runs-enabled', { runs_enabled: true })).body.runs_enabled, true);
  });

  it('reaches the services that run things through its event: analytics then refuses to start a run (422)', async () => {
    const admin = await newOrgAdmin(t, 'runsevent');
    const config = await admin.call('PUT', '/org/run-configuration', { enabled: true, models: ['some-model'], cadence: 'daily' });
    assert.equal(config.status, 200, config.text);
    assert.equal((await admin.call('PATCH', '/org/me/runs-enabled', { runs_enabled: false })).status, 200);
    // Analytics learns the switch from organization.runs_enabled_changed on the bus, not from the gateway's answer.
    const analyticsSees = async (expected: boolean) => {
      for (let i = 0; i < 100; i++) {
        const got = await admin.call('GET', '/org/run-configuration');
        if (got.body.runs_enabled === expected) return;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.fail(`analytics never saw runs_enabled ${expected}`);
    };
    await analyticsSees(false);
    const run = await admin.call('POST', '/org/run-configuration/runs');
    assert.equal(run.status, 422, run.text);
    assert.equal(run.body.error.code, 'runs_disabled');
    assert.equal((await admin.call('PATCH', '/org/me/runs-enabled', { runs_enabled: true })).status, 200);
    await analyticsSees(true);
  });

  it('answers a viewer and a collaborator with 403, an API key with 401, a bad body with 400', async () => {
    const admin = await newOrgAdmin(t, 'runsauth');
    const viewer = await newMember(t, admin, 'viewer');
    const collaborator = await newMember(t, admin, 'collaborator');
    assert.equal((await viewer.call('PATCH', '/org/me/runs-enabled', { runs_enabled: false })).status, 403);
    assert.equal((await collaborator.call('PATCH', '/org/me/runs-enabled', { runs_enabled: false })).status, 403);
    assert.equal((await t.api('PATCH', '/org/me/runs-enabled', { body: { runs_enabled: false } })).status, 401);
    assert.equal((await admin.call('PATCH', '/org/me/runs-enabled', { runs_enabled: 'no' })).status, 400);
    assert.equal((await admin.call('PATCH', '/org/me/runs-enabled', {})).status, 400);
    assert.equal((await admin.call('GET', '/org/me')).body.runs_enabled, true);
  });
});

describe('/org/users', () => {
  it('adds an existing user by email or id with a role (201), lists and reads them', async () => {
    const admin = await newOrgAdmin(t, 'users');
    const byEmail = await signUpAndLogIn(t, 'byemail');
    const byId = await signUpAndLogIn(t, 'byid');
    const viewerRole = await roleId(admin, 'viewer');
    const added = await admin.call('POST', '/org/users', { email: byEmail.email, role_id: viewerRole });
    assert.equal(added.status, 201);
    assert.deepEqual(added.body.user, { id: byEmail.user_id, email: byEmail.email, name: 'byemail person' });
    assert.deepEqual(added.body.role, { role_id: viewerRole, name: 'viewer' });
    assert.equal(added.body.status, 'active');
    assert.ok(Date.parse(added.body.joined_at));
    assert.equal(
      (await admin.call('POST', '/org/users', { user_id: byId.user_id, role_id: await roleId(admin, 'collaborator') })).status,
      201,
    );

    const list = await admin.call('GET', '/org/users');
    assert.equal(list.status, 200);
    assert.equal(list.headers.get('x-total-count'), '3');
    assert.deepEqual(
      list.body.map((u: { user: { id: string } }) => u.user.id),
      [admin.user_id, byEmail.user_id, byId.user_id],
    );
    const page = await admin.call('GET', '/org/users?limit=1&offset=1');
    assert.deepEqual(
      page.body.map((u: { user: { id: string } }) => u.user.id),
      [byEmail.user_id],
    );
    const one = await admin.call('GET', `/org/users/${byEmail.user_id}`);
    assert.equal(one.status, 200);
    assert.deepEqual(one.body, added.body);
  });

  it('pages with limit default 10 and answers out-of-range paging with 400', async () => {
    const admin = await newOrgAdmin(t, 'paging');
    const viewer = await roleId(admin, 'viewer');
    for (let i = 0; i < 11; i++) {
      const u = await signUpAndLogIn(t, `p${i}`);
      assert.equal((await admin.call('POST', '/org/users', { user_id: u.user_id, role_id: viewer })).status, 201);
    }
    const first = await admin.call('GET', '/org/users');
    assert.equal(first.body.length, 10);
    assert.equal(first.headers.get('x-total-count'), '12');
    assert.equal((await admin.call('GET', '/org/users?offset=10')).body.length, 2);
    for (const q of ['limit=0', 'limit=101', 'offset=-1', 'limit=x', 'page=2']) {
      assert.equal((await admin.call('GET', `/org/users?${q}`)).status, 400, q);
    }
  });

  it('answers an unknown user with 404, a member with 409, an unknown role with 400, a bad body with 400', async () => {
    const admin = await newOrgAdmin(t, 'adderr');
    const other = await newOrgAdmin(t, 'adderr-other');
    const viewer = await roleId(admin, 'viewer');
    const u = await signUpAndLogIn(t, 'twice');
    assert.equal((await admin.call('POST', '/org/users', { user_id: randomUUID(), role_id: viewer })).status, 404);
    assert.equal((await admin.call('POST', '/org/users', { email: 'nobody@example.test', role_id: viewer })).status, 404);
    assert.equal((await admin.call('POST', '/org/users', { user_id: u.user_id, role_id: viewer })).status, 201);
    assert.equal((await admin.call('POST', '/org/users', { user_id: u.user_id, role_id: viewer })).status, 409);
    const fresh = await signUpAndLogIn(t, 'fresh');
    assert.equal((await admin.call('POST', '/org/users', { user_id: fresh.user_id, role_id: await roleId(other, 'viewer') })).status, 400);
    assert.equal((await admin.call('POST', '/org/users', { user_id: fresh.user_id, email: fresh.email, role_id: viewer })).status, 400);
    assert.equal((await admin.call('POST', '/org/users', { role_id: viewer })).status, 400);
    assert.equal((await admin.call('POST', '/org/users', { user_id: fresh.user_id, role: 'viewer' })).status, 400);
    assert.equal((await admin.call('GET', `/org/users/${fresh.user_id}`)).status, 404);
  });

  it('answers a user outside the organization (or of another one) with 404 on read, change and removal', async () => {
    const admin = await newOrgAdmin(t, 'scope');
    const other = await newOrgAdmin(t, 'scope-other');
    for (const id of [randomUUID(), other.user_id]) {
      assert.equal((await admin.call('GET', `/org/users/${id}`)).status, 404);
      assert.equal((await admin.call('PUT', `/org/users/${id}`, { role_id: await roleId(admin, 'viewer') })).status, 404);
      assert.equal((await admin.call('DELETE', `/org/users/${id}`)).status, 404);
    }
    assert.equal((await admin.call('GET', '/org/users/not-a-uuid')).status, 400);
  });

  it('changes a role with role_id only, and never leaves the organization without an admin', async () => {
    const admin = await newOrgAdmin(t, 'roles');
    const member = await newMember(t, admin, 'viewer');
    const adminRole = await roleId(admin, 'admin');
    const viewerRole = await roleId(admin, 'viewer');
    assert.equal((await admin.call('PUT', `/org/users/${admin.user_id}`, { role_id: viewerRole })).status, 409);
    assert.equal((await admin.call('DELETE', `/org/users/${admin.user_id}`)).status, 409);
    assert.equal((await admin.call('PUT', `/org/users/${member.user_id}`, { role_id: viewerRole, name: 'x' })).status, 400);
    assert.equal((await admin.call('PUT', `/org/users/${member.user_id}`, { role_id: randomUUID() })).status, 400);
    const promoted = await admin.call('PUT', `/org/users/${member.user_id}`, { role_id: adminRole });
    assert.equal(promoted.status, 200);
    assert.deepEqual(promoted.body.role, { role_id: adminRole, name: 'admin' });
    // The member's session carries the new role at once.
    assert.equal((await member.call('PATCH', '/org/me/runs-enabled', { runs_enabled: false })).status, 200);
    // With two admins, the first may step down.
    assert.equal((await admin.call('PUT', `/org/users/${admin.user_id}`, { role_id: viewerRole })).status, 200);
    assert.equal((await member.call('DELETE', `/org/users/${member.user_id}`)).status, 409);
  });

  it('removes a member (204): their session no longer acts in the organization', async () => {
    const admin = await newOrgAdmin(t, 'remove');
    const member = await newMember(t, admin, 'collaborator');
    assert.equal((await member.call('GET', '/org/me')).status, 200);
    assert.equal((await admin.call('DELETE', `/org/users/${member.user_id}`)).status, 204);
    assert.equal((await admin.call('GET', `/org/users/${member.user_id}`)).status, 404);
    assert.equal((await member.call('GET', '/org/me')).status, 404);
    assert.equal((await admin.call('DELETE', `/org/users/${member.user_id}`)).status, 404);
  });

  it('needs a signed-in user (401 for an API key) with the right permission (403 for a viewer)', async () => {
    const admin = await newOrgAdmin(t, 'usersauth');
    const viewer = await newMember(t, admin, 'viewer');
    const u = await signUpAndLogIn(t, 'target');
    const viewerRole = await roleId(admin, 'viewer');
    assert.equal((await t.api('GET', '/org/users')).status, 401);
    assert.equal((await t.api('POST', '/org/users', { body: { user_id: u.user_id, role_id: viewerRole } })).status, 401);
    assert.equal((await viewer.call('GET', '/org/users')).status, 200);
    assert.equal((await viewer.call('POST', '/org/users', { user_id: u.user_id, role_id: viewerRole })).status, 403);
    assert.equal((await viewer.call('PUT', `/org/users/${admin.user_id}`, { role_id: viewerRole })).status, 403);
    assert.equal((await viewer.call('DELETE', `/org/users/${admin.user_id}`)).status, 403);
  });
});

describe('no escalation through users and roles', () => {
  it('lets a user manager hand out only roles they hold, and not touch anyone above them', async () => {
    const admin = await newOrgAdmin(t, 'esc-users');
    const managerRole = await admin.call('POST', '/org/roles', {
      name: 'User manager',
      permissions: ['read:org', 'read:kb', 'read:analytics', 'manage:users'],
    });
    assert.equal(managerRole.status, 201, managerRole.text);
    const manager = await signUpAndLogIn(t, 'usermgr');
    assert.equal((await admin.call('POST', '/org/users', { user_id: manager.user_id, role_id: managerRole.body.role_id })).status, 201);
    const session = await logIn(t, manager.email);
    const [adminRole, collaboratorRole, viewerRole] = await Promise.all(['admin', 'collaborator', 'viewer'].map((n) => roleId(admin, n)));

    // Within their own rights: fine.
    const newcomer = await signUpAndLogIn(t, 'newcomer');
    assert.equal((await session.call('POST', '/org/users', { user_id: newcomer.user_id, role_id: viewerRole })).status, 201);
    // Above them: 403, and nothing changes.
    const outsider = await signUpAndLogIn(t, 'outsider');
    for (const [method, path, body] of [
      ['PUT', `/org/users/${manager.user_id}`, { role_id: adminRole }],
      ['PUT', `/org/users/${newcomer.user_id}`, { role_id: collaboratorRole }],
      ['POST', '/org/users', { user_id: outsider.user_id, role_id: adminRole }],
      ['PUT', `/org/users/${admin.user_id}`, { role_id: viewerRole }],
      ['DELETE', `/org/users/${admin.user_id}`, undefined],
    ] as const) {
      const res = await session.call(method, path, body);
      assert.equal(res.status, 403, `${method} ${path} ${JSON.stringify(body)}: ${res.text}`);
    }
    const users = (await admin.call('GET', '/org/users')).body as { user: { id: string }; role: { name: string } }[];
    assert.deepEqual(
      users.map((u) => [u.user.id, u.role.name]),
      [
        [admin.user_id, 'admin'],
        [manager.user_id, 'User manager'],
        [newcomer.user_id, 'viewer'],
      ],
    );
    assert.equal((await session.call('DELETE', `/org/users/${newcomer.user_id}`)).status, 204);
  });

  it('lets a role manager grant only permissions they hold, never to their own role', async () => {
    const admin = await newOrgAdmin(t, 'esc-roles');
    const managerRole = await admin.call('POST', '/org/roles', { name: 'Role manager', permissions: ['read:org', 'manage:roles'] });
    const manager = await signUpAndLogIn(t, 'rolemgr');
    assert.equal((await admin.call('POST', '/org/users', { user_id: manager.user_id, role_id: managerRole.body.role_id })).status, 201);
    const session = await logIn(t, manager.email);

    const reader = await session.call('POST', '/org/roles', { name: 'Reader', permissions: ['read:org'] });
    assert.equal(reader.status, 201, reader.text);
    assert.equal((await session.call('POST', '/org/roles', { name: 'Granter', permissions: ['manage:users'] })).status, 403);
    const own = await session.call('PUT', `/org/roles/${managerRole.body.role_id}`, {
      permissions: ['read:org', 'manage:roles', 'manage:users'],
    });
    assert.equal(own.status, 403, own.text);
    assert.equal((await session.call('PUT', `/org/roles/${reader.body.role_id}`, { permissions: ['read:org', 'update:org'] })).status, 403);
    // A role above them cannot be touched at all, not even its description.
    assert.equal((await session.call('PUT', `/org/roles/${await roleId(admin, 'collaborator')}`, { description: 'mine now' })).status, 403);
    assert.deepEqual((await admin.call('GET', `/org/roles/${managerRole.body.role_id}`)).body.permissions, ['read:org', 'manage:roles']);
    assert.equal((await session.call('PUT', `/org/roles/${reader.body.role_id}`, { name: 'Readers' })).status, 200);
  });
});

describe('the last admin under concurrency', () => {
  const roleNames = async (who: { call: (m: string, p: string) => Promise<{ body: unknown }> }) =>
    ((await who.call('GET', '/org/members')).body as { role_name: string }[]).map((m) => m.role_name).sort();

  it('keeps one admin when two admins remove each other at the same time', async () => {
    const admin = await newOrgAdmin(t, 'race');
    const second = await newMember(t, admin, 'admin');
    const removals = await Promise.all([
      admin.call('DELETE', `/org/users/${second.user_id}`),
      second.call('DELETE', `/org/users/${admin.user_id}`),
    ]);
    // The loser is refused by the invariant (409) or, when the winner's write landed before the
    // loser was even authenticated, no longer acts in the organization at all (404).
    const statuses = removals.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 204).length, 1, removals.map((r) => r.text).join(' | '));
    assert.ok(
      statuses.some((s) => s === 409 || s === 404),
      statuses.join(','),
    );
    const survivor = statuses[0] === 204 ? admin : second;
    assert.deepEqual(await roleNames(survivor), ['admin']);
  });

  it('keeps one admin when two admins demote each other at the same time', async () => {
    const admin = await newOrgAdmin(t, 'race-demote');
    const peer = await newMember(t, admin, 'admin');
    const viewerRole = await roleId(admin, 'viewer');
    const demotions = await Promise.all([
      admin.call('PUT', `/org/users/${peer.user_id}`, { role_id: viewerRole }),
      peer.call('PUT', `/org/users/${admin.user_id}`, { role_id: viewerRole }),
    ]);
    // The loser is refused by the invariant (409) or, demoted before being authenticated, lacks manage:users (403).
    const statuses = demotions.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 200).length, 1, demotions.map((r) => r.text).join(' | '));
    assert.ok(
      statuses.some((s) => s === 409 || s === 403),
      statuses.join(','),
    );
    assert.deepEqual(await roleNames(admin), ['admin', 'viewer']);
  });
});

describe('GET /org/members', () => {
  it('lists who belongs to the organization with their role and its permissions', async () => {
    const admin = await newOrgAdmin(t, 'members');
    const viewer = await newMember(t, admin, 'viewer');
    const res = await viewer.call('GET', '/org/members');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-total-count'), '2');
    const byUser = new Map(res.body.map((m: { user_id: string }) => [m.user_id, m]));
    const v = byUser.get(viewer.user_id) as { role_name: string; permissions: string[]; email: string };
    assert.equal(v.role_name, 'viewer');
    assert.equal(v.email, viewer.email);
    assert.deepEqual([...v.permissions].sort(), ['read:analytics', 'read:kb', 'read:org']);
    assert.equal((byUser.get(admin.user_id) as { role_name: string }).role_name, 'admin');
    assert.equal((await t.api('GET', '/org/members')).status, 401);
    assert.equal((await admin.call('GET', '/org/members?limit=0')).status, 400);
  });
});

describe('GET /org/permissions', () => {
  it('lists the documented catalogue, for a session or an API key', async () => {
    const res = await t.api('GET', '/org/permissions');
    assert.equal(res.status, 200);
    const names = res.body.map((p: { permission: string }) => p.permission);
    for (const p of [
      'read:org',
      'update:org',
      'manage:users',
      'manage:roles',
      'manage:api_keys',
      'read:kb',
      'write:kb',
      'generate:content',
      'publish:content',
      'manage:destinations',
      'read:analytics',
      'manage:analytics',
      'manage:credits',
    ]) {
      assert.ok(names.includes(p), p);
    }
    assert.ok(res.body.every((p: { description: string }) => p.description.length > 0));
    const admin = await newOrgAdmin(t, 'perms');
    assert.deepEqual((await admin.call('GET', '/org/permissions')).body, res.body);
    assert.equal((await t.api('GET', '/org/permissions', { key: null })).status, 401);
  });
});

describe('/org/roles', () => {
  it('creates, reads, changes and deletes custom roles; a custom role grants exactly its permissions', async () => {
    const admin = await newOrgAdmin(t, 'custom');
    const created = await admin.call('POST', '/org/roles', {
      name: 'Operator',
      description: 'Runs things',
      permissions: ['read:org', 'update:org'],
    });
    assert.equal(created.status, 201);
    assert.equal(created.body.built_in, false);
    assert.deepEqual(created.body.permissions, ['read:org', 'update:org']);
    const id = created.body.role_id;
    assert.deepEqual((await admin.call('GET', `/org/roles/${id}`)).body, created.body);
    assert.equal((await admin.call('GET', '/org/roles')).body.length, 4);

    const operator = await signUpAndLogIn(t, 'operator');
    assert.equal((await admin.call('POST', '/org/users', { user_id: operator.user_id, role_id: id })).status, 201);
    const session = await logIn(t, operator.email);
    assert.equal((await session.call('PATCH', '/org/me/runs-enabled', { runs_enabled: false })).status, 200);
    assert.equal((await session.call('GET', '/org/users')).status, 200);
    assert.equal((await session.call('POST', '/org/api-keys', { name: 'nope' })).status, 403);

    const renamed = await admin.call('PUT', `/org/roles/${id}`, { name: 'Runner', permissions: ['read:org'] });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.name, 'Runner');
    assert.equal(renamed.body.description, 'Runs things');
    assert.equal((await session.call('PATCH', '/org/me/runs-enabled', { runs_enabled: true })).status, 403);

    assert.equal((await admin.call('DELETE', `/org/roles/${id}`)).status, 409, 'still assigned');
    assert.equal((await admin.call('PUT', `/org/users/${operator.user_id}`, { role_id: await roleId(admin, 'viewer') })).status, 200);
    assert.equal((await admin.call('DELETE', `/org/roles/${id}`)).status, 204);
    assert.equal((await admin.call('GET', `/org/roles/${id}`)).status, 404);
    assert.equal((await admin.call('DELETE', `/org/roles/${id}`)).status, 404);
  });

  it('keeps built-in roles: no deleting or renaming, admin keeps every permission; others may be tuned', async () => {
    const admin = await newOrgAdmin(t, 'builtin');
    const adminRole = await roleId(admin, 'admin');
    const viewerRole = await roleId(admin, 'viewer');
    assert.equal((await admin.call('DELETE', `/org/roles/${viewerRole}`)).status, 409);
    assert.equal((await admin.call('PUT', `/org/roles/${viewerRole}`, { name: 'watcher' })).status, 409);
    assert.equal((await admin.call('PUT', `/org/roles/${adminRole}`, { permissions: ['read:org'] })).status, 409);
    const tuned = await admin.call('PUT', `/org/roles/${viewerRole}`, { permissions: ['read:org'], description: 'Sees the profile only' });
    assert.equal(tuned.status, 200);
    assert.deepEqual(tuned.body.permissions, ['read:org']);
    assert.equal(tuned.body.name, 'viewer');
  });

  it('answers a duplicate name with 409, unknown permissions and bad names with 400, unknown or foreign ids with 404', async () => {
    const admin = await newOrgAdmin(t, 'roleerr');
    const other = await newOrgAdmin(t, 'roleerr-other');
    assert.equal((await admin.call('POST', '/org/roles', { name: 'Editors', permissions: ['read:kb'] })).status, 201);
    assert.equal((await admin.call('POST', '/org/roles', { name: 'editors', permissions: [] })).status, 409);
    assert.equal((await admin.call('POST', '/org/roles', { name: 'Admin', permissions: [] })).status, 409);
    assert.equal((await admin.call('POST', '/org/roles', { name: 'Wizards', permissions: ['cast:spells'] })).status, 400);
    assert.equal((await admin.call('POST', '/org/roles', { name: 'x', permissions: [] })).status, 400);
    assert.equal((await admin.call('POST', '/org/roles', { name: 'No perms' })).status, 400);
    const foreign = await roleId(other, 'viewer');
    for (const id of [randomUUID(), foreign]) {
      assert.equal((await admin.call('GET', `/org/roles/${id}`)).status, 404);
      assert.equal((await admin.call('PUT', `/org/roles/${id}`, { description: 'x' })).status, 404);
      assert.equal((await admin.call('DELETE', `/org/roles/${id}`)).status, 404);
    }
  });

  it('needs a signed-in user (401 for an API key) and manage:roles to change (403 for a collaborator)', async () => {
    const admin = await newOrgAdmin(t, 'roleauth');
    const collaborator = await newMember(t, admin, 'collaborator');
    assert.equal((await t.api('GET', '/org/roles')).status, 401);
    assert.equal((await t.api('POST', '/org/roles', { body: { name: 'Keys', permissions: [] } })).status, 401);
    assert.equal((await collaborator.call('GET', '/org/roles')).status, 200);
    assert.equal((await collaborator.call('POST', '/org/roles', { name: 'Mine', permissions: [] })).status, 403);
    const viewerRole = await roleId(admin, 'viewer');
    assert.equal((await collaborator.call('PUT', `/org/roles/${viewerRole}`, { description: 'x' })).status, 403);
    assert.equal((await collaborator.call('DELETE', `/org/roles/${viewerRole}`)).status, 403);
  });
});
