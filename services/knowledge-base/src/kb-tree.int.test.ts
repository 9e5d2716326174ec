import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { AppError, loadConfig, silentLogger } from '@kb/platform';
import { createRpcClient, loadProto, serviceConstructor, type CallContext, type RpcClient } from '@kb/rpc';
import { knowledgeBaseConfigSpec } from './config.js';
import { startKnowledgeBase, type RunningService } from './service.js';

const TOKEN = 'internal-token-for-tests-0123456789';
const ctxFor = (org: string, folder_scope: string[] | null = null): CallContext => ({
  org_id: org,
  principal: { type: 'api_key', id: randomUUID() },
  permissions: ['read:kb', 'write:kb'],
  folder_scope,
  request_id: randomUUID(),
});

interface Node {
  kb_node_id: string;
  type: string;
  parent_id?: string;
  name: string;
  tags: { tag_id: string; name: string }[];
}
interface NodeWithChildren {
  node: Node;
  children: Node[];
  total_count: number;
}

let dir: string;
let service: RunningService;
let tree: RpcClient;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kb-tree-int-'));
  const config = loadConfig(knowledgeBaseConfigSpec, { DATA_DIR: dir, INTERNAL_TOKEN: TOKEN, GRPC_PORT: '0' });
  service = await startKnowledgeBase({ config, logger: silentLogger() });
  tree = createRpcClient(serviceConstructor(loadProto('knowledge_base.proto'), 'knowledge_base.v1.KnowledgeBaseTree'), {
    address: service.address,
    internalToken: TOKEN,
    name: 'knowledge-base',
  });
});
afterAll(async () => {
  tree.close();
  await service.stop();
  rmSync(dir, { recursive: true, force: true });
});

const kindOf = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p;
    return 'ok';
  } catch (err) {
    assert.ok(err instanceof AppError, String(err));
    return err.kind;
  }
};

const folder = (ctx: CallContext, name: string, parent_id?: string) =>
  tree.call<Node>('CreateFolder', { name, ...(parent_id && { parent_id }) }, ctx);

describe('KnowledgeBaseTree over gRPC', () => {
  it('creates the root lazily and once, even for concurrent first calls', async () => {
    const ctx = ctxFor(randomUUID());
    const results = await Promise.all(Array.from({ length: 8 }, () => tree.call<NodeWithChildren>('GetTree', { limit: 50 }, ctx)));
    const rootIds = new Set(results.map((r) => r.node.kb_node_id));
    assert.equal(rootIds.size, 1);
    assert.equal(results[0]!.node.parent_id, undefined);
    assert.equal(results[0]!.node.type, 'folder');
  });

  it('confines a folder-scoped caller to its folders', async () => {
    const org = randomUUID();
    const admin = ctxFor(org);
    const a = await folder(admin, 'A');
    const a1 = await folder(admin, 'A1', a.kb_node_id);
    const b = await folder(admin, 'B');
    const root = (await tree.call<NodeWithChildren>('GetTree', {}, admin)).node;
    const scoped = ctxFor(org, [a.kb_node_id]);

    // Inside: the scope folder and everything under it.
    assert.equal((await tree.call<NodeWithChildren>('GetNode', { kb_node_id: a.kb_node_id }, scoped)).children.length, 1);
    assert.equal(await kindOf(tree.call('GetNode', { kb_node_id: a1.kb_node_id }, scoped)), 'ok');
    const path = await tree.call<{ nodes: Node[] }>('GetPath', { kb_node_id: a1.kb_node_id }, scoped);
    assert.deepEqual(
      path.nodes.map((n) => n.name),
      ['A', 'A1'],
      'the path starts at the scope folder; the root is not revealed',
    );
    assert.equal(await kindOf(folder(scoped, 'A2', a.kb_node_id)), 'ok');
    assert.equal(
      (await tree.call<{ folder_id: string }>('CheckFolderAccess', { folder_id: a1.kb_node_id }, scoped)).folder_id,
      a1.kb_node_id,
    );

    // Outside: 403, including the root and the whole-tree listing.
    for (const [method, req] of [
      ['GetTree', {}],
      ['GetNode', { kb_node_id: b.kb_node_id }],
      ['GetNode', { kb_node_id: root.kb_node_id }],
      ['GetPath', { kb_node_id: b.kb_node_id }],
      ['CreateFolder', { name: 'Sneaky' }],
      ['CreateFolder', { name: 'Sneaky', parent_id: b.kb_node_id }],
      ['UpdateNode', { kb_node_id: b.kb_node_id, name: 'Renamed' }],
      ['UpdateNode', { kb_node_id: a1.kb_node_id, parent_id: b.kb_node_id }],
      ['DeleteNode', { kb_node_id: b.kb_node_id }],
      ['CheckFolderAccess', {}],
      ['CheckFolderAccess', { folder_id: b.kb_node_id }],
    ] as const) {
      assert.equal(await kindOf(tree.call(method, req, scoped)), 'forbidden', `${method} ${JSON.stringify(req)}`);
    }
    // A missing node is still 404 for a scoped caller with a non-empty scope.
    assert.equal(await kindOf(tree.call('GetNode', { kb_node_id: randomUUID() }, scoped)), 'not_found');
    // Nothing changed outside the scope.
    assert.equal((await tree.call<NodeWithChildren>('GetNode', { kb_node_id: b.kb_node_id }, admin)).node.name, 'B');
  });

  it('forbids the whole tree to an empty scope, and allows it all to a scope holding the root', async () => {
    const org = randomUUID();
    const admin = ctxFor(org);
    const a = await folder(admin, 'A');
    const none = ctxFor(org, []);
    for (const [method, req] of [
      ['GetTree', {}],
      ['GetNode', { kb_node_id: a.kb_node_id }],
      ['GetNode', { kb_node_id: randomUUID() }],
      ['CreateFolder', { name: 'X' }],
      ['CheckFolderAccess', { folder_id: a.kb_node_id }],
    ] as const) {
      assert.equal(await kindOf(tree.call(method, req, none)), 'forbidden', method);
    }
    const root = (await tree.call<NodeWithChildren>('GetTree', {}, admin)).node;
    const rootScoped = ctxFor(org, [root.kb_node_id]);
    assert.equal((await tree.call<NodeWithChildren>('GetTree', {}, rootScoped)).total_count, 1);
    assert.equal(await kindOf(tree.call('GetNode', { kb_node_id: a.kb_node_id }, rootScoped)), 'ok');
  });

  it('refuses a move into the own subtree (409), deletes a non-empty folder only with cascade', async () => {
    const ctx = ctxFor(randomUUID());
    const a = await folder(ctx, 'A');
    const b = await folder(ctx, 'B', a.kb_node_id);
    const c = await folder(ctx, 'C', b.kb_node_id);
    assert.equal(await kindOf(tree.call('UpdateNode', { kb_node_id: a.kb_node_id, parent_id: c.kb_node_id }, ctx)), 'conflict');
    assert.equal(await kindOf(tree.call('UpdateNode', { kb_node_id: a.kb_node_id, parent_id: a.kb_node_id }, ctx)), 'conflict');
    const moved = await tree.call<Node>('UpdateNode', { kb_node_id: c.kb_node_id, parent_id: a.kb_node_id, name: 'C moved' }, ctx);
    assert.equal(moved.parent_id, a.kb_node_id);
    assert.equal(moved.name, 'C moved');
    assert.equal(await kindOf(tree.call('DeleteNode', { kb_node_id: a.kb_node_id }, ctx)), 'conflict');
    await tree.call('DeleteNode', { kb_node_id: a.kb_node_id, cascade: true }, ctx);
    for (const n of [a, b, c]) assert.equal(await kindOf(tree.call('GetNode', { kb_node_id: n.kb_node_id }, ctx)), 'not_found');
    assert.equal((await tree.call<NodeWithChildren>('GetTree', {}, ctx)).total_count, 0);
  });

  it('keeps organizations apart', async () => {
    const a = ctxFor(randomUUID());
    const b = ctxFor(randomUUID());
    const f = await folder(a, 'Mine');
    for (const [method, req] of [
      ['GetNode', { kb_node_id: f.kb_node_id }],
      ['GetPath', { kb_node_id: f.kb_node_id }],
      ['CreateFolder', { name: 'In yours', parent_id: f.kb_node_id }],
      ['UpdateNode', { kb_node_id: f.kb_node_id, name: 'Stolen' }],
      ['DeleteNode', { kb_node_id: f.kb_node_id }],
      ['CheckFolderAccess', { folder_id: f.kb_node_id }],
    ] as const) {
      assert.equal(await kindOf(tree.call(method, req, b)), 'not_found', method);
    }
    const bFolder = await folder(b, 'Theirs');
    assert.equal(await kindOf(tree.call('UpdateNode', { kb_node_id: f.kb_node_id, parent_id: bFolder.kb_node_id }, a)), 'not_found');
  });
});
