import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { startTestSystem, type TestSystem } from './harness.js';
import { PASSWORD, asSession, logIn } from './identity-fixtures.js';

/** The newcomer's path of issue 3, from a fresh start, over HTTP only. */
let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem();
});
afterAll(async () => t.stop());

describe('a newcomer from a fresh start', () => {
  it('signs up, creates an organization, invites a viewer, manages keys and runs out of credits', async () => {
    // Sign up and log in.
    const signup = await t.api('POST', '/auth/signup', {
      key: null,
      body: { email: 'founder@acme.test', password: PASSWORD, name: 'Founder' },
    });
    assert.equal(signup.status, 202);
    const login = await t.api('POST', '/auth/login', { key: null, body: { email: 'founder@acme.test', password: PASSWORD } });
    assert.equal(login.status, 200);
    const founder = asSession(t, login.body.token);

    // Create an organization: the founder is its admin.
    const org = await founder('POST', '/orgs', { name: 'Acme' });
    assert.equal(org.status, 201);
    assert.equal((await founder('GET', '/auth/me')).body.organizations[0].role_name, 'admin');

    // Invite a second user as viewer; the viewer may not flip the runs switch.
    await t.api('POST', '/auth/signup', { key: null, body: { email: 'viewer@acme.test', password: PASSWORD, name: 'Viewer' } });
    const roles = (await founder('GET', '/org/roles')).body as { role_id: string; name: string }[];
    const viewerRole = roles.find((r) => r.name === 'viewer')!.role_id;
    const invited = await founder('POST', '/org/users', { email: 'viewer@acme.test', role_id: viewerRole });
    assert.equal(invited.status, 201);
    const viewer = await logIn(t, 'viewer@acme.test');
    assert.equal((await viewer.call('GET', '/org/me')).body.org_id, org.body.org_id);
    assert.equal((await viewer.call('PATCH', '/org/me/runs-enabled', { runs_enabled: false })).status, 403);
    assert.equal((await founder('PATCH', '/org/me/runs-enabled', { runs_enabled: false })).status, 200);

    // A folder-scoped key: the secret is shown once, and the key reaches only its folder.
    const docs = await founder('POST', '/org/kb/folders', { name: 'Docs' });
    const internal = await founder('POST', '/org/kb/folders', { name: 'Internal' });
    assert.equal(docs.status, 201, docs.text);
    const created = await founder('POST', '/org/api-keys', { name: 'Docs bot', folder_scope: [docs.body.kb_node_id] });
    assert.equal(created.status, 201);
    const secret: string = created.body.key;
    const listed = await founder('GET', '/org/api-keys');
    assert.equal(listed.body.length, 1);
    assert.ok(!listed.text.includes(secret));
    assert.equal((await t.api('GET', '/org/me', { key: secret })).body.org_id, org.body.org_id);
    assert.equal((await t.api('GET', `/org/kb/nodes/${docs.body.kb_node_id}`, { key: secret })).status, 200);
    assert.equal((await t.api('GET', `/org/kb/nodes/${internal.body.kb_node_id}`, { key: secret })).status, 403);

    // Revoked: 401 at once.
    assert.equal((await founder('DELETE', `/org/api-keys/${created.body.key_id}`)).status, 204);
    assert.equal((await t.api('GET', '/org/me', { key: secret })).status, 401);
    assert.equal((await t.api('GET', `/org/kb/nodes/${docs.body.kb_node_id}`, { key: secret })).status, 401);

    // A new organization has no credits: a metered operation is 402 and does nothing.
    assert.equal((await founder('GET', '/org/credits/balance')).body.balance, 0);
    const search = await founder('POST', '/org/search', { query: 'what do we sell?' });
    assert.equal(search.status, 402);
    const searches = async () => {
      const queries = await founder('GET', '/org/search/queries');
      assert.equal(queries.status, 200);
      return queries.headers.get('x-total-count');
    };
    assert.equal(await searches(), '0');
    assert.deepEqual((await founder('GET', '/org/credits/usage')).body, []);

    // With one credit, one search runs; then the organization has run out: 402, and no second search.
    assert.equal((await founder('POST', '/org/credits/grants', { amount: 1 })).status, 201);
    assert.equal((await founder('POST', '/org/search', { query: 'what do we sell?' })).status, 200);
    assert.equal((await founder('POST', '/org/search', { query: 'and what else?' })).status, 402);
    assert.equal(await searches(), '1');
    assert.equal((await founder('GET', '/org/credits/balance')).body.balance, 0);
  });
});
