import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestSystem, type TestSystem } from './harness.js';

let t: TestSystem;
before(async () => {
  t = await startTestSystem();
});
after(async () => t.stop());

describe('authentication (X-API-Key)', () => {
  const routes: [string, string, unknown?][] = [
    ['GET', '/categories'],
    ['GET', '/categories/all'],
    ['POST', '/categories', { name: 'Nope' }],
    ['GET', '/categories/00000000-0000-4000-8000-000000000000'],
    ['DELETE', '/categories/00000000-0000-4000-8000-000000000000/topics/00000000-0000-4000-8000-000000000001'],
  ];
  for (const [method, path, body] of routes) {
    it(`${method} ${path}: 401 without a key, with a malformed key and with an unknown key`, async () => {
      for (const key of [null, 'short', 'has spaces in it that are not allowed', 'kb_unknown_key_000000000000000000000']) {
        const res = await t.api(method, path, { key, body });
        assert.equal(res.status, 401, `key ${String(key)}: ${res.text}`);
        assert.equal(typeof res.body.error.code, 'string');
      }
    });
  }

  it('checks the credential before the body: a bad body without a key is 401, not 400', async () => {
    const res = await t.api('POST', '/categories', { key: null, body: { name: 1 } });
    assert.equal(res.status, 401);
  });
});

describe('routing and request ids', () => {
  it('answers a path with no route with a plain-text 404 before any auth', async () => {
    for (const path of ['/nowhere', '/categories/x/y/z/w', '/org/does-not-exist']) {
      const res = await t.api('GET', path, { key: null });
      assert.equal(res.status, 404);
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    }
    const outside = await fetch(`${t.url}/not-api`);
    assert.equal(outside.status, 404);
  });

  it('echoes a sane x-request-id and makes one up otherwise', async () => {
    const given = await t.api('GET', '/categories', { headers: { 'x-request-id': 'client-req-42' } });
    assert.equal(given.headers.get('x-request-id'), 'client-req-42');
    const made = await t.api('GET', '/categories', { headers: { 'x-request-id': 'bad id with spaces' } });
    assert.match(made.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    const error = await t.api('GET', '/categories', { key: null });
    assert.match(error.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  });
});

describe('GET /openapi.json', () => {
  it('serves OpenAPI 3.1 built from the route schemas, with security and permissions per operation', async () => {
    const res = await t.api('GET', '/openapi.json', { key: null });
    assert.equal(res.status, 200);
    assert.equal(res.body.openapi, '3.1.0');
    const ops = res.body.paths['/api/v1/categories/{category_id}'];
    assert.ok(ops.get && ops.put && ops.patch && ops.delete);
    assert.equal(ops.patch['x-permission'], 'write:kb');
    assert.deepEqual(ops.get.security, [{ ApiKey: [] }, { BearerSession: [] }]);
    assert.ok(ops.get.responses['404']);
    const create = res.body.paths['/api/v1/categories'].post;
    assert.ok(create.requestBody.content['application/json'].schema.properties.name);
    assert.ok(res.body.components.securitySchemes.ApiKey);
    for (const path of [
      '/api/v1/categories/all',
      '/api/v1/categories/batch-create',
      '/api/v1/categories/{category_id}/topics/batch-create',
    ]) {
      assert.ok(res.body.paths[path], path);
    }
  });
});

describe('durability', () => {
  it('keeps every write across a restart on the same data directory', async () => {
    const sys = await startTestSystem();
    try {
      const created = await sys.api('POST', '/categories/batch-create', {
        body: { categories: [{ name: 'Survives', description: 'restart', topics: [{ name: 'Also survives' }] }] },
      });
      assert.equal(created.status, 201);
      await sys.restart();
      const all = await sys.api('GET', '/categories/all');
      assert.equal(all.status, 200);
      assert.deepEqual(all.body, created.body);
      assert.equal((await sys.api('POST', '/categories', { body: { name: 'survives' } })).status, 409);
    } finally {
      await sys.stop();
    }
  });
});
