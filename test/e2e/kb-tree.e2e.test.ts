import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { startTestSystem, type TestSystem } from './harness.js';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MISSING = '00000000-0000-4000-8000-000000000000';

let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem();
});
afterAll(async () => t.stop());

interface Node {
  kb_node_id: string;
  type: 'folder' | 'content';
  parent_id: string | null;
  name: string;
  tags: { tag_id: string; name: string }[];
  created_at: string;
  updated_at: string;
}
interface NodeWithChildren extends Node {
  children: Node[];
  children_total: number;
}

const folder = async (name: string, parent_id?: string, extra: Record<string, unknown> = {}) => {
  const res = await t.api<Node>('POST', '/org/kb/folders', { body: { name, ...(parent_id && { parent_id }), ...extra } });
  assert.equal(res.status, 201, res.text);
  return res.body;
};
const rootOf = async () => (await t.api<NodeWithChildren>('GET', '/org/kb/tree')).body;

describe('GET /org/kb/tree', () => {
  it('returns the root folder (parent_id null) with its children, folders first', async () => {
    const res = await t.api<NodeWithChildren>('GET', '/org/kb/tree');
    assert.equal(res.status, 200, res.text);
    assert.match(res.body.kb_node_id, UUID_RE);
    assert.equal(res.body.type, 'folder');
    assert.equal(res.body.parent_id, null);
    const f = await folder('Tree listing');
    const again = await rootOf();
    assert.equal(again.kb_node_id, res.body.kb_node_id, 'one root per organization');
    const child = again.children.find((c) => c.kb_node_id === f.kb_node_id)!;
    assert.equal(child.parent_id, res.body.kb_node_id);
    assert.equal(again.children_total, again.children.length);
  });

  it('pages the children with limit and offset', async () => {
    const parent = await folder('Paged');
    for (const n of ['p1', 'p2', 'p3']) await folder(n, parent.kb_node_id);
    const page = await t.api<NodeWithChildren>('GET', `/org/kb/nodes/${parent.kb_node_id}?limit=2&offset=1`);
    assert.equal(page.status, 200);
    assert.deepEqual(
      page.body.children.map((c) => c.name),
      ['p2', 'p3'],
    );
    assert.equal(page.body.children_total, 3);
  });

  for (const query of ['limit=0', 'limit=101', 'offset=-1', 'limit=abc', 'colour=red']) {
    it(`rejects ${query}: 400`, async () => {
      assert.equal((await t.api('GET', `/org/kb/tree?${query}`)).status, 400);
    });
  }

  it('needs a key: 401', async () => {
    assert.equal((await t.api('GET', '/org/kb/tree', { key: null })).status, 401);
  });
});

describe('GET /org/kb/nodes/{kb_node_id}', () => {
  it('returns a folder with its children', async () => {
    const a = await folder('Node A');
    const b = await folder('Node B', a.kb_node_id);
    const res = await t.api<NodeWithChildren>('GET', `/org/kb/nodes/${a.kb_node_id}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.name, 'Node A');
    assert.deepEqual(
      res.body.children.map((c) => c.kb_node_id),
      [b.kb_node_id],
    );
  });

  it('is 404 for an unknown id, 400 for a malformed one, 401 without a key', async () => {
    assert.equal((await t.api('GET', `/org/kb/nodes/${MISSING}`)).status, 404);
    assert.equal((await t.api('GET', '/org/kb/nodes/not-a-uuid')).status, 400);
    assert.equal((await t.api('GET', `/org/kb/nodes/${MISSING}`, { key: null })).status, 401);
  });
});

describe('GET /org/kb/nodes/{kb_node_id}/path', () => {
  it('lists the path root first', async () => {
    const root = await rootOf();
    const a = await folder('Path A');
    const b = await folder('Path B', a.kb_node_id);
    const res = await t.api<Node[]>('GET', `/org/kb/nodes/${b.kb_node_id}/path`);
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.map((n) => n.kb_node_id),
      [root.kb_node_id, a.kb_node_id, b.kb_node_id],
    );
  });

  it('is 404 for an unknown id, 400 for a malformed one, 401 without a key', async () => {
    assert.equal((await t.api('GET', `/org/kb/nodes/${MISSING}/path`)).status, 404);
    assert.equal((await t.api('GET', '/org/kb/nodes/nope/path')).status, 400);
    assert.equal((await t.api('GET', `/org/kb/nodes/${MISSING}/path`, { key: null })).status, 401);
  });
});

describe('POST /org/kb/folders', () => {
  it('creates a folder under the root by default, or under parent_id: 201', async () => {
    const root = await rootOf();
    const top = await folder('  Top level  ');
    assert.equal(top.parent_id, root.kb_node_id);
    assert.equal(top.name, 'Top level', 'names are trimmed');
    assert.equal(top.type, 'folder');
    assert.deepEqual(top.tags, []);
    const nested = await folder('Nested', top.kb_node_id);
    assert.equal(nested.parent_id, top.kb_node_id);
    const explicitNull = await t.api<Node>('POST', '/org/kb/folders', { body: { name: 'Null parent', parent_id: null } });
    assert.equal(explicitNull.status, 201);
    assert.equal(explicitNull.body.parent_id, root.kb_node_id);
  });

  for (const [label, body] of [
    ['an empty name', { name: '' }],
    ['a blank name', { name: '   ' }],
    ['a name of 256 characters', { name: 'x'.repeat(256) }],
    ['a missing name', {}],
    ['an unknown field', { name: 'ok', colour: 'red' }],
    ['a malformed parent_id', { name: 'ok', parent_id: 'nope' }],
  ] as const) {
    it(`rejects ${label}: 400`, async () => {
      const res = await t.api('POST', '/org/kb/folders', { body });
      assert.equal(res.status, 400, res.text);
    });
  }

  it('is 404 when the parent does not exist, 401 without a key', async () => {
    assert.equal((await t.api('POST', '/org/kb/folders', { body: { name: 'Orphan', parent_id: MISSING } })).status, 404);
    assert.equal((await t.api('POST', '/org/kb/folders', { body: { name: 'No key' }, key: null })).status, 401);
  });
});

describe('PATCH /org/kb/nodes/{kb_node_id}', () => {
  it('renames and moves a folder: 200', async () => {
    const a = await folder('Move A');
    const b = await folder('Move B');
    const res = await t.api<Node>('PATCH', `/org/kb/nodes/${b.kb_node_id}`, { body: { name: 'Moved B', parent_id: a.kb_node_id } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.name, 'Moved B');
    assert.equal(res.body.parent_id, a.kb_node_id);
    const listed = await t.api<NodeWithChildren>('GET', `/org/kb/nodes/${a.kb_node_id}`);
    assert.deepEqual(
      listed.body.children.map((c) => c.kb_node_id),
      [b.kb_node_id],
    );
  });

  it('refuses a move into the own subtree or into itself: 409, and changes nothing', async () => {
    const a = await folder('Cycle A');
    const b = await folder('Cycle B', a.kb_node_id);
    assert.equal((await t.api('PATCH', `/org/kb/nodes/${a.kb_node_id}`, { body: { parent_id: b.kb_node_id } })).status, 409);
    assert.equal((await t.api('PATCH', `/org/kb/nodes/${a.kb_node_id}`, { body: { parent_id: a.kb_node_id } })).status, 409);
    const root = await rootOf();
    assert.equal((await t.api<Node>('GET', `/org/kb/nodes/${a.kb_node_id}`)).body.parent_id, root.kb_node_id);
  });

  it('refuses to move the root: 409', async () => {
    const root = await rootOf();
    const a = await folder('Root target');
    assert.equal((await t.api('PATCH', `/org/kb/nodes/${root.kb_node_id}`, { body: { parent_id: a.kb_node_id } })).status, 409);
  });

  it('is 404 for an unknown node or parent, 400 for bad input, 401 without a key', async () => {
    const a = await folder('Patch errors');
    assert.equal((await t.api('PATCH', `/org/kb/nodes/${MISSING}`, { body: { name: 'x' } })).status, 404);
    assert.equal((await t.api('PATCH', `/org/kb/nodes/${a.kb_node_id}`, { body: { parent_id: MISSING } })).status, 404);
    assert.equal((await t.api('PATCH', `/org/kb/nodes/${a.kb_node_id}`, { body: { name: '' } })).status, 400);
    assert.equal((await t.api('PATCH', `/org/kb/nodes/${a.kb_node_id}`, { body: { colour: 'red' } })).status, 400);
    assert.equal((await t.api('PATCH', `/org/kb/nodes/${a.kb_node_id}`, { body: { parent_id: null } })).status, 400);
    assert.equal((await t.api('PATCH', '/org/kb/nodes/nope', { body: { name: 'x' } })).status, 400);
    assert.equal((await t.api('PATCH', `/org/kb/nodes/${a.kb_node_id}`, { body: { name: 'x' }, key: null })).status, 401);
  });
});

describe('DELETE /org/kb/nodes/{kb_node_id}', () => {
  it('deletes an empty folder: 204, then 404', async () => {
    const a = await folder('Delete me');
    assert.equal((await t.api('DELETE', `/org/kb/nodes/${a.kb_node_id}`)).status, 204);
    assert.equal((await t.api('GET', `/org/kb/nodes/${a.kb_node_id}`)).status, 404);
    assert.equal((await t.api('DELETE', `/org/kb/nodes/${a.kb_node_id}`)).status, 404);
  });

  it('refuses a non-empty folder without cascade (409), deletes the subtree with cascade=true', async () => {
    const a = await folder('Full');
    const b = await folder('Full child', a.kb_node_id);
    const c = await folder('Full grandchild', b.kb_node_id);
    assert.equal((await t.api('DELETE', `/org/kb/nodes/${a.kb_node_id}`)).status, 409);
    assert.equal((await t.api('GET', `/org/kb/nodes/${c.kb_node_id}`)).status, 200, 'nothing was deleted');
    assert.equal((await t.api('DELETE', `/org/kb/nodes/${a.kb_node_id}?cascade=false`)).status, 409);
    assert.equal((await t.api('DELETE', `/org/kb/nodes/${a.kb_node_id}?cascade=true`)).status, 204);
    for (const n of [a, b, c]) assert.equal((await t.api('GET', `/org/kb/nodes/${n.kb_node_id}`)).status, 404);
  });

  it('refuses to delete the root: 409', async () => {
    const root = await rootOf();
    assert.equal((await t.api('DELETE', `/org/kb/nodes/${root.kb_node_id}?cascade=true`)).status, 409);
  });

  it('is 400 for a malformed id or cascade value, 401 without a key', async () => {
    const a = await folder('Delete errors');
    assert.equal((await t.api('DELETE', '/org/kb/nodes/nope')).status, 400);
    assert.equal((await t.api('DELETE', `/org/kb/nodes/${a.kb_node_id}?cascade=maybe`)).status, 400);
    assert.equal((await t.api('DELETE', `/org/kb/nodes/${a.kb_node_id}`, { key: null })).status, 401);
  });
});

describe('the tree survives a restart', () => {
  it('keeps folders and their places', async () => {
    const a = await folder('Durable');
    const b = await folder('Durable child', a.kb_node_id);
    await t.restart();
    const res = await t.api<NodeWithChildren>('GET', `/org/kb/nodes/${a.kb_node_id}`);
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.children.map((c) => c.kb_node_id),
      [b.kb_node_id],
    );
  });
});
