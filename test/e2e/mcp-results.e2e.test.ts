import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { API_KEY, startTestSystem, type TestSystem } from './harness.js';
import { draftFeed, eventually } from './publishing-fixtures.js';
import { callTool, mcpClient, ok, rawMcp, type ToolOutcome } from './mcp-fixtures.js';

/**
 * What an assistant's context holds: with a knowledge base of large documents,
 * long pieces and long tracked prompts, no tool's result at its default
 * arguments exceeds RESULT_CAP characters, a cut result says how to read on and
 * reading on gets the rest; tools/list stays within TOOLS_LIST_BUDGET, every
 * parameter is described; toolsets and read-only mode load fewer tools.
 */
const RESULT_CAP = 20_000;
const TOOLS_LIST_BUDGET = 45_000;

let t: TestSystem;
let feed: ReturnType<typeof draftFeed>;
let client: Client;
const ids: Record<string, string> = {};
let bigText = '';
let bigBody = '';

const sentence = (i: number) => `Fact number ${i} about river otters is that they hold their breath for up to ${i % 9} minutes. `;

beforeAll(async () => {
  t = await startTestSystem({ MCP_RATE_LIMIT: '100000' });
  feed = draftFeed(t.dataDir);
  const org = (await t.api('GET', '/org/me')).body.org_id as string;

  // A document of about 90,000 characters.
  bigText = Array.from(
    { length: 60 },
    (_, s) => `## Part ${s}\n\n${Array.from({ length: 15 }, (_, i) => sentence(s * 15 + i)).join('')}`,
  ).join('\n\n');
  const doc = await t.api('POST', '/org/kb/raw', { body: { title: 'Otter handbook', text: bigText } });
  assert.equal(doc.status, 202, doc.text);
  ids.content = doc.body.id;
  await eventually(
    async () => (await t.api('GET', `/org/kb/content/${ids.content}`)).body.processing_status === 'completed',
    'ingested',
    60_000,
  );
  const node = await t.api('GET', '/org/kb/tree');
  ids.node = node.body.kb_node_id;

  // Twelve pieces of about 12,000 characters with 60 cited sentences each.
  bigBody = Array.from({ length: 120 }, (_, i) => sentence(i)).join('');
  let last = '';
  for (let p = 0; p < 12; p++) {
    const d = feed.draft(org, { title: `Long piece ${p}` });
    const sentences = Array.from({ length: 60 }, (_, i) => ({
      index: i,
      text: sentence(i),
      verdict: 'supported',
      citations: [{ content_id: randomUUID(), version_id: randomUUID(), chunk_id: `c:${i}`, quote: sentence(i) }],
    }));
    await feed.created({ ...d, body: bigBody, sections: [{ section_id: 's1', title: 'All of it', sentences }] } as typeof d);
    last = d.draft_id;
  }
  ids.piece = last;
  await eventually(async () => (await t.api('GET', `/org/content/pieces/${last}`)).status === 200, 'pieces arrived');
  assert.equal((await t.api('POST', `/org/content/pieces/${last}/submit`, { body: {} })).status, 200);
  assert.equal((await t.api('POST', `/org/content/pieces/${last}/approve`, { body: {} })).status, 200);

  // Ten tracked prompts of 5,000 characters.
  for (let p = 0; p < 10; p++) {
    const res = await t.api('POST', '/org/prompts', { body: { name: `Long prompt ${p}`, text: `How long ${p}? ${'x'.repeat(5000)}` } });
    assert.equal(res.status, 201, res.text);
    ids.prompt = res.body.prompt_id;
  }
  const type = await t.api('POST', '/org/content-types', { body: { name: 'Answer page', config: { sections: [{ title: 'Otters' }] } } });
  assert.equal(type.status, 201, type.text);
  ids.contentType = type.body.content_type_id;
  for (let i = 0; i < 5; i++) assert.equal((await t.api('POST', '/org/search', { body: { query: `otters breath ${i}` } })).status, 200);

  client = await mcpClient(t.url, { 'x-api-key': API_KEY });
});
afterAll(async () => {
  await client?.close();
  await feed?.close();
  await t?.stop();
});

/** The document's chunks as REST gives them, every page. */
async function allChunks(): Promise<string[]> {
  const out: string[] = [];
  for (let offset = 0; ; offset += 100) {
    const page = await t.api('GET', `/org/kb/content/${ids.content}/chunks?limit=100&offset=${offset}`);
    out.push(...page.body.chunks.map((c: { text: string }) => c.text));
    if (page.body.chunks.length < 100) return out;
  }
}

const texts = (res: ToolOutcome) => (res.content as { type: string; text: string }[]).map((c) => c.text);
const resultSize = (res: ToolOutcome) => texts(res).join('\n').length;

/** The smallest arguments each tool needs; everything else stays at its default. */
const minimal = (): Record<string, Record<string, unknown>> => ({
  search: { query: 'How long do otters hold their breath?' },
  ask: { query: 'How long do otters hold their breath?' },
  kb_folder: { kb_node_id: ids.node },
  kb_node_path: { kb_node_id: ids.node },
  kb_create_folder: { name: `Folder ${randomUUID()}` },
  kb_read_content: { content_id: ids.content },
  kb_read_chunks: { content_id: ids.content },
  ingest_text: { title: 'Small', text: 'Otters are mustelids.' },
  upload_file: { files: [{ filename: 'a.txt', content_base64: Buffer.from('Otters swim.').toString('base64') }] },
  get_tracked_prompt: { prompt_id: ids.prompt },
  create_tracked_prompt: { name: `New prompt ${randomUUID()}`, text: 'Do otters sleep?' },
  update_tracked_prompt: { prompt_id: ids.prompt, name: `Renamed ${randomUUID()}` },
  verify_text: { text: 'River otters hold their breath for up to 8 minutes.' },
  start_generation: { content_type_id: ids.contentType },
  get_generation_run: { run_id: randomUUID() },
  get_draft: { draft_id: randomUUID() },
  get_piece: { piece_id: ids.piece },
  publish_piece: { piece_id: ids.piece },
});

describe('MCP results fit an assistant’s context', () => {
  it(`tools/list stays within ${TOOLS_LIST_BUDGET} characters, with enums, no {not: {}} and every parameter described`, async () => {
    const { tools } = await client.listTools();
    const size = JSON.stringify({ tools }).length;
    console.info(`tools/list: ${tools.length} tools, ${size} characters`);
    assert.ok(size <= TOOLS_LIST_BUDGET, `tools/list is ${size} characters, over the budget of ${TOOLS_LIST_BUDGET}`);
    const json = JSON.stringify(tools);
    assert.doesNotMatch(json, /"not":\{\}/);
    assert.doesNotMatch(json, /"anyOf":\[\{"const"/);
    for (const tool of tools) {
      for (const [name, schema] of Object.entries((tool.inputSchema.properties ?? {}) as Record<string, { description?: string }>))
        assert.ok(schema.description, `${tool.name}.${name} has a description`);
      assert.ok(!JSON.stringify(tool.outputSchema ?? {}).includes('"anyOf"'), `${tool.name}: no error branch in the output schema`);
    }
  });

  it(`no tool's result at its default arguments exceeds ${RESULT_CAP} characters`, async () => {
    const { tools } = await client.listTools();
    const args = minimal();
    const sizes: [string, number][] = [];
    for (const tool of tools) {
      const res = await callTool(client, tool.name, args[tool.name] ?? {});
      const size = resultSize(res);
      sizes.push([tool.name, size]);
      assert.ok(size <= RESULT_CAP, `${tool.name}: ${size} characters`);
      assert.ok(JSON.stringify(res.structuredContent ?? {}).length <= RESULT_CAP, `${tool.name}: structured content`);
    }
    const largest = sizes.sort((a, b) => b[1] - a[1])[0]!;
    console.info(`largest default result: ${largest[0]} ${largest[1]} characters`);
    // The data is large enough that the defaults matter: some results had to be summarized or paged.
    assert.ok(largest[1] > 5_000, JSON.stringify(sizes));
  });

  it('list tools give summaries by default, every field with detail: full, both capped', async () => {
    const summary = await ok(client, 'list_pieces');
    assert.ok(summary.total_count >= 12, `${summary.total_count}`);
    const item = summary.items[0];
    assert.deepEqual(Object.keys(item).sort(), [
      ...['content_kind', 'piece_id', 'publication_count', 'publishable', 'published_at', 'revision', 'stale_count', 'status', 'title'],
      ...['unsupported_count', 'updated_at', 'verification'],
    ]);
    const full = await callTool(client, 'list_pieces', { detail: 'full', limit: 100 });
    assert.ok(resultSize(full) <= RESULT_CAP);
    assert.equal(typeof full.structuredContent!.items[0].body, 'string', 'whole items');
    assert.ok(full.structuredContent!.items.length < summary.total_count, 'cut to fit');
    const note = texts(full).at(-1)!;
    assert.match(note, new RegExp(`Cut to fit 20,000 characters: items holds \\d+ of ${summary.total_count} items`));
    const nextOffset = full.structuredContent!.next_offset as number;
    assert.match(note, new RegExp(`offset: ${nextOffset}`));
    const rest = await ok(client, 'list_pieces', { detail: 'full', limit: 100, offset: nextOffset });
    assert.ok(rest.items.length > 0);
    assert.notEqual(rest.items[0].piece_id, full.structuredContent!.items[0].piece_id);

    const prompts = await ok(client, 'list_tracked_prompts');
    assert.ok(
      prompts.items.every((p: { text: string }) => p.text.length <= 201),
      'a summary holds the start of a long prompt',
    );
  });

  it('get_piece reads a long body a window at a time; read on with start_index gets the whole of it', async () => {
    const first = await ok(client, 'get_piece', { piece_id: ids.piece });
    assert.equal(first.body_length, bigBody.length);
    assert.equal(first.sections[0].sentences, 60, 'sentences as a count');
    let body = first.body as string;
    let next = first.next_start_index as number | undefined;
    assert.ok(next !== undefined && next < bigBody.length);
    while (next !== undefined) {
      const page = await ok(client, 'get_piece', { piece_id: ids.piece, start_index: next });
      body += page.body;
      next = page.next_start_index;
    }
    assert.equal(body, bigBody);
    const full = await callTool(client, 'get_piece', { piece_id: ids.piece, detail: 'full', max_length: 20_000 });
    assert.ok(resultSize(full) <= RESULT_CAP);
    assert.ok(full.structuredContent!.truncated, 'every sentence with citations does not fit: cut and said so');
  });

  it('kb_read_chunks pages with next_offset; search with 100 results is cut and says how to ask for less', async () => {
    let offset: number | undefined = 0;
    const chunks: string[] = [];
    while (offset !== undefined) {
      const page = await ok(client, 'kb_read_chunks', { content_id: ids.content, offset, limit: 100 });
      chunks.push(...page.chunks.map((c: { text: string }) => c.text));
      assert.ok(JSON.stringify(page).length <= RESULT_CAP);
      offset = page.next_offset;
    }
    assert.deepEqual(chunks, await allChunks());

    const search = await callTool(client, 'search', { query: 'otters breath minutes', max_results: 100 });
    assert.ok(resultSize(search) <= RESULT_CAP);
    assert.equal(Object.keys(search.structuredContent!)[0], 'query', 'the answer before the context');
  });

  it('resources/read of a large document comes a window at a time, and the windows make the whole text', async () => {
    let uri: string | undefined = `kb://content/${ids.content}`;
    let whole = '';
    let reads = 0;
    while (uri) {
      const { contents } = await client.readResource({ uri });
      const text = (contents[0] as { text: string }).text;
      assert.ok(text.length <= RESULT_CAP, `${text.length}`);
      const more = /\n\n\[Characters [\d,]+ to [\d,]+ of [\d,]+\. To read on: (kb:\/\/content\/\S+)\]$/.exec(text);
      whole += more ? text.slice(0, more.index) : text;
      uri = more?.[1];
      reads++;
    }
    assert.ok(reads >= 4, `${reads} reads`);
    assert.equal(whole, (await allChunks()).join('\n\n'));
  });
});

describe('MCP toolsets and read-only mode', () => {
  const names = async (query: string) => {
    const c = await mcpClient(t.url, { 'x-api-key': API_KEY }, query);
    const { tools } = await c.listTools();
    await c.close();
    return tools.map((tool) => tool.name);
  };

  it('?toolsets= loads only those groups, ?read_only=true only what changes nothing, an unknown group is 400', async () => {
    const all = await names('');
    const kb = await names('?toolsets=kb,search');
    assert.ok(kb.length < all.length);
    assert.deepEqual(kb.filter((n) => !n.startsWith('kb_')).sort(), ['ask', 'ingest_text', 'list_search_history', 'search', 'upload_file']);
    const readOnly = await names('?read_only=true');
    for (const gone of ['ingest_text', 'upload_file', 'kb_create_folder', 'create_tracked_prompt', 'start_generation', 'publish_piece'])
      assert.ok(!readOnly.includes(gone), gone);
    for (const kept of ['search', 'ask', 'kb_tree', 'get_piece', 'analytics_overview', 'verify_text'])
      assert.ok(readOnly.includes(kept), kept);

    const { tools } = await client.listTools();
    for (const tool of tools.filter((x) => readOnly.includes(x.name) && x.annotations?.readOnlyHint !== true))
      assert.ok(['search', 'ask', 'verify_text'].includes(tool.name), `${tool.name}: read-only mode keeps reads and metered reads only`);

    const unknown = await fetch(`${t.url}/mcp?toolsets=everything`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': API_KEY },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      }),
    });
    assert.equal(unknown.status, 400);
    assert.match(JSON.stringify(await unknown.json()), /Unknown toolset everything/);
    assert.equal((await rawMcp(t.url, { 'x-api-key': API_KEY })).status, 200);
  });
});
