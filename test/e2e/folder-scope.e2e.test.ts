import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { startTestSystem, type TestSystem } from './harness.js';

// Folder-scoped keys come from POST /org/api-keys (a signed-in admin); the same
// rules are also covered over gRPC by services/knowledge-base/src/kb-tree.int.test.ts.
const ADMIN = { email: 'admin@example.com', password: 'development-password' };

let t: TestSystem;
let session: string;

beforeAll(async () => {
  t = await startTestSystem();
  const login = await t.api('POST', '/auth/login', { key: null, body: ADMIN });
  assert.equal(login.status, 200, login.text);
  session = login.body.token;
});
afterAll(async () => t.stop());

const keyScopedTo = async (folder_scope: string[] | null): Promise<string> => {
  const res = await t.api('POST', '/org/api-keys', {
    key: null,
    headers: { authorization: `Bearer ${session}` },
    body: { name: 'Scoped key', folder_scope },
  });
  assert.equal(res.status, 201, res.text);
  return res.body.key;
};
const folder = async (name: string, parent_id?: string, key?: string) => {
  const res = await t.api('POST', '/org/kb/folders', { body: { name, ...(parent_id && { parent_id }) }, ...(key && { key }) });
  assert.equal(res.status, 201, res.text);
  return res.body as { kb_node_id: string; name: string };
};

describe('folder-scoped API keys (spec 5.2)', () => {
  it('see and touch only their folders: 403 outside, the root and the whole tree included', async () => {
    const a = await folder('Scope A');
    const a1 = await folder('Scope A1', a.kb_node_id);
    const b = await folder('Scope B');
    const root = (await t.api('GET', '/org/kb/tree')).body;
    const key = await keyScopedTo([a.kb_node_id]);

    const inside = await t.api('GET', `/org/kb/nodes/${a.kb_node_id}`, { key });
    assert.equal(inside.status, 200);
    assert.deepEqual(
      inside.body.children.map((c: { kb_node_id: string }) => c.kb_node_id),
      [a1.kb_node_id],
    );
    assert.equal((await t.api('GET', `/org/kb/nodes/${a1.kb_node_id}`, { key })).status, 200);
    const path = await t.api('GET', `/org/kb/nodes/${a1.kb_node_id}/path`, { key });
    assert.deepEqual(
      path.body.map((n: { name: string }) => n.name),
      ['Scope A', 'Scope A1'],
      'the path starts at the scope folder',
    );
    const created = await folder('Made by scoped key', a.kb_node_id, key);
    assert.equal((await t.api('PATCH', `/org/kb/nodes/${created.kb_node_id}`, { key, body: { name: 'Renamed' } })).status, 200);
    assert.equal((await t.api('DELETE', `/org/kb/nodes/${created.kb_node_id}`, { key })).status, 204);

    for (const [method, path, body] of [
      ['GET', '/org/kb/tree'],
      ['GET', `/org/kb/nodes/${root.kb_node_id}`],
      ['GET', `/org/kb/nodes/${b.kb_node_id}`],
      ['GET', `/org/kb/nodes/${b.kb_node_id}/path`],
      ['POST', '/org/kb/folders', { name: 'At the root' }],
      ['POST', '/org/kb/folders', { name: 'In B', parent_id: b.kb_node_id }],
      ['PATCH', `/org/kb/nodes/${b.kb_node_id}`, { name: 'Stolen' }],
      ['PATCH', `/org/kb/nodes/${a1.kb_node_id}`, { parent_id: b.kb_node_id }],
      ['DELETE', `/org/kb/nodes/${b.kb_node_id}`],
    ] as const) {
      const res = await t.api(method, path, { key, ...(body && { body }) });
      assert.equal(res.status, 403, `${method} ${path}: ${res.text}`);
    }
    assert.equal((await t.api('GET', `/org/kb/nodes/${b.kb_node_id}`)).body.name, 'Scope B', 'nothing changed outside');
    assert.equal((await t.api('GET', `/org/kb/nodes/${a1.kb_node_id}`)).body.parent_id, a.kb_node_id);
  });

  it('with an empty scope get 403 on the whole knowledge base, while other endpoints work', async () => {
    const a = await folder('Empty scope target');
    const key = await keyScopedTo([]);
    for (const [method, path, body] of [
      ['GET', '/org/kb/tree'],
      ['GET', `/org/kb/nodes/${a.kb_node_id}`],
      ['GET', `/org/kb/nodes/${a.kb_node_id}/path`],
      ['POST', '/org/kb/folders', { name: 'Nope' }],
      ['DELETE', `/org/kb/nodes/${a.kb_node_id}`],
    ] as const) {
      assert.equal((await t.api(method, path, { key, ...(body && { body }) })).status, 403, `${method} ${path}`);
    }
    assert.equal((await t.api('GET', '/categories', { key })).status, 200);
    assert.equal((await t.api('GET', '/org/tags', { key })).status, 200);
  });

  it('with a scope naming the root see the whole tree', async () => {
    const root = (await t.api('GET', '/org/kb/tree')).body;
    const key = await keyScopedTo([root.kb_node_id]);
    assert.equal((await t.api('GET', '/org/kb/tree', { key })).status, 200);
    assert.equal((await folder('Anywhere', undefined, key)).name, 'Anywhere');
  });
});
