import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { RouteEntry } from '@kb/gateway';
import { startTestSystem, type ApiResponse, type TestSystem } from './harness.js';
import { bearer, logIn, newApiKey, newMember, newOrgAdmin, roleId, signUpAndLogIn, type SignedIn } from './identity-fixtures.js';

/**
 * Walks every gateway route of the route table (so new routes are covered
 * without touching this file) with every kind of credential, and checks the
 * 401/403/404 semantics of spec sections 5 and 7 against each route's declared
 * requirement.
 */

let t: TestSystem;
let routes: RouteEntry[];

type Credential = { name: string; headers: Record<string, string> };

/** API keys never carry these (spec 5.4); the route table says which routes need them. */
const USER_ONLY = new Set(['update:org', 'manage:users', 'manage:roles', 'manage:api_keys', 'manage:credits']);

/** Folder scope applies to the knowledge-base tree and what is read out of it, not to categories or anything else. */
const folderScoped = (r: RouteEntry) =>
  r.auth.credential !== 'none' &&
  (r.auth.permission === 'read:kb' || r.auth.permission === 'write:kb') &&
  !r.url.startsWith('/api/v1/categories');

const pathOf = (r: RouteEntry, ids: Record<string, string> = {}) =>
  r.url.replace(/^\/api\/v1/, '').replace(/:([A-Za-z_]+)/g, (_m, name: string) => ids[name] ?? randomUUID());

/** Logging out last, so the session stays usable for every other route. */
const ordered = (list: RouteEntry[]) =>
  [...list].sort((a, b) => Number(a.url.endsWith('/auth/logout')) - Number(b.url.endsWith('/auth/logout')));

async function request(r: RouteEntry, headers: Record<string, string>, ids?: Record<string, string>): Promise<ApiResponse> {
  return t.api(r.method, pathOf(r, ids), { key: null, headers });
}

const label = (r: RouteEntry, c: string, res: ApiResponse) => `${c}: ${r.method} ${r.url} -> ${res.status} ${res.text.slice(0, 200)}`;

let admin: SignedIn & { org_id: string };
let sessions: { name: string; session: SignedIn; permissions: string[] }[];
let keys: Record<'revoked' | 'scoped' | 'emptyScope' | 'plain', string>;
let other: SignedIn & { org_id: string };
/** Real ids of the first organization's resources, by path parameter name, for the cross-organization checks. */
let foreignIds: Record<string, string>;
/** Two KB folders of the first organization: the scoped key may reach the first only. */
let folders: { inside: string; outside: string };

beforeAll(async () => {
  t = await startTestSystem();
  routes = t.system.gateway.routes;
  admin = await newOrgAdmin(t, 'matrix');
  await admin.call('POST', '/org/credits/grants', { amount: 1000 });
  const viewer = await newMember(t, admin, 'viewer');
  const collaborator = await newMember(t, admin, 'collaborator');
  const adminSession = await logIn(t, admin.email);
  sessions = [];
  for (const [name, session] of [
    ['viewer session', viewer],
    ['collaborator session', collaborator],
    ['admin session', adminSession],
  ] as const) {
    const me = await session.call('GET', '/auth/me');
    sessions.push({ name, session, permissions: me.body.permissions });
  }
  const folder = async (name: string) => {
    const res = await admin.call('POST', '/org/kb/folders', { name });
    assert.equal(res.status, 201, res.text);
    return res.body.kb_node_id as string;
  };
  folders = { inside: await folder('Matrix inside'), outside: await folder('Matrix outside') };
  const revoked = await newApiKey(admin, { name: 'Revoked' });
  assert.equal((await admin.call('DELETE', `/org/api-keys/${revoked.key_id}`)).status, 204);
  keys = {
    revoked: revoked.key,
    scoped: (await newApiKey(admin, { name: 'Scoped', folder_scope: [folders.inside] })).key,
    emptyScope: (await newApiKey(admin, { name: 'No KB', folder_scope: [] })).key,
    plain: (await newApiKey(admin, { name: 'Plain' })).key,
  };

  other = await newOrgAdmin(t, 'elsewhere');
  const member = await signUpAndLogIn(t, 'member');
  await admin.call('POST', '/org/users', { user_id: member.user_id, role_id: await roleId(admin, 'viewer') });
  const role = await admin.call('POST', '/org/roles', { name: 'Matrix role', permissions: ['read:org'] });
  const key = await newApiKey(admin, { name: 'Foreign target' });
  const created = async (path: string, body: unknown, field: string): Promise<string> => {
    const res = await t.api('POST', path, { key: keys.plain, body });
    assert.ok(res.status >= 200 && res.status < 300, `POST ${path}: ${res.status} ${res.text}`);
    assert.equal(typeof res.body[field], 'string', `POST ${path} names no ${field}`);
    return res.body[field];
  };
  const category_id = await created('/categories', { name: 'Matrix category' }, 'category_id');
  foreignIds = {
    userId: member.user_id,
    roleId: role.body.role_id,
    keyId: key.key_id,
    category_id,
    topic_id: await created(`/categories/${category_id}/topics`, { name: 'Matrix topic' }, 'topic_id'),
    kb_node_id: folders.outside,
    content_id: await created('/org/kb/raw', { title: 'Matrix text', text: `Matrix content ${randomUUID()}` }, 'id'),
    tag_id: await created('/org/tags', { name: 'Matrix tag' }, 'tag_id'),
    prompt_id: await created('/org/prompts', { name: 'Matrix prompt', text: 'What does the matrix check?' }, 'prompt_id'),
    question_id: await created('/org/questions', { question: 'Who checks the matrix?' }, 'question_id'),
    query_id: await created('/org/search', { query: 'matrix question' }, 'query_id'),
    source_id: await created('/org/tracked-sources', { match_type: 'host', pattern: 'matrix.example', tier: 'tracked' }, 'source_id'),
    competitor_id: await created('/org/competitors', { name: 'Matrix Rival' }, 'competitor_id'),
  };
});
afterAll(async () => t.stop());

describe('authorization matrix over the route table', () => {
  it('has routes, each declaring its requirement, and publishes that requirement in the OpenAPI description', async () => {
    assert.ok(routes.length >= 30, `only ${routes.length} routes`);
    const doc = (await t.api('GET', '/openapi.json', { key: null })).body;
    for (const r of routes) {
      const op = doc.paths[r.url.replace(/:([A-Za-z_]+)/g, '{$1}')]?.[r.method.toLowerCase()];
      if (r.url === '/api/v1/openapi.json') continue;
      assert.ok(op, `${r.method} ${r.url} missing from OpenAPI`);
      if (r.auth.credential === 'none') assert.deepEqual(op.security, []);
      else {
        assert.deepEqual(op.security, r.auth.credential === 'user' ? [{ BearerSession: [] }] : [{ ApiKey: [] }, { BearerSession: [] }]);
        assert.equal(op['x-permission'], r.auth.permission ?? undefined, `${r.method} ${r.url}`);
      }
    }
  });

  it('answers no credential, malformed credentials, a revoked key and an unknown session with 401', async () => {
    const bad: Credential[] = [
      { name: 'no credential', headers: {} },
      { name: 'malformed key', headers: { 'x-api-key': 'not a key!' } },
      { name: 'revoked key', headers: { 'x-api-key': keys.revoked } },
      { name: 'unknown key', headers: { 'x-api-key': `kb_${'x'.repeat(43)}` } },
      { name: 'malformed bearer', headers: { authorization: 'Bearer nope' } },
      { name: 'unknown session', headers: bearer(`kbs_${'A'.repeat(43)}`) },
    ];
    for (const r of routes) {
      for (const c of bad) {
        const res = await request(r, c.headers);
        if (r.auth.credential === 'none') assert.notEqual(res.status, 401, label(r, c.name, res));
        else {
          assert.equal(res.status, 401, label(r, c.name, res));
          assert.match(res.headers.get('content-type') ?? '', /application\/json/);
        }
      }
    }
  });

  it('lets API keys in on routes for any credential (folder scope only matters in the KB) and answers user-only routes with 401', async () => {
    for (const [name, key] of Object.entries(keys).filter(([n]) => n !== 'revoked')) {
      for (const r of routes) {
        const res = await request(r, { 'x-api-key': key });
        const c = `${name} key`;
        if (r.auth.credential === 'none') assert.ok(![401, 403].includes(res.status), label(r, c, res));
        else if (r.auth.credential === 'user') assert.equal(res.status, 401, label(r, c, res));
        else if (r.auth.permission && USER_ONLY.has(r.auth.permission)) assert.equal(res.status, 403, label(r, c, res));
        else if (name !== 'plain' && folderScoped(r)) assert.notEqual(res.status, 401, label(r, c, res));
        else assert.ok(![401, 403].includes(res.status), label(r, c, res));
      }
    }
  });

  it('gives each role exactly its permissions: 403 without the route permission, through otherwise', async () => {
    for (const { name, session, permissions } of sessions) {
      for (const r of ordered(routes)) {
        const res = await request(r, bearer(session.token));
        if (r.auth.credential !== 'none' && r.auth.permission && !permissions.includes(r.auth.permission)) {
          assert.equal(res.status, 403, label(r, name, res));
        } else {
          assert.ok(![401, 403].includes(res.status), label(r, name, res));
        }
      }
    }
  });

  it("answers a credential of another organization with 404 for the first organization's ids, and changes nothing", async () => {
    const otherKey = (await newApiKey(other, { name: 'Other key' })).key;
    for (const r of routes) {
      if (r.auth.credential === 'none' || !/:[A-Za-z_]+/.test(r.url) || !['GET', 'DELETE'].includes(r.method)) continue;
      const res = await request(r, bearer(other.token), foreignIds);
      assert.equal(res.status, 404, label(r, 'other org admin', res));
      assert.match(res.headers.get('content-type') ?? '', /application\/json/, 'a JSON 404, not the router one');
      if (r.auth.credential === 'any') {
        const byKey = await request(r, { 'x-api-key': otherKey }, foreignIds);
        assert.equal(byKey.status, 404, label(r, 'other org key', byKey));
      }
    }
    // Everything is still there for its own organization.
    assert.equal((await admin.call('GET', `/org/users/${foreignIds.userId}`)).status, 200);
    assert.equal((await admin.call('GET', `/org/roles/${foreignIds.roleId}`)).status, 200);
    for (const path of [
      `/categories/${foreignIds.category_id}`,
      `/org/kb/nodes/${foreignIds.kb_node_id}`,
      `/org/prompts/${foreignIds.prompt_id}`,
      `/org/questions/${foreignIds.question_id}`,
      `/org/tracked-sources/${foreignIds.source_id}`,
      `/org/competitors/${foreignIds.competitor_id}`,
      `/org/search/queries/${foreignIds.query_id}`,
      `/org/kb/content/${foreignIds.content_id}`,
    ]) {
      assert.equal((await t.api('GET', path, { key: keys.plain })).status, 200, path);
    }
    assert.equal(
      (await admin.call('GET', '/org/api-keys')).body.some((k: { key_id: string }) => k.key_id === foreignIds.keyId),
      true,
    );
  });

  it('keeps folder-scoped keys to their folders on every KB tree route: 403 outside, and everywhere with an empty scope', async () => {
    const treeRoutes = routes.filter((r) => r.url.includes(':kb_node_id') || r.url === '/api/v1/org/kb/tree');
    assert.ok(treeRoutes.length >= 4, `only ${treeRoutes.length} KB tree routes`);
    for (const r of treeRoutes.filter((r) => ['GET', 'DELETE'].includes(r.method))) {
      const outside = await request(r, { 'x-api-key': keys.scoped }, { kb_node_id: folders.outside });
      assert.equal(outside.status, 403, label(r, 'scoped key, outside folder', outside));
      const none = await request(r, { 'x-api-key': keys.emptyScope }, { kb_node_id: folders.inside });
      assert.equal(none.status, 403, label(r, 'empty scope key', none));
      if (r.method === 'GET' && r.url.includes(':kb_node_id')) {
        const inside = await request(r, { 'x-api-key': keys.scoped }, { kb_node_id: folders.inside });
        assert.equal(inside.status, 200, label(r, 'scoped key, inside folder', inside));
      }
    }
    // Refused deletes changed nothing.
    for (const id of [folders.inside, folders.outside]) {
      assert.equal((await admin.call('GET', `/org/kb/nodes/${id}`)).status, 200);
    }
  });
});
