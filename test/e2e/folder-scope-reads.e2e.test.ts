import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { startTestSystem, type TestSystem } from './harness.js';
import { SOURCES, addSource, waitForRun, waitIndexed } from './generation-helpers.js';
import { callTool, mcpClient } from './mcp-fixtures.js';
import { authorizeParams, form, registerClient, tokenRequest } from './oauth-fixtures.js';

/**
 * Folder-scoped keys and OAuth grants read drafts, pieces, runs and history only when what they
 * drew on lies inside the key's folders: outside is 403 by id and left out of
 * lists (and their totals), on REST and through MCP alike.
 */

const ADMIN = { email: 'admin@example.com', password: 'development-password' };

let t: TestSystem;
let session: string;
let scopedKey: string;
let f1: string;
let f2: string;
/** Drafts and runs drawn from F1 (inside the key's scope) and from F2 (outside). */
let inside: { run_id: string; draft_id: string };
let outside: { run_id: string; draft_id: string };
let typeId: string;

async function run(folderIds: string[] | undefined, contentTypeId: string, key?: string) {
  const res = await t.api('POST', '/org/generation/runs', {
    ...(key && { key }),
    body: {
      content_type_id: contentTypeId,
      instructions: 'Solar panels and home batteries',
      ...(folderIds && { scope: { folder_ids: folderIds } }),
    },
  });
  assert.equal(res.status, 202, res.text);
  const done = await waitForRun(t, res.body.run_id, 60_000, key);
  assert.equal(done.state, 'completed', done.reason);
  return { run_id: res.body.run_id as string, draft_id: done.draft_id as string };
}

beforeAll(async () => {
  t = await startTestSystem();
  session = (await t.api('POST', '/auth/login', { key: null, body: ADMIN })).body.token as string;
  const folder = async (name: string) => (await t.api('POST', '/org/kb/folders', { body: { name } })).body.kb_node_id as string;
  f1 = await folder('Scope reads F1');
  f2 = await folder('Scope reads F2');
  const s1 = await addSource(t, 'Solar in F1', SOURCES.solar, { parent_id: f1 });
  const s2 = await addSource(t, 'Batteries in F2', SOURCES.battery, { parent_id: f2 });
  await waitIndexed(t, 'monocrystalline solar panels efficiency', s1.id);
  await waitIndexed(t, 'home battery lithium charge cycles', s2.id);
  const key = await t.api('POST', '/org/api-keys', {
    key: null,
    headers: { authorization: `Bearer ${session}` },
    body: { name: 'F1 only', folder_scope: [f1] },
  });
  assert.equal(key.status, 201, key.text);
  scopedKey = key.body.key;
  const type = await t.api('POST', '/org/content-types', {
    body: { name: 'Scope guide', config: { sections: [{ title: 'Panels' }, { title: 'Batteries' }] } },
  });
  assert.equal(type.status, 201, type.text);
  typeId = type.body.content_type_id;
  inside = await run([f1], type.body.content_type_id);
  outside = await run([f2], type.body.content_type_id);
  // The piece appears in publishing once the draft's event arrived there.
  for (const d of [inside, outside])
    for (let i = 0; (await t.api('GET', `/org/content/pieces/${d.draft_id}`)).status !== 200; i++)
      if (i > 200) assert.fail('the piece never reached publishing');
      else await new Promise((r) => setTimeout(r, 50));
}, 180_000);
afterAll(async () => t.stop());

const as = (method: 'GET', path: string) => t.api(method, path, { key: scopedKey });
const ids = (items: Record<string, string>[], field: string) => items.map((x) => x[field]);

describe('folder scope on reads of drafts, pieces, runs and history', () => {
  it('403 by id for what was drawn from outside the key’s folders, 200 inside', async () => {
    for (const path of [
      `/org/generation/drafts/${outside.draft_id}`,
      `/org/content/pieces/${outside.draft_id}`,
      `/org/generation/runs/${outside.run_id}`,
      `/org/builder/pieces/${outside.draft_id}/history`,
    ]) {
      const res = await as('GET', path);
      assert.equal(res.status, 403, `${path}: ${res.text}`);
      assert.equal(res.body.error.code, 'folder_scope', path);
      assert.doesNotMatch(res.text, /lithium|battery/i, `${path} leaks nothing`);
    }
    for (const path of [
      `/org/generation/drafts/${inside.draft_id}`,
      `/org/content/pieces/${inside.draft_id}`,
      `/org/generation/runs/${inside.run_id}`,
      `/org/builder/pieces/${inside.draft_id}/history`,
    ])
      assert.equal((await as('GET', path)).status, 200, path);
    assert.equal((await t.api('GET', `/org/generation/drafts/${outside.draft_id}`)).status, 200, 'an unscoped key reads it');
  });

  it('lists leave it out, and their totals count only what the key may see', async () => {
    const drafts = await as('GET', '/org/generation/drafts?limit=100');
    assert.equal(drafts.status, 200, drafts.text);
    assert.ok(ids(drafts.body, 'draft_id').includes(inside.draft_id));
    assert.ok(!ids(drafts.body, 'draft_id').includes(outside.draft_id));
    assert.equal(drafts.headers.get('x-total-count'), String(drafts.body.length));
    const pieces = await as('GET', '/org/content/pieces?limit=100');
    assert.ok(ids(pieces.body, 'piece_id').includes(inside.draft_id));
    assert.ok(!ids(pieces.body, 'piece_id').includes(outside.draft_id));
    assert.equal(pieces.headers.get('x-total-count'), String(pieces.body.length));
    const drafted = await as('GET', '/org/content/pieces?status=draft&limit=100');
    assert.ok(!ids(drafted.body, 'piece_id').includes(outside.draft_id));
    const runs = await as('GET', '/org/generation/runs?limit=100');
    assert.ok(ids(runs.body, 'run_id').includes(inside.run_id));
    assert.ok(!ids(runs.body, 'run_id').includes(outside.run_id));
    assert.equal(runs.headers.get('x-total-count'), String(runs.body.length));
    const all = await t.api('GET', '/org/generation/drafts?limit=100');
    assert.ok(ids(all.body, 'draft_id').includes(outside.draft_id), 'an unscoped key lists everything');
  });

  it('a run the scoped key starts without naming folders draws on its scope, and the key reads its draft', async () => {
    const types = await t.api('GET', '/org/content-types');
    const mine = await run(undefined, types.body[0].content_type_id, scopedKey);
    const draft = await as('GET', `/org/generation/drafts/${mine.draft_id}`);
    assert.equal(draft.status, 200, draft.text);
    assert.deepEqual(draft.body.source_folder_ids, [f1]);
    assert.doesNotMatch(draft.text, /lithium/i, 'nothing from F2 was drawn on');
  });

  it('MCP get_draft, get_piece and list_drafts apply the same rule', async () => {
    const client = await mcpClient(t.url, { 'x-api-key': scopedKey });
    try {
      for (const [tool, args] of [
        ['get_draft', { draft_id: outside.draft_id }],
        ['get_piece', { piece_id: outside.draft_id }],
      ] as const) {
        const res = await callTool(client, tool, args);
        assert.equal(res.isError, true, `${tool}: ${JSON.stringify(res)}`);
        assert.doesNotMatch(JSON.stringify(res), /lithium|battery/i, tool);
      }
      assert.equal((await callTool(client, 'get_draft', { draft_id: inside.draft_id })).isError ?? false, false);
      const listed = await callTool(client, 'list_drafts', { limit: 100 });
      const text = JSON.stringify(listed.structuredContent ?? listed.content);
      assert.ok(text.includes(inside.draft_id));
      assert.ok(!text.includes(outside.draft_id));
    } finally {
      await client.close();
    }
  });
});

describe('folder scope on reads through an OAuth grant', () => {
  const REDIRECT = 'http://127.0.0.1:33498/callback';
  let accessToken: string;

  beforeAll(async () => {
    // The admin consents for the F1 folder only, as an assistant's user would on the consent page.
    const clientId = await registerClient(t.url, REDIRECT);
    const { params, verifier } = authorizeParams(clientId, REDIRECT);
    const orgId = (await t.api('GET', '/org/me')).body.org_id as string;
    const consent = await fetch(
      `${t.url}/oauth/authorize`,
      form({ ...params, org_id: orgId, folder_ids: [f1], decision: 'allow' }, { authorization: `Bearer ${session}` }),
    );
    assert.equal(consent.status, 302, await consent.text());
    const code = new URL(consent.headers.get('location')!).searchParams.get('code');
    assert.ok(code, consent.headers.get('location')!);
    const tokens = await tokenRequest(t.url, {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      client_id: clientId,
      redirect_uri: REDIRECT,
    });
    assert.ok(tokens.body.access_token, JSON.stringify(tokens.body));
    accessToken = tokens.body.access_token;
  });

  it('REST does not take the access token, so nothing outside F1 is read there either', async () => {
    for (const path of [
      `/org/generation/drafts/${outside.draft_id}`,
      `/org/content/pieces/${outside.draft_id}`,
      '/org/generation/drafts?limit=100',
      '/org/content/pieces?limit=100',
    ]) {
      const res = await t.api('GET', path, { key: null, headers: { authorization: `Bearer ${accessToken}` } });
      assert.equal(res.status, 401, `${path}: ${res.text}`);
      assert.doesNotMatch(res.text, /lithium|battery/i, `${path} leaks nothing`);
    }
  });

  it('MCP get_draft, get_piece and list_drafts hide what was drawn from outside the grant’s folders', async () => {
    const client = await mcpClient(t.url, { authorization: `Bearer ${accessToken}` });
    try {
      for (const [tool, args] of [
        ['get_draft', { draft_id: outside.draft_id }],
        ['get_piece', { piece_id: outside.draft_id }],
      ] as const) {
        const res = await callTool(client, tool, args);
        assert.equal(res.isError, true, `${tool}: ${JSON.stringify(res)}`);
        assert.match(JSON.stringify(res), /folder_scope/, `${tool} says why`);
        assert.doesNotMatch(JSON.stringify(res), /lithium|battery/i, tool);
      }
      for (const [tool, args] of [
        ['get_draft', { draft_id: inside.draft_id }],
        ['get_piece', { piece_id: inside.draft_id }],
      ] as const)
        assert.equal((await callTool(client, tool, args)).isError ?? false, false, `${tool} inside F1`);
      const listed = await callTool(client, 'list_drafts', { limit: 100 });
      const text = JSON.stringify(listed.structuredContent ?? listed.content);
      assert.ok(text.includes(inside.draft_id));
      assert.ok(!text.includes(outside.draft_id));
    } finally {
      await client.close();
    }
  });
});

describe('re-runs on one subject', () => {
  it('a run from other folders makes a piece of its own (never a revision of one drawn elsewhere); the same folders revise it', async () => {
    assert.notEqual(inside.draft_id, outside.draft_id, 'the F2 run revised the F1 piece');
    // The scoped key's run on the same subject draws on F1 only: it must not rewrite the F2 piece.
    const scoped = await run(undefined, typeId, scopedKey);
    assert.notEqual(scoped.draft_id, outside.draft_id, 'a scoped key revised a piece drawn from outside its folders');
    const again = await run([f2], typeId);
    assert.equal(again.draft_id, outside.draft_id, 'the same subject and folders revise the piece');
  });
});
