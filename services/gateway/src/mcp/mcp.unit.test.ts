import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { inlineRefs, toolInputSchema, toolSuccessSchema } from './route-schema.js';
import { multipartFor, requestFor } from './server.js';
import { presentedCredential } from './http.js';
import type { Tool } from './tools.js';

const tool = (method: 'GET' | 'POST' | 'PATCH', path: string, params: string[], query: string[]): Tool => ({
  row: { name: 't', title: 't', description: 't', method, path, group: 'kb', effect: 'read' },
  inputSchema: { type: 'object' },
  outputSchema: { type: 'object' },
  annotations: {},
  params: new Set(params),
  query: new Set(query),
  local: new Set(),
});

describe('MCP tool arguments to REST requests', () => {
  it('puts path parameters in the path, query fields in the query and the rest in the body', () => {
    assert.deepEqual(requestFor(tool('PATCH', '/org/prompts/:prompt_id', ['prompt_id'], []), { prompt_id: 'a/b', name: 'N' }), {
      path: '/api/v1/org/prompts/a%2Fb',
      json: { name: 'N' },
    });
    assert.deepEqual(
      requestFor(tool('GET', '/org/kb/content/:content_id/chunks', ['content_id'], ['limit']), { content_id: 'c', limit: 5 }),
      {
        path: '/api/v1/org/kb/content/c/chunks?limit=5',
      },
    );
    assert.deepEqual(requestFor(tool('POST', '/org/search', [], []), { query: 'q', tags: ['a'] }), {
      path: '/api/v1/org/search',
      json: { query: 'q', tags: ['a'] },
    });
    assert.equal(requestFor(tool('GET', '/org/kb/nodes/:kb_node_id', ['kb_node_id'], []), {}).path, '', 'a missing path parameter');
  });

  it('builds the multipart form of an upload and refuses what is not base64', () => {
    const form = multipartFor(
      { files: [{ filename: 'a"b.txt', content_base64: Buffer.from('hello').toString('base64') }], tags: ['x', 'y'], parent_id: 'p' },
      () => Buffer.from('0011', 'hex'),
    );
    assert.ok(typeof form !== 'string');
    assert.equal(form.contentType, 'multipart/form-data; boundary=----kb-mcp-0011');
    const text = form.payload.toString();
    assert.match(text, /name="files"; filename="a_b.txt"\r\nContent-Type: application\/octet-stream\r\n\r\nhello\r\n/);
    assert.equal(text.match(/name="tags"/g)?.length, 2);
    assert.match(text, /name="parent_id"\r\n\r\np\r\n/);
    assert.ok(text.endsWith('------kb-mcp-0011--\r\n'));
    assert.equal(typeof multipartFor({ files: [] }), 'string');
    assert.equal(typeof multipartFor({ files: [{ filename: 'a', content_base64: '%%%' }] }), 'string');
    assert.equal(typeof multipartFor({ files: [{ filename: 'a', content_base64: 'aGk=' }], tags: 'x' }), 'string');
  });
});

describe('MCP credentials', () => {
  const h = (headers: Record<string, string>) => presentedCredential({ headers });
  it('takes the three API-key forms as the same key, and OAuth access tokens by their grant', () => {
    const key = 'kb_dev_0000000000000000000000000000';
    const forms = [h({ 'x-api-key': key }), h({ authorization: `Bearer ${key}` }), h({ authorization: `ApiKey ${key}` })];
    for (const f of forms) assert.deepEqual(f?.headers, { 'x-api-key': key });
    assert.equal(new Set(forms.map((f) => f?.owner)).size, 1, 'one rate-limit budget whatever the form');
    const token = `kbat_${'a'.repeat(32)}_${'b'.repeat(43)}`;
    const oauth = h({ authorization: `Bearer ${token}` });
    assert.deepEqual(oauth, { headers: { authorization: `Bearer ${token}` }, owner: `grant:${'a'.repeat(32)}`, kind: 'oauth', token });
    assert.equal(h({}), undefined);
    assert.throws(() => h({ authorization: 'Basic x' }), /Malformed/);
    assert.throws(() => h({ 'x-api-key': key, authorization: `Bearer ${key}` }), /one credential/);
  });
});

describe('route schemas as tool input schemas', () => {
  it('inlines $refs and merges params, query and body; query fields with defaults are optional', () => {
    const registry = { Tag: { $id: 'Tag', type: 'string', minLength: 1 } };
    const body = inlineRefs(
      { type: 'object', properties: { tags: { type: 'array', items: { $ref: 'Tag' } } }, required: ['tags'] },
      registry,
    );
    assert.deepEqual(body, {
      type: 'object',
      properties: { tags: { type: 'array', items: { type: 'string', minLength: 1 } } },
      required: ['tags'],
    });
    const merged = toolInputSchema({
      params: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
      querystring: { type: 'object', properties: { limit: { type: 'integer', default: 50 } }, required: ['limit'] },
      body: body as Record<string, unknown>,
    });
    assert.deepEqual(Object.keys(merged.properties as object), ['id', 'limit', 'tags']);
    assert.deepEqual(merged.required, ['id', 'tags']);
    assert.deepEqual(inlineRefs({ $ref: 'Self' }, { Self: { $id: 'Self', type: 'object', properties: { next: { $ref: 'Self' } } } }), {
      type: 'object',
      properties: { next: { type: 'object' } },
    });
  });
});

describe('MCP tool output schemas', () => {
  it('are the REST success answer: the object itself, a list as { items }, nothing as { ok }, picked fields', () => {
    const obj = { type: 'object', properties: { a: { type: 'string' }, b: { type: 'integer' } }, required: ['a', 'b'] };
    assert.deepEqual(toolSuccessSchema({ response: obj, responseStatus: 200 }), obj);
    const list = { type: 'array', items: obj };
    assert.deepEqual(toolSuccessSchema({ response: list, responseStatus: 200 }), {
      type: 'object',
      properties: { items: list },
      required: ['items'],
    });
    assert.deepEqual(toolSuccessSchema({ responseStatus: 204 }), {
      type: 'object',
      properties: { ok: { type: 'boolean', const: true } },
      required: ['ok'],
    });
    assert.deepEqual(toolSuccessSchema({ response: obj, responseStatus: 200 }, ['b']), {
      type: 'object',
      properties: { b: { type: 'integer' } },
      required: ['b'],
    });
    // An intersection (allOf) is still an object schema.
    assert.equal(toolSuccessSchema({ response: { allOf: [obj, obj] }, responseStatus: 200 }).type, 'object');
  });
});
