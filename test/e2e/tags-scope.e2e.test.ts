import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { startTestSystem, type TestSystem } from './harness.js';
import { logIn, newApiKey, type SignedIn } from './identity-fixtures.js';
import { eventually } from './search-fixtures.js';

/** Tags follow the folder scope as content does (issue 13 item 4). */

let t: TestSystem;
let admin: SignedIn;
let folderA: string;
let folderB: string;

const ok = async (method: string, path: string, body: unknown, status = 201) => {
  const res = await t.api(method, path, { body });
  assert.equal(res.status, status, `${path}: ${res.text}`);
  return res.body;
};

beforeAll(async () => {
  t = await startTestSystem();
  admin = await logIn(t, 'admin@example.com', 'development-password');
  folderA = (await ok('POST', '/org/kb/folders', { name: 'Tag scope A', tags: ['tag-in-A-folder'] })).kb_node_id;
  folderB = (await ok('POST', '/org/kb/folders', { name: 'Tag scope B', tags: ['tag-in-B-folder'] })).kb_node_id;
  await ok('POST', '/org/kb/raw', { title: 'In A', text: 'Alpha text in folder A.', parent_id: folderA, tags: ['tag-on-A-content'] }, 202);
  await ok('POST', '/org/kb/raw', { title: 'In B', text: 'Beta text in folder B.', parent_id: folderB, tags: ['tag-on-B-content'] }, 202);
  await ok('POST', '/org/prompts', { name: 'Tagged prompt', text: 'What is alpha?', tags: ['tag-on-prompt'] });
  await ok('POST', '/org/tags', { name: 'tag-on-nothing' });
  await ok('POST', '/org/tags/rules', { tag: 'rule-A', folder_id: folderA });
  await ok('POST', '/org/tags/rules', { tag: 'rule-B', folder_id: folderB });
  await ok('POST', '/org/tags/rules', { tag: 'rule-anywhere', format: 'pdf' });
  // The content tags are applied by the knowledge base's consumer of the ingest topic.
  await eventually(async () => {
    const names = ((await t.api('GET', '/org/tags?limit=100')).body as { name: string }[]).map((x) => x.name);
    assert.ok(names.includes('tag-on-B-content') && names.includes('tag-on-A-content'));
    const tree = (await t.api('GET', `/org/kb/nodes/${folderB}`)).body as { children: { tags: unknown[] }[] };
    assert.ok(tree.children.some((c) => c.tags.length > 0));
  });
});
afterAll(async () => t.stop());

const names = async (path: string, key?: string) => {
  const res = await t.api('GET', path, { ...(key && { key }) });
  assert.equal(res.status, 200, res.text);
  return res;
};

describe('tags and folder scope', () => {
  it('a folder-scoped key lists only the tags on what it can see: its folders and content, prompts', async () => {
    const { key } = await newApiKey(admin, { name: 'Tags in A', folder_scope: [folderA] });
    const res = await names('/org/tags?limit=100', key);
    const seen = (res.body as { name: string }[]).map((x) => x.name).sort();
    assert.deepEqual(seen, ['tag-in-A-folder', 'tag-on-A-content', 'tag-on-prompt']);
    assert.equal(res.headers.get('x-total-count'), '3');
    const paged = await names('/org/tags?limit=1&offset=1', key);
    assert.equal(paged.body.length, 1);
    assert.equal(paged.headers.get('x-total-count'), '3');
  });

  it('an unrestricted key lists every tag', async () => {
    const seen = ((await names('/org/tags?limit=100')).body as { name: string }[]).map((x) => x.name);
    for (const n of [
      'tag-in-A-folder',
      'tag-in-B-folder',
      'tag-on-A-content',
      'tag-on-B-content',
      'tag-on-prompt',
      'tag-on-nothing',
      'rule-anywhere',
    ])
      assert.ok(seen.includes(n), n);
  });

  it('a folder-scoped key lists only the tag rules about folders inside its scope', async () => {
    const { key } = await newApiKey(admin, { name: 'Rules in B', folder_scope: [folderB] });
    const rules = (await names('/org/tags/rules?limit=100', key)).body as { folder_id?: string }[];
    assert.deepEqual(
      rules.map((r) => r.folder_id),
      [folderB],
    );
    assert.equal(((await names('/org/tags/rules?limit=100')).body as unknown[]).length, 3);
  });

  it('a key with an empty scope sees only the tags on prompts, and no rule', async () => {
    const { key } = await newApiKey(admin, { name: 'No KB tags', folder_scope: [] });
    assert.deepEqual(
      ((await names('/org/tags?limit=100', key)).body as { name: string }[]).map((x) => x.name),
      ['tag-on-prompt'],
    );
    assert.deepEqual((await names('/org/tags/rules', key)).body, []);
  });
});
