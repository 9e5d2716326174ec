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

interface Tag {
  tag_id: string;
  name: string;
  color?: string;
  created_at: string;
  updated_at: string;
}

const createTag = async (name: string, color?: string) => {
  const res = await t.api<Tag>('POST', '/org/tags', { body: { name, ...(color && { color }) } });
  assert.equal(res.status, 201, res.text);
  return res.body;
};
const allTags = async () => (await t.api<Tag[]>('GET', '/org/tags?limit=100')).body;

describe('POST /org/tags', () => {
  it('creates a tag: 201', async () => {
    const tag = await createTag('  Launch  ', '#12abEF');
    assert.match(tag.tag_id, UUID_RE);
    assert.equal(tag.name, 'Launch');
    assert.equal(tag.color, '#12abEF');
    assert.equal(tag.created_at, tag.updated_at);
  });

  it('refuses a duplicate name ignoring case: 409', async () => {
    await createTag('Pricing');
    assert.equal((await t.api('POST', '/org/tags', { body: { name: 'PRICING ' } })).status, 409);
  });

  for (const [label, body] of [
    ['an empty name', { name: '' }],
    ['a blank name', { name: '  ' }],
    ['a name of 101 characters', { name: 'x'.repeat(101) }],
    ['a malformed color', { name: 'Colored', color: 'red' }],
    ['an unknown field', { name: 'Extra', weight: 3 }],
    ['a missing name', {}],
  ] as const) {
    it(`rejects ${label}: 400`, async () => {
      assert.equal((await t.api('POST', '/org/tags', { body })).status, 400);
    });
  }

  it('needs a key: 401', async () => {
    assert.equal((await t.api('POST', '/org/tags', { body: { name: 'x' }, key: null })).status, 401);
  });
});

describe('GET /org/tags', () => {
  it('lists tags oldest first with the total in X-Total-Count, paged', async () => {
    const a = await createTag('List A');
    const b = await createTag('List B');
    const all = await t.api<Tag[]>('GET', '/org/tags');
    assert.equal(all.status, 200);
    const total = Number(all.headers.get('x-total-count'));
    assert.ok(total >= 2);
    const ids = all.body.map((x) => x.tag_id);
    assert.ok(ids.indexOf(a.tag_id) < ids.indexOf(b.tag_id));
    const page = await t.api<Tag[]>('GET', `/org/tags?limit=1&offset=${ids.indexOf(b.tag_id)}`);
    assert.deepEqual(
      page.body.map((x) => x.tag_id),
      [b.tag_id],
    );
  });

  for (const query of ['limit=0', 'limit=101', 'offset=-1', 'sort=name']) {
    it(`rejects ${query}: 400`, async () => {
      assert.equal((await t.api('GET', `/org/tags?${query}`)).status, 400);
    });
  }

  it('needs a key: 401', async () => {
    assert.equal((await t.api('GET', '/org/tags', { key: null })).status, 401);
  });
});

describe('PATCH /org/tags/{tag_id}', () => {
  it('renames and recolors; color null clears it: 200', async () => {
    const tag = await createTag('Patch me', '#000000');
    const res = await t.api<Tag>('PATCH', `/org/tags/${tag.tag_id}`, { body: { name: 'Patched', color: '#ffffff' } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.name, 'Patched');
    assert.equal(res.body.color, '#ffffff');
    const cleared = await t.api<Tag>('PATCH', `/org/tags/${tag.tag_id}`, { body: { color: null } });
    assert.equal(cleared.body.color, undefined);
    assert.equal(cleared.body.name, 'Patched');
    // The old name is free again; a case change of the own name is allowed.
    await createTag('Patch me');
    assert.equal((await t.api('PATCH', `/org/tags/${tag.tag_id}`, { body: { name: 'PATCHED' } })).status, 200);
  });

  it('is 409 for a taken name, 404 for an unknown tag, 400 for bad input, 401 without a key', async () => {
    const a = await createTag('Taken one');
    const b = await createTag('Taken two');
    assert.equal((await t.api('PATCH', `/org/tags/${b.tag_id}`, { body: { name: 'taken ONE' } })).status, 409);
    assert.equal((await t.api('PATCH', `/org/tags/${MISSING}`, { body: { name: 'x' } })).status, 404);
    assert.equal((await t.api('PATCH', `/org/tags/${a.tag_id}`, { body: { color: 'blue' } })).status, 400);
    assert.equal((await t.api('PATCH', '/org/tags/nope', { body: { name: 'x' } })).status, 400);
    assert.equal((await t.api('PATCH', `/org/tags/${a.tag_id}`, { body: { name: 'x' }, key: null })).status, 401);
  });
});

describe('DELETE /org/tags/{tag_id}', () => {
  it('deletes a tag (204): it leaves the list and what it was attached to, and its name is free', async () => {
    const tag = await createTag('Short lived');
    const f = await t.api('POST', '/org/kb/folders', { body: { name: 'Tagged then untagged', tags: [tag.tag_id] } });
    assert.equal(f.body.tags.length, 1);
    assert.equal((await t.api('DELETE', `/org/tags/${tag.tag_id}`)).status, 204);
    assert.ok(!(await allTags()).some((x) => x.tag_id === tag.tag_id));
    assert.deepEqual((await t.api('GET', `/org/kb/nodes/${f.body.kb_node_id}`)).body.tags, []);
    assert.equal((await t.api('DELETE', `/org/tags/${tag.tag_id}`)).status, 404);
    await createTag('Short lived');
  });

  it('is 400 for a malformed id, 401 without a key', async () => {
    assert.equal((await t.api('DELETE', '/org/tags/nope')).status, 400);
    assert.equal((await t.api('DELETE', `/org/tags/${MISSING}`, { key: null })).status, 401);
  });
});

describe('tags by id or by name on taggable things (KB folders)', () => {
  it('accepts existing ids and names and creates a tag for an unknown name', async () => {
    const existing = await createTag('Existing');
    const res = await t.api('POST', '/org/kb/folders', { body: { name: 'Tagged', tags: [existing.tag_id, 'existing', 'Brand new'] } });
    assert.equal(res.status, 201, res.text);
    const names = res.body.tags.map((x: Tag) => x.name).sort();
    assert.deepEqual(names, ['Brand new', 'Existing'], 'an id and the same name give one tag');
    const created = (await allTags()).find((x) => x.name === 'Brand new');
    assert.ok(created, 'the unknown name became a tag of the organization');
    // PATCH replaces the set.
    const patched = await t.api('PATCH', `/org/kb/nodes/${res.body.kb_node_id}`, { body: { tags: ['brand NEW'] } });
    assert.equal(patched.status, 200);
    assert.deepEqual(
      patched.body.tags.map((x: Tag) => x.tag_id),
      [created.tag_id],
    );
    const cleared = await t.api('PATCH', `/org/kb/nodes/${res.body.kb_node_id}`, { body: { tags: [] } });
    assert.deepEqual(cleared.body.tags, []);
  });

  it('is 404 for an id that is no tag of the organization, and creates nothing then', async () => {
    const before = (await allTags()).length;
    const res = await t.api('POST', '/org/kb/folders', { body: { name: 'Bad tag', tags: ['Would be new', MISSING] } });
    assert.equal(res.status, 404);
    assert.equal((await allTags()).length, before, 'all or nothing');
  });
});

describe('automatic tag rules: /org/tags/rules', () => {
  it('creates (201), lists and deletes (204) a rule; the tag may be given by name', async () => {
    const folder = await t.api('POST', '/org/kb/folders', { body: { name: 'Rule folder' } });
    const res = await t.api('POST', '/org/tags/rules', { body: { tag: 'From rule', folder_id: folder.body.kb_node_id, format: 'PDF' } });
    assert.equal(res.status, 201, res.text);
    assert.match(res.body.rule_id, UUID_RE);
    assert.equal(res.body.format, 'pdf');
    assert.equal(res.body.folder_id, folder.body.kb_node_id);
    const tag = (await allTags()).find((x) => x.name === 'From rule');
    assert.equal(res.body.tag_id, tag?.tag_id);
    const list = await t.api('GET', '/org/tags/rules');
    assert.equal(list.status, 200);
    assert.ok(list.body.some((r: { rule_id: string }) => r.rule_id === res.body.rule_id));
    assert.ok(Number(list.headers.get('x-total-count')) >= 1);
    assert.equal((await t.api('DELETE', `/org/tags/rules/${res.body.rule_id}`)).status, 204);
    assert.equal((await t.api('DELETE', `/org/tags/rules/${res.body.rule_id}`)).status, 404);
  });

  it('is 400 without a condition or with bad values, 404 for an unknown tag id or folder, 401 without a key', async () => {
    assert.equal((await t.api('POST', '/org/tags/rules', { body: { tag: 'x' } })).status, 400);
    assert.equal((await t.api('POST', '/org/tags/rules', { body: { tag: 'x', source_kind: 'email' } })).status, 400);
    assert.equal((await t.api('POST', '/org/tags/rules', { body: { tag: 'x', format: 'p.df' } })).status, 400);
    assert.equal((await t.api('POST', '/org/tags/rules', { body: { tag: MISSING, source_kind: 'raw' } })).status, 404);
    assert.equal((await t.api('POST', '/org/tags/rules', { body: { tag: 'x', folder_id: MISSING } })).status, 404);
    assert.equal((await t.api('GET', '/org/tags/rules?limit=0')).status, 400);
    assert.equal((await t.api('DELETE', '/org/tags/rules/nope')).status, 400);
    assert.equal((await t.api('GET', '/org/tags/rules', { key: null })).status, 401);
    assert.equal((await t.api('POST', '/org/tags/rules', { body: { tag: 'x', source_kind: 'raw' }, key: null })).status, 401);
    assert.equal((await t.api('DELETE', `/org/tags/rules/${MISSING}`, { key: null })).status, 401);
  });
});

describe('permissions: a signed-in viewer (read:kb without write:kb)', () => {
  it('reads tags and the tree but gets 403 on every write', async () => {
    const password = 'viewer-password-123';
    const signup = await t.api('POST', '/auth/signup', { key: null, body: { email: 'viewer@example.com', password, name: 'Viewer' } });
    assert.equal(signup.status, 202, signup.text);
    const admin = await t.api('POST', '/auth/login', { key: null, body: { email: 'admin@example.com', password: 'development-password' } });
    const asAdmin = { key: null, headers: { authorization: `Bearer ${admin.body.token}` } };
    const roles = await t.api('GET', '/org/roles', asAdmin);
    const viewer = roles.body.find((r: { name: string }) => r.name === 'viewer');
    assert.ok(viewer, roles.text);
    const added = await t.api('POST', '/org/users', { ...asAdmin, body: { email: 'viewer@example.com', role_id: viewer.role_id } });
    assert.equal(added.status, 201, added.text);
    const login = await t.api('POST', '/auth/login', { key: null, body: { email: 'viewer@example.com', password } });
    const asViewer = { key: null, headers: { authorization: `Bearer ${login.body.token}` } };

    const tag = await createTag('Viewer target');
    const folder = (await t.api('POST', '/org/kb/folders', { body: { name: 'Viewer folder' } })).body;
    assert.equal((await t.api('GET', '/org/tags', asViewer)).status, 200);
    assert.equal((await t.api('GET', '/org/tags/rules', asViewer)).status, 200);
    assert.equal((await t.api('GET', '/org/kb/tree', asViewer)).status, 200);
    assert.equal((await t.api('GET', `/org/kb/nodes/${folder.kb_node_id}/path`, asViewer)).status, 200);
    for (const [method, path, body] of [
      ['POST', '/org/tags', { name: 'Nope' }],
      ['PATCH', `/org/tags/${tag.tag_id}`, { name: 'Nope' }],
      ['DELETE', `/org/tags/${tag.tag_id}`],
      ['POST', '/org/tags/rules', { tag: 'Nope', source_kind: 'raw' }],
      ['DELETE', `/org/tags/rules/${MISSING}`],
      ['POST', '/org/kb/folders', { name: 'Nope' }],
      ['PATCH', `/org/kb/nodes/${folder.kb_node_id}`, { name: 'Nope' }],
      ['DELETE', `/org/kb/nodes/${folder.kb_node_id}`],
    ] as const) {
      const res = await t.api(method, path, { ...asViewer, ...(body && { body }) });
      assert.equal(res.status, 403, `${method} ${path}: ${res.text}`);
    }
  });
});
