import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { startTestSystem, type TestSystem } from './harness.js';

let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem();
});
afterAll(async () => t.stop());

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

describe('OpenAPI description', () => {
  it('describes every route the gateway serves, with its parameters and responses', async () => {
    const doc = (await t.api('GET', '/openapi.json', { key: null })).body as OpenApiDoc;
    const routes = t.system.gateway.routes.filter((r) => r.url !== '/api/v1/openapi.json');
    assert.ok(routes.length > 50, `${routes.length} routes`);
    const missing: string[] = [];
    for (const route of routes) {
      const path = route.url.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
      const op = doc.paths[path]?.[route.method.toLowerCase()];
      if (!op) {
        missing.push(`${route.method} ${route.url}`);
        continue;
      }
      assert.ok(
        Object.keys(op.responses ?? {}).some((status) => /^2\d\d$/.test(status)),
        `${route.method} ${route.url} documents its success response`,
      );
      if (route.auth.credential !== 'none') assert.ok(op.responses?.['401'], `${route.method} ${route.url} documents 401`);
    }
    assert.deepEqual(missing, [], 'routes missing from the description');
    // The REST surface; the MCP endpoint and its OAuth routes are described beside it, outside /api/v1.
    const described = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/api/v1/'))
      .reduce((n, [, item]) => n + Object.keys(item).filter((k) => HTTP_METHODS.has(k)).length, 0);
    assert.equal(described, routes.length, 'no operation without a route');
  });

  it('is structurally valid OpenAPI 3.1', async () => {
    const doc = (await t.api('GET', '/openapi.json', { key: null })).body as OpenApiDoc;
    assert.deepEqual(openApi31Problems(doc), []);
    // The check itself finds what it looks for.
    const broken: OpenApiDoc = {
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      paths: {
        '/x/{id}': {
          get: {
            responses: { '200': { content: { 'application/json': { schema: { type: 'string', nullable: true } } } } },
            security: [{ Nope: [] }],
          },
          post: {
            parameters: [{ name: 'id', in: 'path' }],
            responses: {
              '201': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Missing' } } } },
            },
          },
        },
      },
    };
    const found = openApi31Problems(broken).join('\n');
    for (const expected of [
      'not 3.1.x',
      'nullable',
      'needs a description',
      'unknown security scheme Nope',
      '{id} has no path parameter',
      'must be required',
      'unresolved $ref',
    ]) {
      assert.ok(found.includes(expected), `${expected} in:\n${found}`);
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

/* A structural check of OpenAPI 3.1 (no validator package is installed): the rules of the
   specification that a generator gets wrong in practice, each reported with where it failed. */

interface OpenApiOperation {
  operationId?: string;
  parameters?: { name?: string; in?: string; required?: boolean; schema?: unknown; $ref?: string }[];
  requestBody?: { content?: Record<string, { schema?: unknown }>; $ref?: string };
  responses?: Record<string, { description?: unknown; content?: Record<string, { schema?: unknown }>; $ref?: string }>;
  security?: Record<string, string[]>[];
}
interface OpenApiDoc {
  openapi: string;
  info: { title?: unknown; version?: unknown };
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: {
    schemas?: Record<string, unknown>;
    securitySchemes?: Record<string, { type?: string; in?: string; name?: string; scheme?: string }>;
  };
}

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);
const JSON_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object', 'null']);

function openApi31Problems(doc: OpenApiDoc): string[] {
  const problems: string[] = [];
  const fail = (where: string, what: string) => problems.push(`${where}: ${what}`);
  if (!/^3\.1\.\d+$/.test(doc.openapi)) fail('openapi', `${doc.openapi} is not 3.1.x`);
  if (typeof doc.info?.title !== 'string' || typeof doc.info?.version !== 'string') fail('info', 'title and version are required strings');
  const schemes = doc.components?.securitySchemes ?? {};
  for (const [name, scheme] of Object.entries(schemes)) {
    if (!['apiKey', 'http', 'oauth2', 'openIdConnect', 'mutualTLS'].includes(scheme.type ?? ''))
      fail(`securitySchemes.${name}`, 'bad type');
    if (scheme.type === 'apiKey' && (!scheme.name || !['query', 'header', 'cookie'].includes(scheme.in ?? '')))
      fail(`securitySchemes.${name}`, 'apiKey needs name and in');
    if (scheme.type === 'http' && !scheme.scheme) fail(`securitySchemes.${name}`, 'http needs scheme');
  }
  const resolve = (ref: string): unknown =>
    ref.startsWith('#/')
      ? ref
          .slice(2)
          .split('/')
          .reduce<unknown>(
            (node, part) => (node as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')],
            doc,
          )
      : undefined;
  const checkSchema = (schema: unknown, where: string): void => {
    if (typeof schema === 'boolean') return;
    if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return void fail(where, 'a schema must be an object or boolean');
    const s = schema as Record<string, unknown>;
    if (typeof s.$ref === 'string' && resolve(s.$ref) === undefined) fail(where, `unresolved $ref ${s.$ref}`);
    if ('nullable' in s) fail(where, 'nullable is OpenAPI 3.0; 3.1 uses type: [..., "null"]');
    for (const k of ['exclusiveMinimum', 'exclusiveMaximum']) if (typeof s[k] === 'boolean') fail(where, `${k} must be a number in 3.1`);
    for (const t of [s.type].flat()) if (t !== undefined && !JSON_TYPES.has(t as string)) fail(where, `unknown type ${String(t)}`);
    if (s.required !== undefined && !(Array.isArray(s.required) && s.required.every((r) => typeof r === 'string')))
      fail(where, 'required must list names');
    for (const k of ['properties', 'patternProperties', '$defs', 'definitions'])
      for (const [name, sub] of Object.entries((s[k] as Record<string, unknown>) ?? {})) checkSchema(sub, `${where}.${k}.${name}`);
    for (const k of ['items', 'additionalProperties', 'not', 'contains', 'propertyNames', 'if', 'then', 'else'])
      if (s[k] !== undefined) checkSchema(s[k], `${where}.${k}`);
    for (const k of ['allOf', 'anyOf', 'oneOf', 'prefixItems'])
      if (s[k] !== undefined) {
        if (!Array.isArray(s[k])) fail(where, `${k} must be an array`);
        else (s[k] as unknown[]).forEach((sub, i) => checkSchema(sub, `${where}.${k}[${i}]`));
      }
  };
  for (const [name, schema] of Object.entries(doc.components?.schemas ?? {})) checkSchema(schema, `components.schemas.${name}`);
  const operationIds = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    if (!path.startsWith('/')) fail(path, 'a path starts with /');
    const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
    for (const [method, op] of Object.entries(item)) {
      const where = `${method.toUpperCase()} ${path}`;
      if (!HTTP_METHODS.has(method)) {
        if (!['summary', 'description', 'servers', 'parameters', '$ref'].includes(method)) fail(where, 'unknown path item field');
        continue;
      }
      if (op.operationId) {
        if (operationIds.has(op.operationId)) fail(where, `duplicate operationId ${op.operationId}`);
        operationIds.add(op.operationId);
      }
      const params = op.parameters ?? [];
      const seenParams = new Set<string>();
      for (const p of params) {
        if (p.$ref) continue;
        if (!p.name || !['query', 'header', 'path', 'cookie'].includes(p.in ?? ''))
          fail(where, `parameter ${p.name} needs name and a valid in`);
        if (seenParams.has(`${p.in}:${p.name}`)) fail(where, `duplicate parameter ${p.name}`);
        seenParams.add(`${p.in}:${p.name}`);
        if (p.in === 'path' && p.required !== true) fail(where, `path parameter ${p.name} must be required`);
        if (p.in === 'path' && !templated.includes(p.name!)) fail(where, `path parameter ${p.name} is not in the path`);
        if (p.schema !== undefined) checkSchema(p.schema, `${where} parameter ${p.name}`);
      }
      for (const name of templated) if (!seenParams.has(`path:${name}`)) fail(where, `{${name}} has no path parameter`);
      if (op.requestBody && !op.requestBody.$ref) {
        if (!op.requestBody.content || Object.keys(op.requestBody.content).length === 0) fail(where, 'requestBody needs content');
        for (const [type, media] of Object.entries(op.requestBody.content ?? {}))
          if (media.schema !== undefined) checkSchema(media.schema, `${where} body ${type}`);
      }
      if (!op.responses || Object.keys(op.responses).length === 0) fail(where, 'responses are required');
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        if (!/^([1-5]\d\d|[1-5]XX|default)$/.test(status)) fail(where, `bad response key ${status}`);
        if (response.$ref) {
          if (resolve(response.$ref) === undefined) fail(where, `unresolved $ref ${response.$ref}`);
          continue;
        }
        if (typeof response.description !== 'string') fail(`${where} ${status}`, 'a response needs a description');
        for (const [type, media] of Object.entries(response.content ?? {}))
          if (media.schema !== undefined) checkSchema(media.schema, `${where} ${status} ${type}`);
      }
      for (const requirement of op.security ?? [])
        for (const name of Object.keys(requirement)) if (!schemes[name]) fail(where, `unknown security scheme ${name}`);
    }
  }
  return problems;
}
