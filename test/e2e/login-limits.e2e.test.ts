import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { startTestSystem, type TestSystem } from './harness.js';
import { PASSWORD, uniqueEmail } from './identity-fixtures.js';

/** Login rate limits over HTTP (issue 13 item 3); the backoff's shape is unit-tested in login-throttle.unit.test.ts. */

let t: TestSystem;
beforeAll(async () => {
  // Long windows, so a run never straddles one; small allowances.
  t = await startTestSystem({
    LOGIN_FAILURES_PER_ACCOUNT: '3',
    LOGIN_FAILURES_PER_ADDRESS: '8',
    LOGIN_BACKOFF_BASE_SECONDS: '3600',
    LOGIN_BACKOFF_MAX_SECONDS: '7200',
  });
});
afterAll(async () => t.stop());

const signup = async (email: string) => {
  const res = await t.api('POST', '/auth/signup', { key: null, body: { email, password: PASSWORD, name: 'Limited' } });
  assert.equal(res.status, 202, res.text);
};
const login = (email: string, password: string) => t.api('POST', '/auth/login', { key: null, body: { email, password } });

describe('POST /auth/login rate limits', () => {
  it('answers 429 with Retry-After once an account has failed too often from this address, even to the right password', async () => {
    const email = uniqueEmail('limited');
    await signup(email);
    for (let i = 0; i < 3; i++) assert.equal((await login(email, 'wrong password number')).status, 401);
    for (const password of ['wrong password number', PASSWORD]) {
      const res = await login(email, password);
      assert.equal(res.status, 429, res.text);
      assert.equal(res.body.error.code, 'login_rate_limited');
      const retryAfter = Number(res.headers.get('retry-after'));
      assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 3600, `retry-after ${retryAfter}`);
    }
  });

  it('never counts a correct password', async () => {
    const email = uniqueEmail('fine');
    await signup(email);
    for (let i = 0; i < 6; i++) assert.equal((await login(email, PASSWORD)).status, 200);
  });

  it('limits failures over many accounts from one address', async () => {
    // 3 failures above, plus these: the address allows 8 before the backoff.
    const emails = Array.from({ length: 6 }, () => uniqueEmail('spray'));
    const statuses: number[] = [];
    for (const email of emails) statuses.push((await login(email, 'spraying one password')).status);
    assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429]);
    const res = await login(uniqueEmail('another'), 'spraying one password');
    assert.equal(res.status, 429);
    assert.ok(Number(res.headers.get('retry-after')) >= 1);
  });

  it('is described in the OpenAPI document', async () => {
    const doc = await t.api('GET', '/openapi.json', { key: null });
    assert.ok(doc.body.paths['/api/v1/auth/login'].post.responses['429']);
    assert.ok(doc.body.paths['/api/v1/auth/signup'].post.responses['202']);
    assert.equal(doc.body.paths['/api/v1/auth/signup'].post.responses['409'], undefined);
  });
});
