import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { ApiResponse, TestSystem } from './harness.js';

/** Sign-up, log-in and organization helpers shared by the identity, credits and authorization tests. */

export const PASSWORD = 'correct horse battery staple';

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

export interface SignedIn {
  user_id: string;
  email: string;
  token: string;
  /** Calls the API with this session (no API key). */
  call: <T = any>(method: string, path: string, body?: unknown) => Promise<ApiResponse<T>>;
}

export const uniqueEmail = (label = 'user') => `${label}-${randomUUID().slice(0, 8)}@example.test`;

export function asSession(t: TestSystem, token: string): SignedIn['call'] {
  return (method, path, body) => t.api(method, path, { key: null, headers: bearer(token), ...(body !== undefined && { body }) });
}

export async function signUpAndLogIn(t: TestSystem, label = 'user'): Promise<SignedIn> {
  const email = uniqueEmail(label);
  const signup = await t.api('POST', '/auth/signup', { key: null, body: { email, password: PASSWORD, name: `${label} person` } });
  assert.equal(signup.status, 202, signup.text);
  return logIn(t, email);
}

export async function logIn(t: TestSystem, email: string, password = PASSWORD): Promise<SignedIn> {
  const login = await t.api('POST', '/auth/login', { key: null, body: { email, password } });
  assert.equal(login.status, 200, login.text);
  return { user_id: login.body.user.user_id, email, token: login.body.token, call: asSession(t, login.body.token) };
}

/** A new user who creates a new organization (and so is its admin). */
export async function newOrgAdmin(t: TestSystem, label = 'admin'): Promise<SignedIn & { org_id: string }> {
  const admin = await signUpAndLogIn(t, label);
  const org = await admin.call('POST', '/orgs', { name: `${label} org ${randomUUID().slice(0, 6)}` });
  assert.equal(org.status, 201, org.text);
  return { ...admin, org_id: org.body.org_id };
}

export async function roleId(admin: SignedIn, name: string): Promise<string> {
  const roles = await admin.call<{ role_id: string; name: string }[]>('GET', '/org/roles');
  assert.equal(roles.status, 200, roles.text);
  const role = roles.body.find((r) => r.name === name);
  assert.ok(role, `role ${name}`);
  return role.role_id;
}

/** A new user added to the admin's organization with a built-in role, signed in there. */
export async function newMember(t: TestSystem, admin: SignedIn, role: string): Promise<SignedIn> {
  const member = await signUpAndLogIn(t, role);
  const added = await admin.call('POST', '/org/users', { email: member.email, role_id: await roleId(admin, role) });
  assert.equal(added.status, 201, added.text);
  // Log in again: the first organization becomes the session's current one.
  return logIn(t, member.email);
}

export async function newApiKey(
  admin: SignedIn,
  body: { name: string; folder_scope?: string[] | null },
): Promise<{ key: string; key_id: string }> {
  const res = await admin.call('POST', '/org/api-keys', body);
  assert.equal(res.status, 201, res.text);
  return { key: res.body.key, key_id: res.body.key_id };
}
