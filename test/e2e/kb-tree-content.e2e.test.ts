import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { startTestSystem, type TestSystem } from './harness.js';
import { fixture, postForm } from './ingest-helpers.js';

// Content reaches the tree through the ingest service's events (eventually
// consistent: the tests poll). The consumer is also covered in-process by
// services/knowledge-base/src/content-filing.int.test.ts.
const ADMIN = { email: 'admin@example.com', password: 'development-password' };

let t: TestSystem;

beforeAll(async () => {
  t = await startTestSystem();
});
afterAll(async () => t.stop());

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
  it('puts raw content under its folder, with its tags by id and by name and the automatic rule tags', async () => {
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
    assert.equal(res.status, 202, res.text);
    const contentId: string = res.body.id;
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

  it('tags an uploaded file by rule when its ingestion finishes, matching the format read from its bytes', async () => {
    const f = await folder('Upload inbox');
    for (const body of [
      { tag: 'Inbox files', folder_id: f.kb_node_id },
      { tag: 'PDF documents', format: 'pdf' },
      { tag: 'Spreadsheets', format: 'xlsx' },
      { tag: 'Raw only', source_kind: 'raw' },
    ]) {
      const rule = await t.api('POST', '/org/tags/rules', { body });
      assert.equal(rule.status, 201, rule.text);
    }
    // No extension: the name claims no format, the bytes say PDF (unique bytes so it is no duplicate).
    const pdf = Buffer.concat([fixture('sample.pdf'), Buffer.from(`\n% rule tags ${Date.now()}\n`)]);
    const res = await postForm(t, 'POST', '/org/kb/upload', [
      { name: 'files', filename: 'scanned-report', data: pdf },
      { name: 'parent_id', data: f.kb_node_id },
      { name: 'tags', data: 'Uploaded by hand' },
    ]);
    assert.equal(res.status, 202, res.text);
    const contentId: string = res.body.files[0].content_id;
    const done = await contentIn(f.kb_node_id, contentId, (n) => n.processing_status === 'completed', 'the upload to complete');
    const node = await contentIn(f.kb_node_id, contentId, (n) => n.tags.length >= 3, 'the rule tags after completion');
    assert.equal(done.kb_node_id, node.kb_node_id);
    assert.deepEqual(node.tags.map((x) => x.name).sort(), ['Inbox files', 'PDF documents', 'Uploaded by hand']);
  });

  it('applies an uploaded file’s own tags when its ingestion finishes: a file that fails keeps none (spec 2.8)', async () => {
    const f = await folder('Failing uploads');
    const res = await postForm(t, 'POST', '/org/kb/upload', [
      { name: 'files', filename: 'corrupt.pdf', data: fixture('corrupt.pdf') },
      { name: 'files', filename: 'fine-tagged.txt', data: Buffer.from(`A fine file next to a broken one ${Date.now()}`) },
      { name: 'parent_id', data: f.kb_node_id },
      { name: 'tags', data: 'Only when finished' },
    ]);
    assert.equal(res.status, 202, res.text);
    const [broken, fine] = res.body.files as { content_id: string }[];
    const failed = await contentIn(f.kb_node_id, broken!.content_id, (n) => n.processing_status === 'failed', 'the broken file to fail');
    const done = await contentIn(f.kb_node_id, fine!.content_id, (n) => n.tags.length > 0, 'the fine file’s tags');
    assert.deepEqual(
      done.tags.map((x) => x.name),
      ['Only when finished'],
    );
    // Read again after the fine file finished: the failed one still has no tag.
    const again = await contentIn(f.kb_node_id, broken!.content_id, () => true, 'the broken file');
    assert.deepEqual(failed.tags, []);
    assert.deepEqual(again.tags, []);
  });

  it('refuses raw content into a folder outside the key scope: 403', async () => {
    const login = await t.api('POST', '/auth/login', { key: null, body: ADMIN });
    assert.equal(login.status, 200, login.text);
    const inside = await folder('Scoped raw inside');
    const outside = await folder('Scoped raw outside');
    const key = await t.api('POST', '/org/api-keys', {
      key: null,
      headers: { authorization: `Bearer ${login.body.token}` },
      body: { name: 'Raw scoped', folder_scope: [inside.kb_node_id] },
    });
    assert.equal(key.status, 201, key.text);
    const post = (parent_id?: string) =>
      t.api('POST', '/org/kb/raw', { key: key.body.key, body: { title: 'Scoped', text: 'Some text', ...(parent_id && { parent_id }) } });
    assert.equal((await post(outside.kb_node_id)).status, 403);
    assert.equal((await post()).status, 403, 'the root is outside the scope');
    assert.equal((await post(inside.kb_node_id)).status, 202);
  });
});
