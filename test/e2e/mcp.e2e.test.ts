import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { API_KEY, startTestSystem, type TestSystem } from './harness.js';
import { eventually } from './search-fixtures.js';
import { newApiKey, newOrgAdmin, logIn, type SignedIn } from './identity-fixtures.js';
import { assertOutputSchemas, callTool, mcpClient, ok, rawMcp } from './mcp-fixtures.js';

/**
 * The MCP server end to end: the SDK's own client over real HTTP against /mcp on
 * the gateway's port. Tools dispatch to the REST routes with the caller's own
 * credential, so every answer is compared with what REST says.
 */
let t: TestSystem;
let admin: SignedIn;
beforeAll(async () => {
  t = await startTestSystem();
  admin = await logIn(t, 'admin@example.com', 'development-password');
});
afterAll(async () => t.stop());

const freshKey = async (folder_scope: string[] | null = null) => (await newApiKey(admin, { name: 'MCP key', folder_scope })).key;
const folder = async (name: string) => {
  const res = await t.api('POST', '/org/kb/folders', { body: { name } });
  assert.equal(res.status, 201, res.text);
  return res.body.kb_node_id as string;
};
const completed = async (contentId: string) =>
  eventually(async () => {
    const res = await t.api('GET', `/org/kb/content/${contentId}`);
    assert.equal(res.body.processing_status, 'completed', res.text);
  }, 30_000);
const addText = async (title: string, text: string, parent_id?: string) => {
  const res = await t.api('POST', '/org/kb/raw', { body: { title, text, ...(parent_id && { parent_id }) } });
  assert.equal(res.status, 202, res.text);
  await completed(res.body.id);
  return res.body.id as string;
};

describe('MCP: credentials', () => {
  it('accepts the three API-key forms and answers a question with a cited answer', async () => {
    const contentId = await addText('Heron migration', 'Grey herons of the Camargue migrate to Senegal every October.');
    const key = await freshKey();
    for (const headers of <Record<string, string>[]>[
      { 'x-api-key': key },
      { authorization: `Bearer ${key}` },
      { authorization: `ApiKey ${key}` },
    ]) {
      const client = await mcpClient(t.url, headers);
      const { tools } = await client.listTools();
      assert.ok(tools.length >= 20 && tools.some((tool) => tool.name === 'search'));
      const answer = await ok(client, 'ask', { query: 'Where do the grey herons migrate?' });
      assert.equal(answer.answered, true);
      assert.match(answer.answer, /\[1\]/);
      assert.equal(answer.citations[0].content_id, contentId);
      await client.close();
    }
  });

  it('refuses a missing, unknown, malformed or doubled credential with 401 and a WWW-Authenticate to the resource metadata', async () => {
    for (const [headers, code] of [
      [{}, 'missing_credential'],
      [{ 'x-api-key': 'kb_unknown_00000000000000000000000000' }, 'invalid_credential'],
      [{ authorization: 'Bearer kb_unknown_00000000000000000000000000' }, 'invalid_credential'],
      [{ authorization: 'Basic abc' }, 'malformed_credential'],
      [{ 'x-api-key': API_KEY, authorization: `Bearer ${API_KEY}` }, 'ambiguous_credential'],
    ] as const) {
      const res = await rawMcp(t.url, headers);
      assert.equal(res.status, 401, JSON.stringify(headers));
      assert.equal(((await res.json()) as any).error.code, code);
      // RFC 6750: the metadata always; an error code once a credential came (mcp-spec.e2e.test.ts checks each).
      assert.ok(
        res.headers.get('www-authenticate')!.endsWith(`resource_metadata="${t.url}/.well-known/oauth-protected-resource/mcp"`),
        res.headers.get('www-authenticate')!,
      );
    }
    const meta = (await (await fetch(`${t.url}/.well-known/oauth-protected-resource/mcp`)).json()) as any;
    assert.equal(meta.resource, `${t.url}/mcp`);
    assert.deepEqual(meta.authorization_servers, [t.url]);
  });

  it('negotiates an older protocol version, and an unknown session is 404', async () => {
    const key = await freshKey();
    const res = await rawMcp(
      t.url,
      { 'x-api-key': key },
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'old', version: '1' } },
      },
    );
    assert.equal(res.status, 200);
    assert.match(await res.text(), /"protocolVersion":"2025-03-26"/);
    const unknown = await rawMcp(
      t.url,
      { 'x-api-key': key, 'mcp-session-id': 'no-such-session' },
      { jsonrpc: '2.0', id: 2, method: 'ping' },
    );
    assert.equal(unknown.status, 404);
  });
});

describe('MCP: every tool', () => {
  it('each tool answers what its REST route answers', async () => {
    const key = await freshKey();
    const client = await mcpClient(t.url, { 'x-api-key': key });
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    assert.deepEqual(byName.get('search')!.annotations?.readOnlyHint, false);
    assert.deepEqual(byName.get('kb_tree')!.annotations?.readOnlyHint, true);
    assert.deepEqual(byName.get('update_tracked_prompt')!.annotations?.idempotentHint, true);
    assert.deepEqual((byName.get('ingest_text')!.inputSchema as { required: string[] }).required.sort(), ['text', 'title']);

    const folderId = (await ok(client, 'kb_create_folder', { name: 'MCP folder' })).kb_node_id;
    const ingested = await ok(client, 'ingest_text', {
      title: 'Otter diet',
      text: 'Eurasian otters eat mostly fish, and crayfish in summer.',
      parent_id: folderId,
    });
    assert.equal(ingested.processing_status, 'queued');
    await completed(ingested.id);
    assert.equal((await ok(client, 'kb_read_content', { content_id: ingested.id })).title, 'Otter diet');
    assert.match((await ok(client, 'kb_read_chunks', { content_id: ingested.id })).chunks[0].text, /crayfish/);
    // The content's node is the knowledge base's, made from ingest's event: there a moment later.
    await eventually(async () => {
      const folderNode = await ok(client, 'kb_folder', { kb_node_id: folderId });
      assert.deepEqual(
        folderNode.children.map((c: { content_id?: string }) => c.content_id),
        [ingested.id],
      );
    }, 10_000);
    assert.deepEqual(
      (await ok(client, 'kb_node_path', { kb_node_id: folderId })).items.map((n: { name: string }) => n.name),
      (await t.api('GET', `/org/kb/nodes/${folderId}/path`)).body.map((n: { name: string }) => n.name),
    );
    assert.ok((await ok(client, 'kb_tree')).children.some((c: { kb_node_id: string }) => c.kb_node_id === folderId));

    const found = await ok(client, 'search', { query: 'What do otters eat?', folder_ids: [folderId] });
    assert.deepEqual(found.source_ids, [ingested.id]);
    assert.match(found.answer, /\[1\]/);
    assert.equal(found.context[0].content_id, ingested.id);
    assert.deepEqual(Object.keys(await ok(client, 'ask', { query: 'What do otters eat?', folder_ids: [folderId] })).sort(), [
      'answer',
      'answered',
      'citations',
      'query',
      'source_ids',
    ]);
    const history = await ok(client, 'list_search_history');
    assert.ok(history.items.some((q: { query_id: string }) => q.query_id === found.query_id));

    const upload = await ok(client, 'upload_file', {
      files: [
        { filename: 'badgers.txt', content_base64: Buffer.from('Badgers live in setts.').toString('base64'), content_type: 'text/plain' },
      ],
      parent_id: folderId,
      tags: ['mammals'],
    });
    assert.equal(upload.files.length, 1);
    assert.equal(upload.files[0].status, 'accepted', JSON.stringify(upload));
    await completed(upload.files[0].item.id);

    const prompt = await ok(client, 'create_tracked_prompt', { name: 'Otters', text: 'What do {{animal}} eat?' });
    assert.deepEqual(prompt.variables, ['animal']);
    assert.equal((await ok(client, 'get_tracked_prompt', { prompt_id: prompt.prompt_id })).name, 'Otters');
    assert.equal((await ok(client, 'update_tracked_prompt', { prompt_id: prompt.prompt_id, name: 'Otter food' })).name, 'Otter food');
    const listed = await ok(client, 'list_tracked_prompts');
    assert.ok(listed.items.some((p: { prompt_id: string }) => p.prompt_id === prompt.prompt_id));
    const suggestions = await ok(client, 'suggest_tracked_prompts', { count: 3 });
    const restSuggestions = await t.api('POST', '/org/prompts/suggestions', { key, body: { count: 3 } });
    assert.deepEqual(Object.keys(suggestions), Object.keys(restSuggestions.body));
    assert.ok(Array.isArray(suggestions.suggestions) && suggestions.suggestions.length <= 3);

    for (const [tool, path] of [
      ['analytics_overview', '/org/analytics/overview'],
      ['analytics_citations', '/org/analytics/citations'],
      ['analytics_domains', '/org/analytics/domains'],
      ['analytics_pages', '/org/analytics/pages'],
      ['analytics_share_of_voice', '/org/analytics/share-of-voice'],
      ['analytics_prompts', '/org/analytics/prompts'],
      ['analytics_latest_answers', '/org/analytics/answers/latest'],
    ] as const) {
      // Every field with detail: full (the latest answers are summaries by default).
      const viaMcp = await ok(client, tool, tool === 'analytics_latest_answers' ? { detail: 'full' } : {});
      const viaRest = await t.api('GET', path, { key });
      assert.equal(viaRest.status, 200, viaRest.text);
      const expected = Array.isArray(viaRest.body) ? { items: viaRest.body } : viaRest.body;
      assert.deepEqual(Object.keys(viaMcp).sort(), Object.keys(expected).sort(), tool);
    }
    assert.deepEqual(
      (await callTool(client, 'analytics_domains', { sort: 'nope' })).structuredContent!.error,
      (await t.api('GET', '/org/analytics/domains?sort=nope', { key })).body.error,
    );
    // Each tool's structured result is valid against its output schema (REST's response schema).
    await assertOutputSchemas(client, [
      ...['search', 'ask', 'list_search_history', 'kb_tree', 'kb_folder', 'kb_node_path', 'kb_create_folder'],
      ...['kb_read_content', 'kb_read_chunks', 'ingest_text', 'upload_file', 'list_tracked_prompts', 'get_tracked_prompt'],
      ...['create_tracked_prompt', 'update_tracked_prompt', 'suggest_tracked_prompts', 'analytics_overview', 'analytics_citations'],
      ...['analytics_domains', 'analytics_pages', 'analytics_share_of_voice', 'analytics_prompts', 'analytics_latest_answers'],
    ]);
    await client.close();
  });

  it('returns REST errors as tool errors with the same codes and messages', async () => {
    const key = await freshKey();
    const client = await mcpClient(t.url, { 'x-api-key': key });
    const missing = '00000000-0000-4000-8000-000000000000';
    for (const [tool, args, method, path, body] of [
      ['search', { query: '' }, 'POST', '/org/search', { query: '' }],
      ['ingest_text', { title: 'x' }, 'POST', '/org/kb/raw', { title: 'x' }],
      ['kb_read_content', { content_id: missing }, 'GET', `/org/kb/content/${missing}`, undefined],
      ['kb_folder', { kb_node_id: 'not-a-uuid' }, 'GET', '/org/kb/nodes/not-a-uuid', undefined],
      ['update_tracked_prompt', { prompt_id: missing, name: 'x' }, 'PATCH', `/org/prompts/${missing}`, { name: 'x' }],
    ] as const) {
      const res = await callTool(client, tool, args);
      const rest = await t.api(method, path, { key, ...(body && { body }) });
      assert.equal(res.isError, true, tool);
      assert.equal(res.structuredContent!.status, rest.status, tool);
      assert.deepEqual(res.structuredContent!.error, rest.body.error, tool);
      assert.equal((res.content as { text: string }[])[0]!.text, `${rest.body.error.code}: ${rest.body.error.message}`);
    }
    const noFiles = await callTool(client, 'upload_file', { files: [{ filename: 'a.txt', content_base64: '***' }] });
    assert.equal(noFiles.isError, true);
    assert.equal(noFiles.structuredContent!.status, 400);
    await client.close();
  });

  it('exposes knowledge-base documents as resources and ready-made prompts', async () => {
    const contentId = await addText('Kingfisher nests', 'Kingfishers dig nest tunnels in river banks.');
    const client = await mcpClient(t.url, { 'x-api-key': await freshKey() });
    const { resources } = await client.listResources();
    assert.ok(resources.some((r) => r.uri === `kb://content/${contentId}` && r.name === 'Kingfisher nests'));
    const read = await client.readResource({ uri: `kb://content/${contentId}` });
    assert.match((read.contents[0] as { text: string }).text, /nest tunnels/);
    await assert.rejects(client.readResource({ uri: 'kb://content/00000000-0000-4000-8000-000000000000' }), /not_found|404/i);
    const { prompts } = await client.listPrompts();
    assert.ok(prompts.some((p) => p.name === 'draft_answer_page'));
    const drafted = await client.getPrompt({ name: 'draft_answer_page', arguments: { prompt: 'best otter spots' } });
    assert.match((drafted.messages[0]!.content as { text: string }).text, /best otter spots/);
    await assert.rejects(client.getPrompt({ name: 'draft_answer_page', arguments: {} }), /required/);
    await client.close();
  });
});

describe('MCP: folder-scoped keys and credits', () => {
  it('a folder-scoped key sees only its folders through every tool', async () => {
    const inside = await folder('Scoped inside');
    const outside = await folder('Scoped outside');
    const insideDoc = await addText('Inside fact', 'The inside folder holds the puffin colony count: 412 pairs.', inside);
    const outsideDoc = await addText('Outside fact', 'The outside folder holds the puffin ringing total: 97 birds.', outside);
    const key = await freshKey([inside]);
    const client = await mcpClient(t.url, { 'x-api-key': key });

    // Completed in ingest is not yet indexed in the knowledge base: wait until search has it.
    await eventually(async () => {
      const found = await ok(client, 'search', { query: 'puffin', max_results: 10 });
      assert.deepEqual(found.source_ids, [insideDoc]);
    }, 30_000);
    await eventually(
      async () => assert.equal((await ok(client, 'kb_folder', { kb_node_id: inside })).children[0]?.content_id, insideDoc),
      10_000,
    );
    assert.equal((await ok(client, 'kb_read_content', { content_id: insideDoc })).id, insideDoc);
    // kb_tree: not the root (outside its scope) but the folders it may browse, as children of a top of its own.
    const top = await ok(client, 'kb_tree');
    assert.equal(top.kb_node_id, undefined);
    assert.match(top.scope, /may see/);
    assert.deepEqual(
      top.children.map((c: { kb_node_id: string; name: string }) => [c.kb_node_id, c.name]),
      [[inside, 'Scoped inside']],
    );
    const rest = await t.api('GET', '/org/kb/scope', { key });
    assert.deepEqual(rest.body.folder_scope, [inside]);
    const nothing = await mcpClient(t.url, { 'x-api-key': await freshKey([]) });
    const refused = await callTool(nothing, 'kb_tree');
    assert.equal(refused.structuredContent!.status, 403, 'a key scoped to no folder sees none');
    assert.match(refused.structuredContent!.error.message, /^This credential/);
    await nothing.close();
    for (const [tool, args] of [
      ['kb_folder', { kb_node_id: outside }],
      ['kb_node_path', { kb_node_id: outside }],
      ['kb_read_content', { content_id: outsideDoc }],
      ['kb_read_chunks', { content_id: outsideDoc }],
      ['kb_create_folder', { name: 'Sneaky', parent_id: outside }],
      ['ingest_text', { title: 'Sneaky', text: 'nope', parent_id: outside }],
      ['upload_file', { files: [{ filename: 's.txt', content_base64: Buffer.from('nope').toString('base64') }], parent_id: outside }],
      ['search', { query: 'puffin', folder_ids: [outside] }],
    ] as const) {
      const res = await callTool(client, tool, args);
      assert.equal(res.isError, true, tool);
      assert.equal(res.structuredContent!.status, 403, `${tool}: ${JSON.stringify(res.structuredContent)}`);
    }
    // resources/list: exactly the documents under its folders (the root is outside its scope).
    const { resources } = await client.listResources();
    assert.deepEqual(
      resources.map((r) => r.uri),
      [`kb://content/${insideDoc}`],
    );
    await assert.rejects(client.readResource({ uri: `kb://content/${outsideDoc}` }), /folder_scope/);
    assert.match(((await client.readResource({ uri: `kb://content/${insideDoc}` })).contents[0] as { text: string }).text, /412 pairs/);
    assert.equal((await t.api('GET', `/org/kb/nodes/${outside}`)).body.children_total, 1, 'nothing was added outside');
    await client.close();
  });

  it('metered tools answer 402 as a tool error when the organization is out of credits', async () => {
    const poor = await newOrgAdmin(t, 'mcp-poor');
    const { key } = await newApiKey(poor, { name: 'Poor key' });
    const client = await mcpClient(t.url, { 'x-api-key': key });
    for (const [tool, args] of [
      ['search', { query: 'anything' }],
      ['ask', { query: 'anything' }],
      ['ingest_text', { title: 'T', text: 'Some text' }],
    ] as const) {
      const res = await callTool(client, tool, args);
      assert.equal(res.structuredContent!.status, 402, tool);
      const rest = await t.api('POST', tool === 'ingest_text' ? '/org/kb/raw' : '/org/search', { key, body: args });
      assert.equal(rest.status, 402);
      assert.deepEqual(res.structuredContent!.error, rest.body.error);
    }
    assert.equal((await poor.call('GET', '/org/search/queries')).body.length, 0, 'no search ran');
    await client.close();
  });
});

describe('MCP: rate limit (60 a minute per key)', () => {
  it('the 61st request in a minute is 429 with Retry-After; another key has its own budget; REST is not limited', async () => {
    const key = await freshKey();
    const other = await freshKey();
    for (let i = 0; i < 60; i++) {
      const res = await rawMcp(t.url, { 'x-api-key': key });
      assert.equal(res.status, 200, `request ${i + 1}`);
      await res.text();
    }
    const limited = await rawMcp(t.url, { authorization: `Bearer ${key}` });
    assert.equal(limited.status, 429);
    const retryAfter = Number(limited.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
    assert.equal(((await limited.json()) as any).error.code, 'rate_limited');
    const fresh = await rawMcp(t.url, { 'x-api-key': other });
    assert.equal(fresh.status, 200, 'two keys do not share a budget');
    await fresh.text();
    for (let i = 0; i < 5; i++) assert.equal((await t.api('GET', '/org/me', { key })).status, 200, 'REST is not limited');
  });
});

describe('MCP: after the wait it works again', () => {
  let small: TestSystem;
  beforeAll(async () => {
    small = await startTestSystem({ MCP_RATE_LIMIT: '5', MCP_RATE_WINDOW_MS: '2000' });
  });
  afterAll(async () => small.stop());

  it('waits the Retry-After the server gives, then is served', async () => {
    for (let i = 0; i < 5; i++) assert.equal((await rawMcp(small.url, { 'x-api-key': API_KEY })).status, 200);
    const limited = await rawMcp(small.url, { 'x-api-key': API_KEY });
    assert.equal(limited.status, 429);
    const retryAfter = Number(limited.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 2, `Retry-After ${retryAfter}`);
    await new Promise((r) => setTimeout(r, retryAfter * 1000));
    assert.equal((await rawMcp(small.url, { 'x-api-key': API_KEY })).status, 200);
  });

  it('an OAuth grant has one budget across refreshed tokens, apart from API keys', async () => {
    const owner = await logIn(small, 'admin@example.com', 'development-password');
    const redirect = 'http://localhost:7777/cb';
    const post = async (path: string, body: Record<string, string>, json = false) =>
      fetch(`${small.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': json ? 'application/json' : 'application/x-www-form-urlencoded' },
        body: json ? JSON.stringify(body) : new URLSearchParams(body).toString(),
        redirect: 'manual',
      });
    const client = (await (
      await fetch(`${small.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: [redirect] }),
      })
    ).json()) as any;
    const verifier = randomBytes(32).toString('base64url');
    const consent = await post('/oauth/authorize', {
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: redirect,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      session_token: owner.token,
      decision: 'allow',
    });
    const code = new URL(consent.headers.get('location')!).searchParams.get('code')!;
    const tokens = (await (
      await post('/oauth/token', {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        client_id: client.client_id,
        redirect_uri: redirect,
      })
    ).json()) as any;
    const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
    for (let i = 0; i < 5; i++) assert.equal((await rawMcp(small.url, bearer(tokens.access_token))).status, 200);
    assert.equal((await rawMcp(small.url, bearer(tokens.access_token))).status, 429);
    const refreshed = (await (
      await post('/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: client.client_id })
    ).json()) as any;
    assert.equal((await rawMcp(small.url, bearer(refreshed.access_token))).status, 429, 'a new token of the same grant shares its budget');
    const key = (await owner.call('POST', '/org/api-keys', { name: 'other budget' })).body.key;
    assert.equal((await rawMcp(small.url, { 'x-api-key': key })).status, 200);
  });
});

// OAuth 2.1 driven by a script acting as the assistant.
const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};
const form = (body: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(body).toString(),
  redirect: 'manual' as const,
});

describe('MCP: OAuth 2.1 for assistants', () => {
  const REDIRECT = 'http://127.0.0.1:33418/callback';
  let clientId: string;

  async function authorize(extra: Record<string, string> = {}, p = pkce()) {
    const params = {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_challenge: p.challenge,
      code_challenge_method: 'S256',
      state: 'st-' + randomBytes(4).toString('hex'),
    };
    const consent = await fetch(`${t.url}/oauth/authorize?${new URLSearchParams(params)}`);
    assert.equal(consent.status, 200);
    assert.match(await consent.text(), /Allow Test assistant/);
    const res = await fetch(`${t.url}/oauth/authorize`, form({ ...params, session_token: admin.token, decision: 'allow', ...extra }));
    assert.equal(res.status, 302, await res.clone().text());
    const location = new URL(res.headers.get('location')!);
    assert.equal(`${location.origin}${location.pathname}`, REDIRECT);
    assert.equal(location.searchParams.get('state'), params.state);
    assert.equal(location.searchParams.get('iss'), t.url);
    return { code: location.searchParams.get('code')!, verifier: p.verifier };
  }
  const token = async (body: Record<string, string>) => {
    const res = await fetch(`${t.url}/oauth/token`, form(body));
    return { status: res.status, body: (await res.json()) as any };
  };
  const exchange = (code: string, verifier: string) =>
    token({ grant_type: 'authorization_code', code, code_verifier: verifier, client_id: clientId, redirect_uri: REDIRECT });

  beforeAll(async () => {
    const meta = (await (await fetch(`${t.url}/.well-known/oauth-authorization-server`)).json()) as any;
    assert.equal(meta.issuer, t.url);
    assert.deepEqual(meta.code_challenge_methods_supported, ['S256']);
    const reg = await fetch(meta.registration_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Test assistant', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
    });
    assert.equal(reg.status, 201);
    clientId = ((await reg.json()) as any).client_id;
  });

  it('registration, consent with a folder scope, token, MCP calls, refresh rotation and reuse detection', async () => {
    const inside = await folder('OAuth inside');
    const outside = await folder('OAuth outside');
    const { code, verifier } = await authorize({ folder_ids: inside });
    assert.equal((await exchange(code, 'x'.repeat(43))).body.error, 'invalid_grant', 'a wrong verifier fails');
    assert.equal((await exchange(code, verifier)).body.error, 'invalid_grant', 'a code is used once, even by a failed attempt');

    const second = await authorize({ folder_ids: inside });
    const tokens = await exchange(second.code, second.verifier);
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    assert.equal(tokens.body.token_type, 'Bearer');
    assert.equal(tokens.body.expires_in, 900);

    const client = await mcpClient(t.url, { authorization: `Bearer ${tokens.body.access_token}` });
    assert.equal((await ok(client, 'kb_folder', { kb_node_id: inside })).name, 'OAuth inside');
    assert.equal(
      (await callTool(client, 'kb_folder', { kb_node_id: outside })).structuredContent!.status,
      403,
      'folder scope from consent',
    );
    // The grant's folders are its top (kb_tree), the root stays out of reach.
    assert.deepEqual(
      (await ok(client, 'kb_tree')).children.map((c: { kb_node_id: string }) => c.kb_node_id),
      [inside],
    );
    // resources/list with a folder-limited grant: exactly the documents under its folders.
    const insideDoc = await addText('OAuth inside doc', 'Swifts sleep on the wing.', inside);
    await addText('OAuth outside doc', 'Swallows nest in barns.', outside);
    assert.deepEqual(
      (await client.listResources()).resources.map((r) => r.uri),
      [`kb://content/${insideDoc}`],
    );
    await client.close();

    // REST does not take OAuth tokens, nor a forged dispatch header.
    assert.equal(
      (await t.api('GET', '/org/me', { key: null, headers: { authorization: `Bearer ${tokens.body.access_token}` } })).status,
      401,
    );
    assert.equal(
      (
        await t.api('GET', '/org/me', {
          key: null,
          headers: { authorization: `Bearer ${tokens.body.access_token}`, 'x-kb-mcp-dispatch': 'guess-guess-guess-guess' },
        })
      ).status,
      401,
    );

    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, client_id: clientId });
    assert.equal(refreshed.status, 200);
    assert.notEqual(refreshed.body.refresh_token, tokens.body.refresh_token);
    const again = await mcpClient(t.url, { authorization: `Bearer ${refreshed.body.access_token}` });
    assert.equal((await ok(again, 'kb_folder', { kb_node_id: inside })).name, 'OAuth inside');
    await again.close();

    const reused = await token({ grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, client_id: clientId });
    assert.equal(reused.body.error, 'invalid_grant');
    const afterReuse = await rawMcp(t.url, { authorization: `Bearer ${refreshed.body.access_token}` });
    assert.equal(afterReuse.status, 401, 'reusing a rotated refresh token revokes the grant');
    assert.match(afterReuse.headers.get('www-authenticate') ?? '', /resource_metadata=/);
  });

  it('revocation ends the grant; denial, bad redirect URIs and plain PKCE are refused', async () => {
    const { code, verifier } = await authorize();
    const tokens = (await exchange(code, verifier)).body;
    const client = await mcpClient(t.url, { authorization: `Bearer ${tokens.access_token}` });
    assert.ok((await ok(client, 'kb_tree')).kb_node_id, 'no folder chosen: the whole knowledge base');
    await client.close();
    const revoked = await fetch(`${t.url}/oauth/revoke`, form({ token: tokens.refresh_token, client_id: clientId }));
    assert.equal(revoked.status, 200);
    assert.equal((await rawMcp(t.url, { authorization: `Bearer ${tokens.access_token}` })).status, 401);
    assert.equal(
      (await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId })).body.error,
      'invalid_grant',
    );

    const p = pkce();
    const base = { response_type: 'code', client_id: clientId, code_challenge: p.challenge, code_challenge_method: 'S256', state: 's' };
    const wrongUri = await fetch(`${t.url}/oauth/authorize?${new URLSearchParams({ ...base, redirect_uri: `${REDIRECT}/other` })}`);
    assert.equal(wrongUri.status, 400, 'redirect URIs match exactly');
    const plain = await fetch(
      `${t.url}/oauth/authorize?${new URLSearchParams({ ...base, redirect_uri: REDIRECT, code_challenge_method: 'plain' })}`,
      {
        redirect: 'manual',
      },
    );
    assert.equal(plain.status, 400, 'an invalid request is shown, not redirected');
    assert.match(await plain.text(), /invalid_request/);
    const denied = await fetch(
      `${t.url}/oauth/authorize`,
      form({ ...base, redirect_uri: REDIRECT, session_token: admin.token, decision: 'deny' }),
    );
    assert.equal(new URL(denied.headers.get('location')!).searchParams.get('error'), 'access_denied');
    const anonymous = await fetch(`${t.url}/oauth/authorize`, form({ ...base, redirect_uri: REDIRECT, decision: 'allow' }));
    assert.equal(anonymous.status, 401, 'consent needs a signed-in user');
    const badClient = await fetch(`${t.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: ['http://evil.example/cb'] }),
    });
    assert.equal(badClient.status, 400);
    assert.equal(((await badClient.json()) as any).error, 'invalid_redirect_uri');
  });
});
