import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { fixedClock, randomIds, silentLogger } from '@kb/platform';
import { eventCatalog, topics } from '@kb/events';
import { createCommandBus, rebuildReadModels, snapshotReadModels } from '@kb/eventsourcing';
import { openStore } from '@kb/runtime';
import type { Store } from '@kb/store';
import type { CallContext } from '@kb/rpc';
import { gatewayProjections } from '../service.js';
import { createIdentityService, type IdentityService } from './identity.js';
import { createOrganizationService, type OrganizationService } from './organizations.js';
import { createApiKeyService, type ApiKeyService } from './api-keys.js';
import { createCreditsService, type CreditsService } from './credits.js';
import { allPermissions } from '../auth/permissions.js';
import { ROLES, type RoleDoc } from '../projections/identity.js';

/** The identity use cases on the embedded store, with a controlled clock. */
let dir: string;
let store: Store;
const clock = fixedClock('2026-11-22T08:00:00.000Z');
let identity: IdentityService;
let organizations: OrganizationService;
let apiKeys: ApiKeyService;
let credits: CreditsService;
const PASSWORD = 'a long enough password';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kb-identity-'));
  store = await openStore({ DATA_DIR: dir, STORE: 'sqlite', BUS: 'sqlite' }, 'gateway', clock, silentLogger());
  const commands = createCommandBus({ store, catalog: eventCatalog, projections: gatewayProjections, ids: randomIds, clock });
  const deps = { store, commands, ids: randomIds, clock };
  identity = createIdentityService({ ...deps, logger: silentLogger(), sessionTtlSeconds: 3600 });
  organizations = createOrganizationService(deps);
  apiKeys = createApiKeyService(deps);
  credits = createCreditsService({ ...deps, costs: { ingest: 1, query: 1, generation: 10 } });
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A signed-in user's call context; by default with every permission, as the organization's creator has. */
const ctxOf = (org_id: string, user_id: string, permissions: string[] = allPermissions): CallContext => ({
  org_id,
  principal: { type: 'user', id: user_id },
  permissions,
  folder_scope: null,
  request_id: randomUUID(),
});

describe('sessions', () => {
  it('expire after their lifetime and end on logout', async () => {
    const user = await identity.signup({ email: `s-${randomUUID()}@example.test`, password: PASSWORD, name: 'S' });
    const login = await identity.login({ email: user.email, password: PASSWORD });
    assert.equal(login.expires_at, new Date(clock.now().getTime() + 3600_000).toISOString());
    assert.ok(await identity.findOpenSession(login.token));
    clock.advance(3599_000);
    assert.ok(await identity.findOpenSession(login.token));
    clock.advance(1000);
    assert.equal(await identity.findOpenSession(login.token), undefined, 'expired');

    const second = await identity.login({ email: user.email, password: PASSWORD });
    const session = await identity.findOpenSession(second.token);
    assert.ok(session);
    await identity.logout(session);
    assert.equal(await identity.findOpenSession(second.token), undefined, 'ended');
  });

  it('keeps no secret in the clear: neither the password nor the session token is stored', async () => {
    const email = `secret-${randomUUID()}@example.test`;
    await identity.signup({ email, password: PASSWORD, name: 'Secret' });
    const { token } = await identity.login({ email, password: PASSWORD });
    const everything =
      JSON.stringify(await store.readAll(0, 100_000)) + JSON.stringify(await snapshotReadModels(store, gatewayProjections));
    assert.ok(!everything.includes(PASSWORD));
    assert.ok(!everything.includes(token.slice(4)));
    assert.match(everything, /scrypt\$/);
  });
});

describe('organization events', () => {
  it('publishes the runs switch on the gateway topic for generation and analytics', async () => {
    assert.equal(eventCatalog.topicOf('organization.runs_enabled_changed'), topics.gateway);
    assert.equal(eventCatalog.isPublished('organization.runs_enabled_changed'), true);
    assert.equal(eventCatalog.isPublished('session.started'), false, 'token hashes stay inside');
    assert.equal(eventCatalog.isPublished('api_key.created'), false, 'key hashes stay inside');
    const email = `runs-${randomUUID()}@example.test`;
    await identity.signup({ email, password: PASSWORD, name: 'Runs' });
    const login = await identity.login({ email, password: PASSWORD });
    const session = (await identity.findOpenSession(login.token))!;
    const org = await identity.createOrganization(session, { name: 'Runs Org' });
    await organizations.setRunsEnabled(ctxOf(org.org_id, session.user_id), false);
    const events = await store.readAll(0, 100_000);
    const switched = events.filter((e) => e.type === 'organization.runs_enabled_changed' && e.metadata.org_id === org.org_id);
    assert.deepEqual(
      switched.map((e) => e.data.runs_enabled),
      [false],
    );
    assert.equal(switched[0]!.metadata.actor, `user:${session.user_id}`);
  });
});

describe('roles', () => {
  it('let the built-in admin role grant the whole catalogue, even permissions added after the organization was created', async () => {
    const email = `catalogue-${randomUUID()}@example.test`;
    await identity.signup({ email, password: PASSWORD, name: 'Catalogue' });
    const login = await identity.login({ email, password: PASSWORD });
    const session = (await identity.findOpenSession(login.token))!;
    const org = await identity.createOrganization(session, { name: 'Older Org' });
    const ctx = ctxOf(org.org_id, session.user_id);
    const adminRole = (await organizations.listRoles(ctx)).find((r) => r.name === 'admin')!;
    // As an organization created before manage:credits existed would have it stored.
    const stored = (await store.get<RoleDoc>(ROLES, adminRole.role_id))!;
    await store.transaction((tx) => tx.put(ROLES, { ...stored, permissions: stored.permissions.filter((p) => p !== 'manage:credits') }));
    try {
      const resolved = (await identity.findOpenSession(login.token))!;
      assert.deepEqual([...resolved.permissions].sort(), [...allPermissions].sort());
      assert.deepEqual([...(await organizations.getRole(ctx, adminRole.role_id)).permissions].sort(), [...allPermissions].sort());
      const viewerRole = (await organizations.listRoles(ctx)).find((r) => r.name === 'viewer')!;
      assert.ok(!viewerRole.permissions.includes('manage:credits'), 'other roles grant only what they hold');
    } finally {
      // The read model goes back to what the events say, for the rebuild test below.
      await store.transaction((tx) => tx.put(ROLES, stored));
    }
  });

  it('refuse to hand out, or touch, permissions the caller does not hold', async () => {
    const email = `escalate-${randomUUID()}@example.test`;
    await identity.signup({ email, password: PASSWORD, name: 'Escalate' });
    const session = (await identity.findOpenSession((await identity.login({ email, password: PASSWORD })).token))!;
    const org = await identity.createOrganization(session, { name: 'Escalation Org' });
    const owner = ctxOf(org.org_id, session.user_id);
    const limited = ctxOf(org.org_id, session.user_id, ['read:org', 'manage:roles', 'manage:users']);
    const forbidden = { kind: 'forbidden', code: 'permission_escalation' };
    await assert.rejects(organizations.createRole(limited, { name: 'Too much', permissions: ['update:org'] }), forbidden);
    const small = await organizations.createRole(limited, { name: 'Small', permissions: ['read:org'] });
    await assert.rejects(organizations.updateRole(limited, small.role_id, { permissions: ['read:org', 'manage:credits'] }), forbidden);
    const adminRole = (await organizations.listRoles(owner)).find((r) => r.name === 'admin')!;
    await assert.rejects(organizations.changeUserRole(limited, session.user_id, small.role_id), forbidden);
    await assert.rejects(organizations.removeUser(limited, session.user_id), forbidden);
    const other = await identity.signup({ email: `other-${randomUUID()}@example.test`, password: PASSWORD, name: 'Other' });
    await assert.rejects(organizations.addUser(limited, { user_id: other.user_id, role_id: adminRole.role_id }), forbidden);
    assert.equal((await organizations.addUser(limited, { user_id: other.user_id, role_id: small.role_id })).role.name, 'Small');
  });
});

describe('read-model rebuild', () => {
  it('replays every identity event to exactly the read models it had', async () => {
    const email = `rebuild-${randomUUID()}@example.test`;
    await identity.signup({ email, password: PASSWORD, name: 'Rebuild' });
    const session = (await identity.findOpenSession((await identity.login({ email, password: PASSWORD })).token))!;
    const org = await identity.createOrganization(session, { name: 'Rebuild Org', slug: `rebuild-${Date.now()}` });
    const ctx = ctxOf(org.org_id, session.user_id);
    await organizations.updateOrganization(ctx, { slug: `moved-${Date.now()}`, websites: ['https://a.example'], locations: ['Porto'] });
    const other = await identity.signup({ email: `member-${randomUUID()}@example.test`, password: PASSWORD, name: 'Member' });
    const roles = await organizations.listRoles(ctx);
    await organizations.addUser(ctx, { user_id: other.user_id, role_id: roles.find((r) => r.name === 'viewer')!.role_id });
    const custom = await organizations.createRole(ctx, { name: 'Custom', permissions: ['read:org'] });
    await organizations.updateRole(ctx, custom.role_id, { name: 'Custom renamed' });
    await organizations.changeUserRole(ctx, other.user_id, custom.role_id);
    await organizations.removeUser(ctx, other.user_id);
    await organizations.deleteRole(ctx, custom.role_id);
    const key = await apiKeys.create(ctx, { name: 'Rebuild key', folder_scope: [randomUUID()] });
    await apiKeys.revoke(ctx, key.key_id);
    await credits.grant(ctx, 20, 'test');
    await credits.setSpendLimit(ctx, 15);
    const r1 = await credits.reserve(ctx, 'query', 2);
    const r2 = await credits.reserve(ctx, 'generation', 1);
    await credits.settle(r1!);
    await credits.release(r2!);
    await identity.logout(session);

    const before = await snapshotReadModels(store, gatewayProjections);
    await rebuildReadModels(store, gatewayProjections);
    assert.deepEqual(await snapshotReadModels(store, gatewayProjections), before);
    assert.equal((await credits.balance(ctx)).balance, 18);
  });
});

describe('credits streams', () => {
  it('carry the state forward into bounded streams, with reservations held across them', async () => {
    const commands = createCommandBus({ store, catalog: eventCatalog, projections: gatewayProjections, ids: randomIds, clock });
    const small = createCreditsService({
      store,
      commands,
      ids: randomIds,
      clock,
      costs: { ingest: 1, query: 1, generation: 10 },
      epochSize: 4,
    });
    const ctx = ctxOf(randomUUID(), randomUUID());
    await small.grant(ctx, 100, 'test');
    const held = await small.reserve(ctx, 'generation', 1);
    for (let i = 0; i < 10; i++) {
      const r = await small.reserve(ctx, 'query', 1);
      await (i % 2 === 0 ? small.settle(r!) : small.release(r!));
    }
    const parallel = await Promise.allSettled(Array.from({ length: 30 }, () => small.reserve(ctx, 'ingest', 3)));
    const granted = parallel.filter((p) => p.status === 'fulfilled').length;
    // 100 - 10 held - 5 settled leaves 85: 28 reservations of 3 fit.
    assert.equal(granted, 28);
    await small.settle(held!);
    const balance = await small.balance(ctx);
    assert.equal(balance.balance, 100 - 10 - 5 - 28 * 3);
    assert.equal(balance.reserved, 28 * 3);

    const streams = new Map<string, number>();
    for (const e of await store.readAll(0, 1_000_000)) {
      if (e.metadata.org_id === ctx.org_id) streams.set(e.stream_id, Math.max(streams.get(e.stream_id) ?? 0, e.version));
    }
    assert.ok(streams.size > 10, `${streams.size} streams`);
    assert.ok([...streams.values()].every((length) => length <= 4));

    const before = await snapshotReadModels(store, gatewayProjections);
    await rebuildReadModels(store, gatewayProjections);
    assert.deepEqual(await snapshotReadModels(store, gatewayProjections), before);
    assert.equal((await small.reserve(ctx, 'query', 1)) !== null, true, 'the open stream is still found after a rebuild');
  });
});
