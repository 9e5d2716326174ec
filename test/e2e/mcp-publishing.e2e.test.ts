import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestSystem, type TestSystem } from './harness.js';
import { logIn, newApiKey, newMember, newOrgAdmin, type SignedIn } from './identity-fixtures.js';
import { draftFeed, eventually, startReceiver } from './publishing-fixtures.js';
import { assertOutputSchemas, callTool, mcpClient, ok } from './mcp-fixtures.js';

/**
 * Publishing's dry run (POST /org/content/pieces/:id/publish with dry_run) on
 * REST, and the publishing tools over MCP, whose publish is a dry run unless
 * told otherwise.
 */
let t: TestSystem;
let feed: ReturnType<typeof draftFeed>;
let org: string;
let slug: string;
let admin: SignedIn;

beforeAll(async () => {
  t = await startTestSystem({ ALLOW_PRIVATE_DESTINATIONS: 'true' }); // the receiver listens on loopback
  feed = draftFeed(t.dataDir);
  const me = await t.api('GET', '/org/me');
  assert.equal(me.status, 200, me.text);
  org = me.body.org_id;
  slug = me.body.slug;
  admin = await logIn(t, 'admin@example.com', 'development-password');
});
afterAll(async () => {
  await feed.close();
  await t.stop();
});

const piece = (id: string) => t.api('GET', `/org/content/pieces/${id}`);
async function arrived(d: { draft_id: string; revision: number }) {
  return eventually(async () => {
    const res = await piece(d.draft_id);
    return res.status === 200 && res.body.revision === d.revision ? res.body : undefined;
  }, `piece ${d.draft_id}`);
}
async function approved(o: Parameters<typeof feed.draft>[1] = {}) {
  const d = await feed.created(feed.draft(org, { title: `Dry run ${randomUUID().slice(0, 8)}`, ...o }));
  await arrived(d);
  const submitted = await t.api('POST', `/org/content/pieces/${d.draft_id}/submit`, { body: {} });
  assert.equal(submitted.status, 200, submitted.text);
  const res = await t.api('POST', `/org/content/pieces/${d.draft_id}/approve`, { body: {} });
  assert.equal(res.status, 200, res.text);
  return d;
}
const dryRun = (id: string, key?: string | null) =>
  t.api('POST', `/org/content/pieces/${id}/publish`, { body: { dry_run: true }, ...(key !== undefined && { key }) });

describe('REST: publish dry run', () => {
  it('answers what would be published where (slug, URL) and changes nothing; the real publish then does it', async () => {
    const d = await approved({ title: 'Dry run otters' });
    const before = (await piece(d.draft_id)).body;
    const res = await dryRun(d.draft_id);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.dry_run, true);
    assert.equal(res.body.publishable, true);
    assert.equal(res.body.results.length, 1);
    const [planned] = res.body.results;
    assert.equal(planned.type, 'hosted');
    assert.equal(planned.result, 'would_publish');
    assert.equal(planned.slug, 'dry-run-otters');
    assert.ok(planned.url.endsWith(`/sites/${slug}/dry-run-otters`), planned.url);
    const page = `${t.url}/sites/${slug}/dry-run-otters`;
    // Nothing changed: no event (history), no publication, no page.
    assert.deepEqual((await piece(d.draft_id)).body, before);
    assert.equal((await fetch(page)).status, 404);

    const real = await t.api('POST', `/org/content/pieces/${d.draft_id}/publish`, { body: {} });
    assert.equal(real.status, 200, real.text);
    assert.equal(real.body.dry_run, undefined);
    assert.equal(real.body.publications[0].url, planned.url);
    assert.equal((await fetch(page)).status, 200);
    const again = await dryRun(d.draft_id);
    assert.equal(again.status, 200, again.text);
    assert.equal(again.body.results[0].result, 'unchanged');
    assert.deepEqual((await piece(d.draft_id)).body.history, real.body.history);
  });

  it('422 naming the unsupported sentences when the piece fails the publish gate, and nothing is recorded', async () => {
    const bad = await feed.created(feed.draft(org, { verified: false }));
    await arrived(bad);
    const res = await dryRun(bad.draft_id);
    assert.equal(res.status, 422, res.text);
    assert.equal(res.body.error.code, 'unverified_content');
    assert.equal(res.body.error.details.sentences[0].text, 'Everyone needs ten times the usual dose.');
    assert.deepEqual((await piece(bad.draft_id)).body.history, []);
    // An unknown destination is the real publish's 404, a bad dry_run value its 400.
    const unknown = await t.api('POST', `/org/content/pieces/${(await approved()).draft_id}/publish`, {
      body: { dry_run: true, destination_ids: [randomUUID()] },
    });
    assert.equal(unknown.status, 404, unknown.text);
    const badValue = await t.api('POST', `/org/content/pieces/${bad.draft_id}/publish`, { body: { dry_run: 'yes please' } });
    assert.equal(badValue.status, 400, badValue.text);
  });

  it('names every destination: a webhook would be called (no URL known), nothing is delivered; no publisher is 422', async () => {
    const secret = `whsec_${Buffer.from('a dry run webhook secret of 32 b').toString('base64')}`;
    const receiver = await startReceiver(secret);
    try {
      const hook = await t.api('POST', '/org/destinations', {
        body: { type: 'webhook', name: 'Dry hook', config: { url: `${receiver.url}/dry` }, secret },
      });
      assert.equal(hook.status, 201, hook.text);
      const hosted = (await t.api('GET', '/org/destinations')).body.find((x: { type: string }) => x.type === 'hosted');
      const d = await approved({ title: 'Dry run kites' });
      const res = await t.api('POST', `/org/content/pieces/${d.draft_id}/publish`, {
        body: { dry_run: true, destination_ids: [hosted.destination_id, hook.body.destination_id] },
      });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(
        res.body.results.map((r: { type: string; name: string; result: string; slug: string }) => [r.type, r.result, r.slug]),
        [
          ['hosted', 'would_publish', 'dry-run-kites'],
          ['webhook', 'would_publish', 'dry-run-kites'],
        ],
      );
      assert.equal(res.body.results[1].url, null);
      assert.equal(res.body.results[1].name, 'Dry hook');
      const deliveries = await t.api('GET', `/org/destinations/${hook.body.destination_id}/deliveries`);
      assert.equal(deliveries.status, 200, deliveries.text);
      assert.deepEqual(deliveries.body, []);
      assert.equal(receiver.received.length, 0);

      const off = await t.api('PATCH', `/org/destinations/${hosted.destination_id}`, { body: { enabled: false } });
      assert.equal(off.status, 200, off.text);
      const none = await dryRun(d.draft_id);
      assert.equal(none.status, 422, none.text);
      assert.equal(none.body.error.code, 'no_publisher');
      assert.equal((await t.api('PATCH', `/org/destinations/${hosted.destination_id}`, { body: { enabled: true } })).status, 200);
    } finally {
      await receiver.close();
    }
  });

  it('403 without publish:content and for a folder-scoped key on content from outside its folders', async () => {
    const other = await newOrgAdmin(t, 'dryrun');
    const viewer = await newMember(t, other, 'viewer');
    const d = await feed.created(feed.draft(other.org_id));
    await eventually(
      async () => ((await other.call('GET', `/org/content/pieces/${d.draft_id}`)).status === 200 ? true : undefined),
      'other piece',
    );
    const denied = await viewer.call('POST', `/org/content/pieces/${d.draft_id}/publish`, { dry_run: true });
    assert.equal(denied.status, 403, denied.text);
    assert.equal((await t.api('POST', `/org/content/pieces/${d.draft_id}/publish`, { key: null, body: { dry_run: true } })).status, 401);

    const folder = await t.api('POST', '/org/kb/folders', { body: { name: `Dry run folder ${randomUUID()}` } });
    assert.equal(folder.status, 201, folder.text);
    const scoped = (await newApiKey(admin, { name: 'Scoped dry run', folder_scope: [folder.body.kb_node_id] })).key;
    const outside = await approved({ source_folder_ids: [randomUUID()] });
    const res = await dryRun(outside.draft_id, scoped);
    assert.equal(res.status, 403, res.text);
    assert.equal(res.body.error.code, 'folder_scope');
  });
});

describe('MCP: publishing tools', () => {
  it('list_pieces, get_piece and publish_piece, a dry run unless dry_run is false', async () => {
    const key = (await newApiKey(admin, { name: 'MCP publisher' })).key;
    const client = await mcpClient(t.url, { 'x-api-key': key });
    const { tools } = await client.listTools();
    const publish = tools.find((tool) => tool.name === 'publish_piece')!;
    assert.equal((publish.inputSchema.properties as Record<string, { default?: unknown }>).dry_run!.default, true);
    assert.deepEqual(publish.inputSchema.required, ['piece_id']);
    assert.equal(publish.annotations?.readOnlyHint, false);
    assert.match(publish.description!, /DRY RUN BY DEFAULT \(dry_run defaults to true\)/);
    const dryRunArg = (publish.inputSchema.properties as Record<string, { description?: string }>).dry_run!;
    assert.match(dryRunArg.description!, /^true \(the default\)/);
    assert.doesNotMatch(dryRunArg.description!, /default false/);

    const d = await approved({ title: 'Dry run herons' });
    const listed = await ok(client, 'list_pieces', { status: 'approved', limit: 100 });
    assert.ok(listed.items.some((p: { piece_id: string }) => p.piece_id === d.draft_id));
    const summary = listed.items.find((p: { piece_id: string }) => p.piece_id === d.draft_id);
    assert.equal(summary.body, undefined, 'list items are summaries');
    assert.equal(summary.status, 'approved');
    const { body_length: bodyLength, ...read } = await ok(client, 'get_piece', { piece_id: d.draft_id, detail: 'full' });
    assert.deepEqual(read, (await piece(d.draft_id)).body);
    assert.equal(bodyLength, read.body.length);
    const brief = await ok(client, 'get_piece', { piece_id: d.draft_id });
    assert.equal(brief.body, read.body);
    assert.equal(brief.sections[0].sentences, read.sections[0].sentences.length, 'sentences as counts by default');

    const planned = await ok(client, 'publish_piece', { piece_id: d.draft_id });
    assert.deepEqual(Object.keys(planned).slice(0, 4), ['dry_run', 'status', 'publishable', 'results'], 'the outcome first');
    assert.equal(planned.dry_run, true);
    assert.equal(planned.results[0].result, 'would_publish');
    assert.ok(planned.results[0].url.endsWith(`/sites/${slug}/dry-run-herons`), planned.results[0].url);
    assert.deepEqual((await piece(d.draft_id)).body, read, 'the dry run changed nothing');

    const published = await ok(client, 'publish_piece', { piece_id: d.draft_id, dry_run: false });
    assert.equal(published.dry_run, false);
    assert.equal(published.status, 'published');
    assert.deepEqual(
      published.results.map((r: { result: string }) => r.result),
      ['published'],
    );
    assert.equal((await fetch(`${t.url}/sites/${slug}/dry-run-herons`)).status, 200);

    // The gate's 422 and the scope's 403 are REST's, as tool errors.
    const bad = await feed.created(feed.draft(org, { verified: false }));
    await arrived(bad);
    const refused = await callTool(client, 'publish_piece', { piece_id: bad.draft_id });
    const rest = await dryRun(bad.draft_id, key);
    assert.equal(refused.isError, true);
    assert.equal(refused.structuredContent!.status, 422);
    assert.deepEqual(refused.structuredContent!.error, rest.body.error);
    const folder = await t.api('POST', '/org/kb/folders', { body: { name: `MCP publish folder ${randomUUID()}` } });
    const scopedClient = await mcpClient(t.url, {
      'x-api-key': (await newApiKey(admin, { name: 'Scoped MCP publisher', folder_scope: [folder.body.kb_node_id] })).key,
    });
    const outside = await approved({ source_folder_ids: [randomUUID()] });
    const scoped = await callTool(scopedClient, 'publish_piece', { piece_id: outside.draft_id });
    assert.equal(scoped.structuredContent!.status, 403);
    assert.equal(scoped.structuredContent!.error.code, 'folder_scope');
    await scopedClient.close();

    await assertOutputSchemas(client, ['list_pieces', 'get_piece', 'publish_piece']);
    await client.close();
  });
});
