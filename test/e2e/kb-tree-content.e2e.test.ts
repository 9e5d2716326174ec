import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestSystem, type TestSystem } from './harness.js';

// Content reaches the tree through the ingest service's events (eventually
// consistent: the tests poll). Raw text comes in through POST /org/kb/raw, built
// by the ingest work; until that route exists these tests skip, and the consumer
// is covered by services/knowledge-base/src/content-filing.int.test.ts.
const ADMIN = { email: 'admin@example.com', password: 'development-password' };

let t: TestSystem;
let skipReason: string | undefined;

before(async () => {
  t = await startTestSystem();
  const probe = await t.api('POST', '/org/kb/raw', { body: {} });
  if (probe.status === 404 && !probe.text.startsWith('{')) skipReason = 'POST /org/kb/raw does not exist yet (plain-text 404)';
});
after(async () => t.stop());

interface Node {
  kb_node_id: string;
  type: string;
  parent_id: string | null;
  name: string;
  content_id?: string;
  tags: { tag_id: string; name: string }[];
  processing_status?: string;
}

async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const folder = async (name: string) => {
  const res = await t.api<Node>('POST', '/org/kb/folders', { body: { name } });
  assert.equal(res.status, 201, res.text);
  return res.body;
};
const contentIn = (folderId: string, contentId: string, ok: (n: Node) => boolean, what: string) =>
  eventually(
    async () =>
      (await t.api<{ children: Node[] }>('GET', `/org/kb/nodes/${folderId}?limit=100`)).body.children.find(
        (c) => c.content_id === contentId,
      ),
    (n): n is Node => n !== undefined && ok(n),
    what,
  ) as Promise<Node>;

describe('content in the knowledge-base tree', () => {
  it('puts raw content under its folder, with its tags by id and by name and the automatic rule tags', async (ctx) => {
    if (skipReason) return ctx.skip(skipReason);
    const f = await folder('Raw inbox');
    const existing = (await t.api('POST', '/org/tags', { body: { name: 'Existing raw tag' } })).body;
    assert.equal((await t.api('POST', '/org/tags/rules', { body: { tag: 'Typed in', source_kind: 'raw' } })).status, 201);
    const res = await t.api('POST', '/org/kb/raw', {
      body: {
        title: 'Meeting notes',
        text: 'We decided to ship on Friday.',
        parent_id: f.kb_node_id,
        tags: [existing.tag_id, 'Fresh raw tag'],
      },
    });
    assert.ok(res.status === 201 || res.status === 202, res.text);
    const contentId: string = res.body.id ?? res.body.content_id;
    const node = await contentIn(f.kb_node_id, contentId, (n) => n.tags.length === 3, 'the content node with its tags');
    assert.equal(node.type, 'content');
    assert.equal(node.name, 'Meeting notes');
    assert.deepEqual(node.tags.map((x) => x.name).sort(), ['Existing raw tag', 'Fresh raw tag', 'Typed in']);
    await contentIn(f.kb_node_id, contentId, (n) => n.processing_status === 'completed', 'processing to complete');
    // A content node holds no children; its tags are its content item's and can be replaced.
    assert.equal((await t.api('POST', '/org/kb/folders', { body: { name: 'Under content', parent_id: node.kb_node_id } })).status, 400);
    const retagged = await t.api<Node>('PATCH', `/org/kb/nodes/${node.kb_node_id}`, { body: { tags: ['Replaced raw tag'] } });
    assert.equal(retagged.status, 200, retagged.text);
    assert.deepEqual(
      retagged.body.tags.map((x) => x.name),
      ['Replaced raw tag'],
    );
    assert.equal((await t.api('DELETE', `/org/kb/nodes/${node.kb_node_id}`)).status, 204);
    assert.equal((await t.api('GET', `/org/kb/nodes/${node.kb_node_id}`)).status, 404);
  });

  it('refuses raw content into a folder outside the key scope: 403', async (ctx) => {
    if (skipReason) return ctx.skip(skipReason);
    const login = await t.api('POST', '/auth/login', { key: null, body: ADMIN });
    if (login.status !== 200) return ctx.skip('no signed-in admin to create a scoped key');
    const inside = await folder('Scoped raw inside');
    const outside = await folder('Scoped raw outside');
    const key = await t.api('POST', '/org/api-keys', {
      key: null,
      headers: { authorization: `Bearer ${login.body.token}` },
      body: { name: 'Raw scoped', folder_scope: [inside.kb_node_id] },
    });
    if (key.status === 404 && !key.text.startsWith('{')) return ctx.skip('POST /org/api-keys does not exist yet');
    const post = (parent_id?: string) =>
      t.api('POST', '/org/kb/raw', { key: key.body.key, body: { title: 'Scoped', text: 'Some text', ...(parent_id && { parent_id }) } });
    assert.equal((await post(outside.kb_node_id)).status, 403);
    assert.equal((await post()).status, 403, 'the root is outside the scope');
    assert.ok([201, 202].includes((await post(inside.kb_node_id)).status));
  });
});
