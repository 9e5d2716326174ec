import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { startTestSystem, type TestSystem } from './harness.js';
import { postForm, uniqueText, waitForOutcome } from './ingest-helpers.js';

/** Folder-scoped keys (spec 5.2) on intake and on content reads. */
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

const keyScopedTo = async (folder_scope: string[]): Promise<string> => {
  const res = await t.api('POST', '/org/api-keys', {
    key: null,
    headers: { authorization: `Bearer ${session}` },
    body: { name: 'Scoped', folder_scope },
  });
  assert.equal(res.status, 201, res.text);
  return res.body.key;
};
const folder = async (name: string) => {
  const res = await t.api('POST', '/org/kb/folders', { body: { name } });
  assert.equal(res.status, 201, res.text);
  return res.body.kb_node_id as string;
};

describe('folder-scoped keys on ingest', () => {
  it("upload into the key's folder is accepted; into another folder or the root is 403 and stores nothing", async () => {
    const mine = await folder('Mine');
    const theirs = await folder('Theirs');
    const key = await keyScopedTo([mine]);
    const text = uniqueText('scoped upload');
    const outside = await postForm(
      t,
      'POST',
      '/org/kb/upload',
      [
        { name: 'files', filename: 'a.txt', data: text },
        { name: 'parent_id', data: theirs },
      ],
      key,
    );
    assert.equal(outside.status, 403, outside.text);
    const root = await postForm(t, 'POST', '/org/kb/upload', [{ name: 'files', filename: 'a.txt', data: text }], key);
    assert.equal(root.status, 403, root.text);
    const inside = await postForm(
      t,
      'POST',
      '/org/kb/upload',
      [
        { name: 'files', filename: 'a.txt', data: text },
        { name: 'parent_id', data: mine },
      ],
      key,
    );
    assert.equal(inside.status, 202, `${inside.text} (not a duplicate: the refused uploads stored nothing)`);
    assert.equal(inside.body.files[0].item.parent_id, mine);
    const done = await waitForOutcome(t, inside.body.files[0].content_id, key);
    assert.equal(done.processing_status, 'completed');

    const rawOutside = await t.api('POST', '/org/kb/raw', { key, body: { title: 'x', text: uniqueText('raw'), parent_id: theirs } });
    assert.equal(rawOutside.status, 403, rawOutside.text);
    const fileApi = await postForm(t, 'POST', '/content/file', [{ name: 'file', filename: 'x.pdf', data: '%PDF-1.4' }], key);
    assert.equal(fileApi.status, 403, 'the category/topic API files at the root, outside the scope');
  });

  it('a scoped key cannot read content outside its folders; an empty scope cannot list content', async () => {
    const mine = await folder('Readable');
    const theirs = await folder('Hidden');
    const hidden = await t.api('POST', '/org/kb/raw', { body: { title: 'Hidden', text: uniqueText('hidden'), parent_id: theirs } });
    assert.equal(hidden.status, 202);
    const visible = await t.api('POST', '/org/kb/raw', { body: { title: 'Visible', text: uniqueText('visible'), parent_id: mine } });
    const sub = await t.api('POST', '/org/kb/folders', { body: { name: 'Readable child', parent_id: mine } });
    assert.equal(sub.status, 201, sub.text);
    const nested = await t.api('POST', '/org/kb/raw', {
      body: { title: 'Nested', text: uniqueText('nested'), parent_id: sub.body.kb_node_id },
    });
    assert.equal(nested.status, 202, nested.text);
    const key = await keyScopedTo([mine]);
    assert.equal((await t.api('GET', `/org/kb/content/${hidden.body.id}`, { key })).status, 403);
    assert.equal((await t.api('GET', `/org/kb/content/${hidden.body.id}/chunks`, { key })).status, 403);
    assert.equal((await t.api('GET', `/content/${hidden.body.id}`, { key })).status, 403);
    assert.equal((await t.api('DELETE', `/content/${hidden.body.id}`, { key })).status, 403);
    assert.equal((await t.api('GET', `/org/kb/content/${visible.body.id}`, { key })).status, 200);
    const listed = await t.api('GET', '/content?limit=100', { key });
    assert.equal(listed.status, 200);
    assert.deepEqual(
      listed.body.items.map((i: any) => i.id),
      [visible.body.id, nested.body.id],
      'the key lists content in its folders and their subfolders, nothing else',
    );
    assert.equal(listed.body.total_count, 2);
    assert.equal((await t.api('GET', `/content/${nested.body.id}`, { key })).status, 200);
    const none = await keyScopedTo([]);
    assert.equal((await t.api('GET', '/content', { key: none })).status, 403);
    assert.equal((await t.api('GET', `/org/kb/content/${visible.body.id}`, { key: none })).status, 403);
  });

  it("follows the tree: content moved out of the key's folder is out of its reach, and a cascade-deleted folder takes its content along", async () => {
    const mine = await folder('Moving from');
    const elsewhere = await folder('Moving to');
    const created = await t.api('POST', '/org/kb/raw', { body: { title: 'Mover', text: uniqueText('mover'), parent_id: mine } });
    assert.equal(created.status, 202, created.text);
    const id: string = created.body.id;
    const key = await keyScopedTo([mine]);
    assert.equal((await waitForOutcome(t, id, key)).processing_status, 'completed');
    const node = await eventually(
      async () => (await t.api('GET', `/org/kb/nodes/${mine}?limit=100`)).body.children.find((c: any) => c.content_id === id),
      (n) => n !== undefined,
      'the content node in its folder',
    );

    // The tree owns placement: after the move the scoped key neither reads nor lists the content.
    assert.equal((await t.api('PATCH', `/org/kb/nodes/${node.kb_node_id}`, { body: { parent_id: elsewhere } })).status, 200);
    await eventually(
      async () => (await t.api('GET', `/org/kb/content/${id}`, { key })).status,
      (status) => status === 403,
      'the moved content to be outside the scope',
    );
    assert.equal((await t.api('GET', `/org/kb/content/${id}`)).body.parent_id, elsewhere);
    assert.deepEqual((await t.api('GET', '/content?limit=100', { key })).body.items, []);

    // Deleting its new folder with cascade removes the content item, not only its node.
    assert.equal((await t.api('DELETE', `/org/kb/nodes/${elsewhere}?cascade=true`)).status, 204);
    await eventually(
      async () => (await t.api('GET', `/org/kb/content/${id}`)).status,
      (status) => status === 404,
      'the content of the deleted folder to be gone',
    );
    const all = await t.api('GET', '/content?limit=100');
    assert.ok(!all.body.items.some((i: any) => i.id === id), 'no longer listed');
  });
});

async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
