import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { loadConfig, silentLogger } from '@kb/platform';
import { topics, type EventEnvelope } from '@kb/events';
import type { EventBus } from '@kb/bus';
import { createSqliteEventBus } from '@kb/bus/sqlite';
import { createRpcClient, loadProto, serviceConstructor, type CallContext, type RpcClient } from '@kb/rpc';
import { knowledgeBaseConfigSpec } from './config.js';
import { startKnowledgeBase, type RunningService } from './service.js';

// The ingest service's content events, published on the bus as ingest would,
// and their effect on the tree, the filing and the tags (eventually: polled).
const TOKEN = 'internal-token-for-tests-0123456789';
const SHA = 'a'.repeat(64);

interface Node {
  kb_node_id: string;
  type: string;
  parent_id?: string;
  name: string;
  content_id?: string;
  tags: { tag_id: string; name: string }[];
  processing_status?: string;
  category_id?: string;
  topic_id?: string;
}
interface NodeWithChildren {
  node: Node;
  children: Node[];
  total_count: number;
}

let dir: string;
let service: RunningService;
let bus: EventBus;
let tree: RpcClient;
let tags: RpcClient;
let categories: RpcClient;
let position = 0;

const ctxFor = (org: string): CallContext => ({
  org_id: org,
  principal: { type: 'api_key', id: randomUUID() },
  permissions: ['read:kb', 'write:kb'],
  folder_scope: null,
  request_id: randomUUID(),
});

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kb-filing-int-'));
  const config = loadConfig(knowledgeBaseConfigSpec, { DATA_DIR: dir, INTERNAL_TOKEN: TOKEN, GRPC_PORT: '0' });
  service = await startKnowledgeBase({ config, logger: silentLogger() });
  bus = createSqliteEventBus({ path: join(dir, 'bus.db'), logger: silentLogger() });
  const client = (name: string) =>
    createRpcClient(serviceConstructor(loadProto('knowledge_base.proto'), `knowledge_base.v1.${name}`), {
      address: service.address,
      internalToken: TOKEN,
      name: 'knowledge-base',
    });
  tree = client('KnowledgeBaseTree');
  tags = client('Tags');
  categories = client('CategoryService');
});
afterAll(async () => {
  for (const c of [tree, tags, categories]) c.close();
  await service.stop();
  await bus.close();
  rmSync(dir, { recursive: true, force: true });
});

const envelope = (type: string, org: string, data: Record<string, unknown>, id = randomUUID()): EventEnvelope => ({
  id,
  type,
  schema: 1,
  stream_id: `content-${String(data.content_id)}`,
  version: 1,
  position: ++position,
  data: { org_id: org, at: new Date().toISOString(), ...data },
  metadata: { org_id: org },
  recorded_at: new Date().toISOString(),
});
const publish = (...events: EventEnvelope[]) =>
  bus.publish(
    topics.ingest,
    events.map((e) => ({ key: e.metadata.org_id, value: JSON.stringify(e), headers: { type: e.type } })),
  );

const created = (
  org: string,
  content_id: string,
  extra: {
    parent_id?: string | null;
    tags?: string[];
    kind?: 'raw' | 'file';
    format?: string;
    title?: string;
    category_id?: string;
    topic_id?: string;
  },
) =>
  envelope('content.created', org, {
    content_id,
    version_id: randomUUID(),
    version_num: 1,
    type: extra.kind === 'file' ? 'document' : 'raw',
    title: extra.title ?? 'A title',
    source: { kind: extra.kind ?? 'raw', size_bytes: 10, sha256: SHA, ...(extra.format && { format: extra.format }) },
    parent_id: extra.parent_id ?? null,
    tags: extra.tags ?? [],
    ...(extra.category_id && { category_id: extra.category_id }),
    ...(extra.topic_id && { topic_id: extra.topic_id }),
  });

/** Consumers are eventually consistent: poll until the check passes or time runs out. */
async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const childrenOf = (ctx: CallContext, id: string) =>
  tree.call<NodeWithChildren>('GetNode', { kb_node_id: id, limit: 100 }, ctx).then((r) => r.children);
const contentChild = (ctx: CallContext, folderId: string, contentId: string, ok: (n: Node) => boolean, what: string) =>
  eventually(
    async () => (await childrenOf(ctx, folderId)).find((c) => c.content_id === contentId),
    (n): n is Node => n !== undefined && ok(n),
    what,
  ) as Promise<Node>;

describe('content events from ingest into the knowledge base', () => {
  it('files raw content under its folder with its filing and intake tags, and applies rules at once', async () => {
    const org = randomUUID();
    const ctx = ctxFor(org);
    const folder = await tree.call<Node>('CreateFolder', { name: 'Inbox' }, ctx);
    const existing = await tags.call<{ tag_id: string }>('CreateTag', { name: 'Existing' }, ctx);
    const cat = await categories.call<{ category_id: string }>('CreateCategory', { name: 'Guides' }, ctx);
    await tags.call('CreateTagRule', { tag: 'Raw text', source_kind: 'raw' }, ctx);
    await tags.call('CreateTagRule', { tag: 'Inbox stuff', folder_id: folder.kb_node_id }, ctx);
    await tags.call('CreateTagRule', { tag: 'PDFs', format: 'pdf' }, ctx);
    const contentId = randomUUID();
    const event = created(org, contentId, {
      parent_id: folder.kb_node_id,
      title: 'Release notes',
      // An unknown id and an invalid name are dropped: a consumer cannot refuse the event.
      tags: ['Intake tag', existing.tag_id, randomUUID(), 'x'.repeat(101)],
      category_id: cat.category_id,
      topic_id: randomUUID(),
    });
    await publish(event, event); // a redelivery must not make a second node
    const node = await contentChild(ctx, folder.kb_node_id, contentId, (n) => n.tags.length === 4, 'the content node with its tags');
    assert.equal(node.type, 'content');
    assert.equal(node.name, 'Release notes');
    assert.equal(node.processing_status, 'queued');
    assert.equal(node.category_id, cat.category_id);
    assert.equal(node.topic_id, undefined, 'an unknown topic is ignored');
    assert.deepEqual(node.tags.map((t) => t.name).sort(), ['Existing', 'Inbox stuff', 'Intake tag', 'Raw text']);
    assert.equal((await childrenOf(ctx, folder.kb_node_id)).length, 1);

    // Title and filing changes follow; deletion removes the node.
    await publish(envelope('content.updated', org, { content_id: contentId, title: 'Release notes v2', category_id: null }));
    await contentChild(
      ctx,
      folder.kb_node_id,
      contentId,
      (n) => n.name === 'Release notes v2' && n.category_id === undefined,
      'the rename',
    );
    await publish(envelope('content.deleted', org, { content_id: contentId }));
    await eventually(
      () => childrenOf(ctx, folder.kb_node_id),
      (c) => c.length === 0,
      'the deletion',
    );
  });

  it('tags an uploaded file by rule only when its extraction finishes, and tracks its status', async () => {
    const org = randomUUID();
    const ctx = ctxFor(org);
    const parent = await tree.call<Node>('CreateFolder', { name: 'Docs' }, ctx);
    const sub = await tree.call<Node>('CreateFolder', { name: 'Specs', parent_id: parent.kb_node_id }, ctx);
    await tags.call('CreateTagRule', { tag: 'PDFs', format: 'pdf' }, ctx);
    await tags.call('CreateTagRule', { tag: 'Docs tree', folder_id: parent.kb_node_id, source_kind: 'file' }, ctx);
    await tags.call('CreateTagRule', { tag: 'Not this', format: 'docx' }, ctx);
    const contentId = randomUUID();
    const accepted = created(org, contentId, { parent_id: sub.kb_node_id, kind: 'file', format: 'PDF', title: 'Spec' });
    await publish(accepted);
    const queued = await contentChild(ctx, sub.kb_node_id, contentId, () => true, 'the file node');
    assert.deepEqual(queued.tags, [], 'no rule tags before extraction');
    const versionId = (accepted.data as { version_id: string }).version_id;
    await publish(envelope('content.processing_started', org, { content_id: contentId, version_id: versionId, attempt: 1 }));
    await contentChild(ctx, sub.kb_node_id, contentId, (n) => n.processing_status === 'processing', 'processing');
    await publish(
      envelope('content.extracted', org, { content_id: contentId, version_id: versionId, version_num: 1, chunk_count: 1, characters: 5 }),
    );
    const done = await contentChild(ctx, sub.kb_node_id, contentId, (n) => n.processing_status === 'completed', 'completed');
    assert.deepEqual(done.tags.map((t) => t.name).sort(), ['Docs tree', 'PDFs']);
  });

  it('files content whose folder is gone at the root, and marks failures', async () => {
    const org = randomUUID();
    const ctx = ctxFor(org);
    const root = (await tree.call<NodeWithChildren>('GetTree', {}, ctx)).node;
    const contentId = randomUUID();
    const accepted = created(org, contentId, { parent_id: randomUUID(), kind: 'file', format: 'docx' });
    await publish(accepted);
    await contentChild(ctx, root.kb_node_id, contentId, () => true, 'the node at the root');
    const versionId = (accepted.data as { version_id: string }).version_id;
    await publish(envelope('content.failed', org, { content_id: contentId, version_id: versionId, reason: 'broken file', attempts: 3 }));
    await contentChild(ctx, root.kb_node_id, contentId, (n) => n.processing_status === 'failed', 'failed');
  });

  it('lets a content node move and a cascade delete remove it from the tree', async () => {
    const org = randomUUID();
    const ctx = ctxFor(org);
    const a = await tree.call<Node>('CreateFolder', { name: 'A' }, ctx);
    const b = await tree.call<Node>('CreateFolder', { name: 'B' }, ctx);
    const contentId = randomUUID();
    await publish(created(org, contentId, { parent_id: a.kb_node_id }));
    const node = await contentChild(ctx, a.kb_node_id, contentId, () => true, 'the node');
    const moved = await tree.call<Node>('UpdateNode', { kb_node_id: node.kb_node_id, parent_id: b.kb_node_id }, ctx);
    assert.equal(moved.parent_id, b.kb_node_id);
    // A content node is no folder: nothing goes under it.
    await assert.rejects(tree.call('CreateFolder', { name: 'Under content', parent_id: node.kb_node_id }, ctx), { kind: 'validation' });
    await assert.rejects(tree.call('DeleteNode', { kb_node_id: b.kb_node_id }, ctx), { kind: 'conflict' });
    await tree.call('DeleteNode', { kb_node_id: b.kb_node_id, cascade: true }, ctx);
    await assert.rejects(tree.call('GetNode', { kb_node_id: node.kb_node_id }, ctx), { kind: 'not_found' });
  });
});
