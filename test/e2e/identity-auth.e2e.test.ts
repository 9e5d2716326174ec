import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { API_KEY, startTestSystem, type TestSystem } from './harness.js';
import { PASSWORD, asSession, bearer, logIn, newOrgAdmin, signUpAndLogIn, uniqueEmail } from './identity-fixtures.js';

let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem();
});
afterAll(async () => t.stop());

describe('POST /auth/signup', () => {
  it('creates a user (202) who can then log in, without revealing the password', async () => {
    const email = uniqueEmail('signup');
    const res = await t.api('POST', '/auth/signup', { key: null, body: { email, password: PASSWORD, name: 'Sign Up' } });
    assert.equal(res.status, 202);
    assert.equal(res.body.status, 'accepted');
    assert.equal(res.body.email, email);
    assert.equal(typeof res.body.message, 'string');
    assert.doesNotMatch(res.text, /correct horse/);
    const login = await t.api('POST', '/auth/login', { key: null, body: { email, password: PASSWORD } });
    assert.equal(login.status, 200);
    assert.equal(login.body.user.name, 'Sign Up');
  });

  it('answers a taken email exactly as a new one (no 409: signup does not reveal accounts), and changes nothing', async () => {
    const email = uniqueEmail('dup');
    const first = await t.api('POST', '/auth/signup', { key: null, body: { email, password: PASSWORD, name: 'A' } });
    const other = 'another password entirely';
    const again = await t.api('POST', '/auth/signup', { key: null, body: { email, password: other, name: 'B' } });
    assert.equal(again.status, first.status);
    assert.deepEqual(again.body, first.body);
    const upper = await t.api('POST', '/auth/signup', { key: null, body: { email: email.toUpperCase(), password: other, name: 'B' } });
    assert.equal(upper.status, 202);
    assert.deepEqual(Object.keys(upper.body).sort(), Object.keys(first.body).sort());
    assert.equal(upper.body.message, first.body.message);
    // The account kept its password and name.
    assert.equal((await t.api('POST', '/auth/login', { key: null, body: { email, password: other } })).status, 401);
    const login = await t.api('POST', '/auth/login', { key: null, body: { email, password: PASSWORD } });
    assert.equal(login.status, 200);
    assert.equal(login.body.user.name, 'A');
  });

  it('rejects a short password, a bad email, a missing name and unknown fields with 400', async () => {
    const email = uniqueEmail('bad');
    for (const body of [
      { email, password: 'elevenchars', name: 'x' },
      { email: 'not-an-email', password: PASSWORD, name: 'x' },
      { email, password: PASSWORD },
      { email, password: PASSWORD, name: 'x', role: 'admin' },
    ]) {
      const res = await t.api('POST', '/auth/signup', { key: null, body });
      assert.equal(res.status, 400, JSON.stringify(body));
    }
    // Nothing was created by the rejected attempts.
    assert.equal((await t.api('POST', '/auth/signup', { key: null, body: { email, password: PASSWORD, name: 'ok' } })).status, 202);
    assert.equal((await t.api('POST', '/auth/login', { key: null, body: { email, password: PASSWORD } })).body.user.name, 'ok');
  });
});

describe('POST /auth/login', () => {
  it('returns a bearer token with its expiry, the user and no organization for a new user', async () => {
    const email = uniqueEmail('login');
    await t.api('POST', '/auth/signup', { key: null, body: { email, password: PASSWORD, name: 'Log In' } });
    const res = await t.api('POST', '/auth/login', { key: null, body: { email, password: PASSWORD } });
    assert.equal(res.status, 200);
    assert.match(res.body.token, /^kbs_/);
    assert.equal(res.body.token_type, 'Bearer');
    assert.ok(Date.parse(res.body.expires_at) > Date.now());
    assert.equal(res.body.user.email, email);
    assert.equal(res.body.organization, null);
  });

  it('returns the current organization of a member', async () => {
    const res = await t.api('POST', '/auth/login', { key: null, body: { email: 'admin@example.com', password: 'development-password' } });
    assert.equal(res.status, 200);
    assert.equal(res.body.organization.name, 'Development');
  });

  it('answers a wrong password and an unknown email with 401, and a malformed body with 400', async () => {
    const { email } = await signUpAndLogIn(t, 'wrong');
    assert.equal((await t.api('POST', '/auth/login', { key: null, body: { email, password: 'not the password' } })).status, 401);
    assert.equal(
      (await t.api('POST', '/auth/login', { key: null, body: { email: uniqueEmail('nobody'), password: PASSWORD } })).status,
      401,
    );
    assert.equal((await t.api('POST', '/auth/login', { key: null, body: { email } })).status, 400);
  });
});

describe('GET /auth/me and session credentials', () => {
  it('describes the signed-in user, their current organization, permissions and memberships', async () => {
    const admin = await newOrgAdmin(t, 'me');
    const res = await admin.call('GET', '/auth/me');
    assert.equal(res.status, 200);
    assert.equal(res.body.user.email, admin.email);
    assert.equal(res.body.organization.org_id, admin.org_id);
    assert.ok(res.body.permissions.includes('update:org'));
    assert.deepEqual(
      res.body.organizations.map((o: { org_id: string; role_name: string }) => [o.org_id, o.role_name]),
      [[admin.org_id, 'admin']],
    );
  });

  it('answers no credential, a malformed or unknown token, an API key, and both credentials at once with 401', async () => {
    const user = await signUpAndLogIn(t, 'cred');
    assert.equal((await t.api('GET', '/auth/me', { key: null })).status, 401);
    for (const authorization of ['Bearer', 'Bearer nope', `Basic ${user.token}`, `Bearer kbs_${'A'.repeat(43)}`]) {
      assert.equal((await t.api('GET', '/auth/me', { key: null, headers: { authorization } })).status, 401, authorization);
    }
    assert.equal((await t.api('GET', '/auth/me', { key: API_KEY })).status, 401);
    assert.equal((await t.api('GET', '/auth/me', { key: API_KEY, headers: bearer(user.token) })).status, 401);
  });
});

describe('POST /auth/logout', () => {
  it('ends the session (204): its token is refused from then on, other sessions live on', async () => {
    const user = await signUpAndLogIn(t, 'logout');
    const other = await logIn(t, user.email);
    assert.equal((await user.call('POST', '/auth/logout')).status, 204);
    assert.equal((await user.call('GET', '/auth/me')).status, 401);
    assert.equal((await user.call('POST', '/auth/logout')).status, 401);
    assert.equal((await other.call('GET', '/auth/me')).status, 200);
  });

  it('answers an API key with 401', async () => {
    assert.equal((await t.api('POST', '/auth/logout')).status, 401);
  });
});

describe('POST /orgs', () => {
  it('makes the creator admin, gives the organization its own built-in roles and switches the session to it', async () => {
    const user = await signUpAndLogIn(t, 'creator');
    assert.equal((await user.call('GET', '/org/me')).status, 404, 'no organization yet');
    const res = await user.call('POST', '/orgs', { name: 'Acme Widgets' });
    assert.equal(res.status, 201);
    assert.equal(res.body.name, 'Acme Widgets');
    assert.match(res.body.slug, /^acme-widgets/);
    assert.deepEqual(res.body.websites, []);
    assert.equal(res.body.runs_enabled, true);
    const me = await user.call('GET', '/org/me');
    assert.equal(me.status, 200);
    assert.equal(me.body.org_id, res.body.org_id);
    const roles = await user.call('GET', '/org/roles');
    assert.deepEqual(roles.body.map((r: { name: string }) => r.name).sort(), ['admin', 'collaborator', 'viewer']);
    assert.ok(roles.body.every((r: { built_in: boolean }) => r.built_in));
    const users = await user.call('GET', '/org/users');
    assert.equal(users.body.length, 1);
    assert.equal(users.body[0].role.name, 'admin');

    // Another organization's built-in roles are its own copies.
    const other = await newOrgAdmin(t, 'other');
    const otherRoles = await other.call('GET', '/org/roles');
    const ids = new Set(roles.body.map((r: { role_id: string }) => r.role_id));
    assert.ok(otherRoles.body.every((r: { role_id: string }) => !ids.has(r.role_id)));
  });

  it('derives a free slug from the name when none is sent, so two organizations may share a name', async () => {
    const name = `Same Name ${Date.now()}`;
    const first = await (await signUpAndLogIn(t, 'same-a')).call('POST', '/orgs', { name });
    const second = await (await signUpAndLogIn(t, 'same-b')).call('POST', '/orgs', { name });
    assert.equal(first.status, 201, first.text);
    assert.equal(second.status, 201, second.text);
    assert.equal(first.body.slug, name.toLowerCase().replace(/ /g, '-'));
    assert.notEqual(second.body.slug, first.body.slug);
    assert.match(second.body.slug, new RegExp(`^${first.body.slug}-[a-z0-9]+$`));
    // A slug that was sent is never changed behind the caller's back: taken is 409.
    const third = await (await signUpAndLogIn(t, 'same-c')).call('POST', '/orgs', { name, slug: first.body.slug });
    assert.equal(third.status, 409);
    // A long name still gives a valid slug of at most 63 characters, suffixed or not.
    const long = 'A very long organization name '.repeat(4);
    for (const label of ['long-a', 'long-b']) {
      const res = await (await signUpAndLogIn(t, label)).call('POST', '/orgs', { name: long });
      assert.equal(res.status, 201, res.text);
      assert.match(res.body.slug, /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/);
    }
  });

  it('answers a taken slug with 409, a bad slug or name with 400, and an API key with 401', async () => {
    const user = await signUpAndLogIn(t, 'slugs');
    const slug = `unique-${Date.now()}`;
    assert.equal((await user.call('POST', '/orgs', { name: 'First', slug })).status, 201);
    assert.equal((await user.call('POST', '/orgs', { name: 'Second', slug })).status, 409);
    assert.equal((await user.call('POST', '/orgs', { name: 'Third', slug: 'Not A Slug' })).status, 400);
    assert.equal((await user.call('POST', '/orgs', { name: 'x' })).status, 400);
    assert.equal((await t.api('POST', '/orgs', { body: { name: 'By key' } })).status, 401);
  });
});

describe('PUT /auth/session/organization', () => {
  it("switches the session's current organization among the user's organizations", async () => {
    const user = await newOrgAdmin(t, 'switcher');
    const second = await user.call('POST', '/orgs', { name: 'Second org' });
    assert.equal((await user.call('GET', '/org/me')).body.org_id, second.body.org_id);
    const res = await user.call('PUT', '/auth/session/organization', { org_id: user.org_id });
    assert.equal(res.status, 200);
    assert.equal(res.body.organization.org_id, user.org_id);
    assert.equal((await user.call('GET', '/org/me')).body.org_id, user.org_id);
  });

  it('answers an organization the user does not belong to with 404, a bad id with 400, an API key with 401', async () => {
    const user = await newOrgAdmin(t, 'stranger');
    const other = await newOrgAdmin(t, 'owner');
    assert.equal((await user.call('PUT', '/auth/session/organization', { org_id: other.org_id })).status, 404);
    assert.equal((await user.call('PUT', '/auth/session/organization', { org_id: 'nope' })).status, 400);
    assert.equal((await t.api('PUT', '/auth/session/organization', { body: { org_id: other.org_id } })).status, 401);
    assert.equal((await asSession(t, user.token)('GET', '/org/me')).body.org_id, user.org_id);
  });
});
