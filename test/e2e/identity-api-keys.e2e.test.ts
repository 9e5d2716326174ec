import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { silentLogger } from '@kb/platform';
import { startSystem } from '@kb/all-in-one';
import { startTestSystem, type TestSystem } from './harness.js';
import { logIn, newApiKey, newMember, newOrgAdmin } from './identity-fixtures.js';

let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem();
});
afterAll(async () => t.stop());

describe('POST /org/api-keys', () => {
  it('returns the secret once; the list shows a redacted hint and when the key was last used', async () => {
    const admin = await newOrgAdmin(t, 'keys');
    const created = await admin.call('POST', '/org/api-keys', { name: 'CI key' });
    assert.equal(created.status, 201);
    const { key, key_id, hint } = created.body;
    assert.match(key, /^kb_[A-Za-z0-9_-]{43}$/);
    assert.equal(created.body.folder_scope, null);
    assert.equal(created.body.last_used_at, null);
    assert.ok(hint.startsWith(key.slice(0, 6)) && hint.endsWith(key.slice(-4)));

    const list = await admin.call('GET', '/org/api-keys');
    assert.equal(list.status, 200);
    assert.equal(list.headers.get('x-total-count'), '1');
    assert.equal(list.body[0].key_id, key_id);
    assert.equal(list.body[0].hint, hint);
    assert.ok(!list.text.includes(key), 'the secret is never shown again');
    assert.equal(list.body[0].key, undefined);

    const used = await t.api('GET', '/org/me', { key });
    assert.equal(used.status, 200);
    assert.equal(used.body.org_id, admin.org_id);
    const after = await admin.call('GET', '/org/api-keys');
    assert.ok(Date.parse(after.body[0].last_used_at) >= Date.parse(created.body.created_at));
  });

  it('keeps a folder scope and deduplicates it; keys work on non-KB endpoints whatever their scope', async () => {
    const admin = await newOrgAdmin(t, 'scoped');
    const made = await admin.call('POST', '/org/kb/folders', { name: 'Scoped folder' });
    assert.equal(made.status, 201, made.text);
    const folder = made.body.kb_node_id as string;
    const scoped = await admin.call('POST', '/org/api-keys', { name: 'Scoped', folder_scope: [folder, folder] });
    assert.equal(scoped.status, 201);
    assert.deepEqual(scoped.body.folder_scope, [folder]);
    const empty = await admin.call('POST', '/org/api-keys', { name: 'No KB', folder_scope: [] });
    assert.deepEqual(empty.body.folder_scope, []);
    for (const key of [scoped.body.key, empty.body.key]) {
      assert.equal((await t.api('GET', '/org/me', { key })).status, 200);
      assert.equal((await t.api('GET', '/org/credits/balance', { key })).status, 200);
      assert.equal((await t.api('GET', '/categories', { key })).status, 200);
    }
  });

  it('answers a folder scope naming unknown ids or documents with 400 naming them, and creates no key', async () => {
    // The bootstrap organization: it has credits for the document.
    const admin = await logIn(t, 'admin@example.com', 'development-password');
    const keysBefore = (await admin.call('GET', '/org/api-keys')).body;
    const folder = await admin.call('POST', '/org/kb/folders', { name: 'Real folder' });
    assert.equal(folder.status, 201, folder.text);
    const doc = await admin.call('POST', '/org/kb/raw', {
      title: 'A document',
      text: 'Not a folder at all.',
      parent_id: folder.body.kb_node_id,
    });
    assert.equal(doc.status, 202, doc.text);
    // The document's node appears in the tree once the knowledge base has it.
    let documentId: string | undefined;
    for (let i = 0; i < 100 && !documentId; i++) {
      const children = (await admin.call('GET', `/org/kb/nodes/${folder.body.kb_node_id}`)).body.children as {
        content_id?: string;
        kb_node_id: string;
      }[];
      documentId = children.find((c) => c.content_id === doc.body.id)?.kb_node_id;
      if (!documentId) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(documentId, 'the document node');
    const unknown = randomUUID();
    const other = await newOrgAdmin(t, 'otherorg');
    const foreign = await other.call('POST', '/org/kb/folders', { name: 'Their folder' });

    const res = await admin.call('POST', '/org/api-keys', {
      name: 'Bad scope',
      folder_scope: [folder.body.kb_node_id, unknown, documentId, foreign.body.kb_node_id],
    });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.details.field, 'folder_scope');
    assert.deepEqual(res.body.error.details.unknown_ids.sort(), [unknown, foreign.body.kb_node_id].sort());
    assert.deepEqual(res.body.error.details.not_folder_ids, [documentId]);
    for (const id of [unknown, documentId, foreign.body.kb_node_id]) assert.match(res.body.error.message, new RegExp(id));
    assert.doesNotMatch(res.body.error.message, new RegExp(folder.body.kb_node_id));
    assert.deepEqual((await admin.call('GET', '/org/api-keys')).body, keysBefore, 'no key was created');
  });

  it('answers bad bodies with 400, an API key with 401, a collaborator with 403', async () => {
    const admin = await newOrgAdmin(t, 'keyerr');
    const collaborator = await newMember(t, admin, 'collaborator');
    for (const body of [{}, { name: 'x' }, { name: 'ok key', folder_scope: ['not-a-uuid'] }, { name: 'ok key', scope: [] }]) {
      assert.equal((await admin.call('POST', '/org/api-keys', body)).status, 400, JSON.stringify(body));
    }
    const { key } = await newApiKey(admin, { name: 'Key maker?' });
    assert.equal((await t.api('POST', '/org/api-keys', { key, body: { name: 'Child key' } })).status, 401);
    assert.equal((await t.api('GET', '/org/api-keys', { key })).status, 401);
    assert.equal((await collaborator.call('POST', '/org/api-keys', { name: 'Mine' })).status, 403);
    assert.equal((await collaborator.call('GET', '/org/api-keys')).status, 403);
    assert.equal((await admin.call('GET', '/org/api-keys?limit=500')).status, 400);
  });
});

describe('DELETE /org/api-keys/{keyId}', () => {
  it('revokes at once: the next request with the key is 401 and the list no longer has it', async () => {
    const admin = await newOrgAdmin(t, 'revoke');
    const { key, key_id } = await newApiKey(admin, { name: 'Short-lived' });
    assert.equal((await t.api('GET', '/org/me', { key })).status, 200);
    assert.equal((await admin.call('DELETE', `/org/api-keys/${key_id}`)).status, 204);
    assert.equal((await t.api('GET', '/org/me', { key })).status, 401);
    assert.equal((await t.api('GET', '/categories', { key })).status, 401);
    assert.deepEqual((await admin.call('GET', '/org/api-keys')).body, []);
    assert.equal((await admin.call('DELETE', `/org/api-keys/${key_id}`)).status, 404);
  });

  it("answers an unknown key or another organization's key with 404 and leaves it working", async () => {
    const admin = await newOrgAdmin(t, 'rev-a');
    const other = await newOrgAdmin(t, 'rev-b');
    const foreign = await newApiKey(other, { name: 'Not yours' });
    assert.equal((await admin.call('DELETE', `/org/api-keys/${foreign.key_id}`)).status, 404);
    assert.equal((await admin.call('DELETE', `/org/api-keys/${randomUUID()}`)).status, 404);
    assert.equal((await admin.call('DELETE', '/org/api-keys/nope')).status, 400);
    assert.equal((await t.api('GET', '/org/me', { key: foreign.key })).status, 200);
  });

  it('answers an API key with 401 and a viewer with 403', async () => {
    const admin = await newOrgAdmin(t, 'revauth');
    const viewer = await newMember(t, admin, 'viewer');
    const { key, key_id } = await newApiKey(admin, { name: 'Target' });
    assert.equal((await t.api('DELETE', `/org/api-keys/${key_id}`, { key })).status, 401);
    assert.equal((await viewer.call('DELETE', `/org/api-keys/${key_id}`)).status, 403);
    assert.equal((await t.api('GET', '/org/me', { key })).status, 200);
  });

  it('revokes at once in a second gateway running on the same store', async () => {
    const second = await startSystem({
      env: { DATA_DIR: t.dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' },
      logger: silentLogger(),
    });
    try {
      const admin = await newOrgAdmin(t, 'twin');
      const { key, key_id } = await newApiKey(admin, { name: 'Shared' });
      const viaSecond = () => fetch(`${second.url}/api/v1/org/me`, { headers: { 'x-api-key': key } });
      assert.equal((await viaSecond()).status, 200);
      assert.equal((await admin.call('DELETE', `/org/api-keys/${key_id}`)).status, 204);
      assert.equal((await viaSecond()).status, 401);
    } finally {
      await second.stop();
    }
  });

  it('revokes across processes sharing the store: a restarted gateway refuses the key too', async () => {
    const admin = await newOrgAdmin(t, 'restart');
    const { key, key_id } = await newApiKey(admin, { name: 'Durable' });
    assert.equal((await admin.call('DELETE', `/org/api-keys/${key_id}`)).status, 204);
    await t.restart();
    assert.equal((await t.api('GET', '/org/me', { key })).status, 401);
    // Sessions survive a restart (they live in the store too).
    assert.equal((await admin.call('GET', '/org/me')).status, 200);
  });
});

describe('folder-scoped keys in the knowledge base', () => {
  it('reach only their folders; an empty scope reaches no KB node; other endpoints keep working', async () => {
    const admin = await newOrgAdmin(t, 'kbscope');
    const inside = await admin.call('POST', '/org/kb/folders', { name: 'Inside' });
    assert.equal(inside.status, 201, inside.text);
    const outside = await admin.call('POST', '/org/kb/folders', { name: 'Outside' });
    assert.equal(outside.status, 201, outside.text);
    const scoped = await newApiKey(admin, { name: 'Inside only', folder_scope: [inside.body.kb_node_id] });
    const none = await newApiKey(admin, { name: 'No KB', folder_scope: [] });

    assert.equal((await t.api('GET', `/org/kb/nodes/${inside.body.kb_node_id}`, { key: scoped.key })).status, 200);
    assert.equal((await t.api('GET', `/org/kb/nodes/${outside.body.kb_node_id}`, { key: scoped.key })).status, 403);
    assert.equal(
      (await t.api('POST', '/org/kb/folders', { key: scoped.key, body: { name: 'Sneaky', parent_id: outside.body.kb_node_id } })).status,
      403,
    );
    assert.equal((await t.api('GET', `/org/kb/nodes/${inside.body.kb_node_id}`, { key: none.key })).status, 403);
    assert.equal((await t.api('GET', '/org/kb/tree', { key: none.key })).status, 403);
    // The session of the admin is not folder-scoped, and the scoped keys still work elsewhere.
    assert.equal((await admin.call('GET', `/org/kb/nodes/${outside.body.kb_node_id}`)).status, 200);
    for (const key of [scoped.key, none.key]) {
      assert.equal((await t.api('GET', '/org/me', { key })).status, 200);
      assert.equal((await t.api('GET', '/org/credits/balance', { key })).status, 200);
    }
  });
});
