import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { API_KEY, startTestSystem, type TestSystem } from './harness.js';
import { bearer, newOrgAdmin, type SignedIn } from './identity-fixtures.js';

/**
 * Bad input is a clear 400 on every route, decided by the gateway's shared
 * validation layer (issue 13 item 5), never a 500 and never silently accepted.
 */

let t: TestSystem;
let admin: SignedIn & { org_id: string };
const SOME_ID = '00000000-0000-4000-8000-000000000000';

interface Operation {
  method: string;
  path: string;
  security: Record<string, unknown>[];
  parameters: { name: string; in: string; schema?: Record<string, unknown> }[];
  requestBody?: { content?: Record<string, { schema?: unknown }> };
}

async function operations(): Promise<Operation[]> {
  const doc = await t.api('GET', '/openapi.json', { key: null });
  assert.equal(doc.status, 200);
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.body.paths as Record<string, Record<string, any>>)) {
    // The REST surface; the MCP endpoint and its OAuth metadata follow their own protocols.
    if (!path.startsWith('/api/v1/')) continue;
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      out.push({
        method: method.toUpperCase(),
        path,
        security: op.security ?? [],
        parameters: op.parameters ?? [],
        requestBody: op.requestBody,
      });
    }
  }
  return out;
}

function credentialFor(op: Operation): { key?: string | null; headers?: Record<string, string> } {
  const onlySession = op.security.length > 0 && op.security.every((s) => 'BearerSession' in s);
  return onlySession ? { key: null, headers: bearer(admin.token) } : {};
}

const concrete = (path: string) => path.replace(/^\/api\/v1/, '').replace(/\{[^}]+\}/g, SOME_ID);

beforeAll(async () => {
  t = await startTestSystem();
  admin = await newOrgAdmin(t, 'badinput');
});
afterAll(async () => t.stop());

describe('unknown query parameters', () => {
  it('are 400 on every route, naming the parameter', async () => {
    const ops = await operations();
    assert.ok(ops.length > 50, `${ops.length} operations`);
    const accepted: string[] = [];
    for (const op of ops) {
      const res = await t.api(op.method, `${concrete(op.path)}?zz_unknown=1`, {
        ...credentialFor(op),
        ...(['POST', 'PUT', 'PATCH'].includes(op.method) && { body: {} }),
      });
      if (res.status !== 400 && res.status !== 401 && res.status !== 403) accepted.push(`${op.method} ${op.path} -> ${res.status}`);
      // (fastify judges a body before the query, so an empty body may be named first)
      else if (res.status === 400 && (op.method === 'GET' || op.method === 'DELETE'))
        assert.match(res.text, /zz_unknown/, `${op.method} ${op.path}: ${res.text}`);
    }
    assert.deepEqual(accepted, []);
  });

  it('GET /categories/all?foo=1 is 400', async () => {
    const res = await t.api('GET', '/categories/all?foo=1');
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.details.field, 'foo');
  });

  it('sort and order are query parameters of analytics routes only', async () => {
    for (const op of await operations()) {
      const names = op.parameters.filter((p) => p.in === 'query').map((p) => p.name);
      if (names.includes('sort') || names.includes('order'))
        assert.match(op.path, /^\/api\/v1\/org\/analytics\//, `${op.method} ${op.path}`);
    }
    assert.equal((await t.api('GET', '/categories?sort=name')).status, 400);
    assert.equal((await t.api('GET', '/content?order=asc')).status, 400);
  });
});

describe('integer parameters', () => {
  it('every integer parameter has a minimum and a maximum that a 32-bit gRPC field holds', async () => {
    const unbounded: string[] = [];
    for (const op of await operations()) {
      for (const p of op.parameters) {
        const s = p.schema ?? {};
        if (s.type !== 'integer') continue;
        const max = s.maximum as number | undefined;
        const min = s.minimum as number | undefined;
        if (max === undefined || min === undefined || max > 2147483647 || min < -2147483648)
          unbounded.push(`${op.method} ${op.path} ${p.name}`);
      }
    }
    assert.deepEqual(unbounded, []);
  });

  for (const value of ['Infinity', '1e309', '9'.repeat(4000), '2147483648', '4294967297', '-1', '1.5']) {
    it(`offset=${value.slice(0, 12)} is 400 on the category, content, and organization lists`, async () => {
      for (const path of ['/categories', '/content', '/org/search/queries', '/org/prompts', '/prompts']) {
        const res = await t.api('GET', `${path}?offset=${value}`);
        assert.equal(res.status, 400, `${path}: ${res.status} ${res.text.slice(0, 200)}`);
        assert.equal(res.body.error.details.field, 'offset', res.text);
      }
    });
  }

  it('the largest accepted offset is answered normally', async () => {
    const res = await t.api('GET', '/categories?offset=2147483647');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, []);
  });
});

describe('open JSON fields', () => {
  it('a body nested deeper than the bound is 400, on any route', async () => {
    // Built as text: JSON.stringify itself cannot write it.
    const deep = `${'['.repeat(10_000)}"x"${']'.repeat(10_000)}`;
    for (const [path, field] of [
      ['/org/competitors/batch', 'competitors'],
      ['/org/tracked-sources/batch', 'sources'],
      ['/categories', 'name'],
    ] as const) {
      const res = await t.api('POST', path, { rawBody: `{"${field}":[${deep}]}`, headers: { 'content-type': 'application/json' } });
      assert.equal(res.status, 400, `${path}: ${res.text.slice(0, 200)}`);
      assert.equal(res.body.error.code, 'too_deeply_nested', res.text);
    }
  });

  it('a body within the bound is judged as usual', async () => {
    let nested: unknown = 'x';
    for (let i = 0; i < 10; i++) nested = [nested];
    const res = await t.api('POST', '/categories', { body: { name: 'Nested ok', description: JSON.stringify(nested) } });
    assert.equal(res.status, 201, res.text);
  });
});

describe('names', () => {
  for (const [label, ch] of [
    ['NUL', '\u0000'],
    ['a line feed', '\n'],
    ['an escape', '\u001b'],
    ['DEL', '\u007f'],
  ] as const) {
    it(`a name holding ${label} is 400 on every create route`, async () => {
      for (const [path, body] of [
        ['/categories', { name: `Bad${ch}name` }],
        ['/org/kb/folders', { name: `Bad${ch}name` }],
        ['/org/tags', { name: `Bad${ch}name` }],
        ['/org/competitors', { name: `Bad${ch}name` }],
      ] as const) {
        const res = await t.api('POST', path, { body });
        assert.equal(res.status, 400, `${path}: ${res.status} ${res.text}`);
        assert.equal(res.body.error.details.field, 'name', res.text);
      }
    });
  }

  it('a control character in a multipart name field (title) is 400 and stores nothing', async () => {
    const form = new FormData();
    form.append('file', new Blob(['text under a bad title'], { type: 'text/plain' }), 'titled.txt');
    form.append('title', 'Bad\u0000title');
    const res = await fetch(`${t.url}/api/v1/content/file`, { method: 'POST', headers: { 'x-api-key': API_KEY }, body: form });
    const text = await res.text();
    assert.equal(res.status, 400, text);
    assert.match(text, /title/);
  });

  it('a NUL byte in an uploaded filename is not stored', async () => {
    const form = new FormData();
    form.append('file', new Blob(['plain text about filenames'], { type: 'text/plain' }), 'evil\u0000name\u0007.txt');
    const res = await fetch(`${t.url}/api/v1/org/kb/upload`, {
      method: 'POST',
      headers: { 'x-api-key': API_KEY },
      body: form,
    });
    const text = await res.text();
    assert.ok(res.status === 202 || res.status === 201, text);
    assert.doesNotMatch(text, /\\u0000|\\u0007/);
    assert.match(text, /evilname\.txt/);
  });
});

describe('multipart bodies', () => {
  it('a multipart body without a boundary is 400', async () => {
    const res = await t.api('POST', '/org/kb/upload', { rawBody: 'hello', headers: { 'content-type': 'multipart/form-data' } });
    assert.equal(res.status, 400, res.text);
  });

  it('a truncated multipart body is 400', async () => {
    const boundary = 'xxBOUNDARYxx';
    const rawBody = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello wor`;
    const res = await t.api('POST', '/org/kb/upload', {
      rawBody,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    assert.equal(res.status, 400, res.text);
  });
});

describe('report windows', () => {
  const routes = ['/org/analytics/overview', '/org/analytics/domains', '/org/analytics/answers/latest', '/org/analytics/timeseries'];

  for (const query of ['from=2024-02-30', 'to=2023-02-29', 'from=2024-13-01', 'from=2024-04-31T10:00:00Z', 'to=2024-01-01T25:00:00Z']) {
    it(`an impossible date (${query}) is 400 on every report`, async () => {
      for (const path of routes) {
        const res = await t.api('GET', `${path}?${query}`);
        assert.equal(res.status, 400, `${path}: ${res.text}`);
      }
    });
  }

  it('a window reversed inside one day is 400 on every report, as one reversed across days is', async () => {
    for (const query of [
      'from=2024-03-01T12:00:00Z&to=2024-03-01T10:00:00Z',
      'from=2024-03-02&to=2024-03-01',
      'from=2024-03-02&to=2024-03-01T23:59:00Z',
    ]) {
      for (const path of routes) {
        const res = await t.api('GET', `${path}?${query}`);
        assert.equal(res.status, 400, `${path}?${query}: ${res.text}`);
        assert.equal(res.body.error.details.field, 'from');
      }
    }
  });

  it('a real leap day and a window inside one day are answered', async () => {
    for (const query of [
      'from=2024-02-29&to=2024-02-29',
      'from=2024-03-01T10:00:00Z&to=2024-03-01T12:00:00Z',
      'from=2024-03-01T10:00:00Z&to=2024-03-01',
    ]) {
      for (const path of routes) {
        const res = await t.api('GET', `${path}?${query}`);
        assert.equal(res.status, 200, `${path}?${query}: ${res.text}`);
      }
    }
  });
});
