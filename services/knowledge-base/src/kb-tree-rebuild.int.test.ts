import { it } from 'vitest';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { loadConfig, silentLogger, systemClock } from '@kb/platform';
import { openStore } from '@kb/runtime';
import { rebuildReadModels, snapshotReadModels } from '@kb/eventsourcing';
import { createRpcClient, loadProto, serviceConstructor, type CallContext } from '@kb/rpc';
import { knowledgeBaseConfigSpec } from './config.js';
import { SERVICE_NAME, startKnowledgeBase } from './service.js';
import { kbTreeProjection } from './projections/kb-tree.js';
import { tagsProjection } from './projections/tags.js';

const TOKEN = 'internal-token-for-tests-0123456789';

it('rebuilds the tree and tag read models by replay to exactly what they were', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kb-tree-rebuild-'));
  try {
    const config = loadConfig(knowledgeBaseConfigSpec, { DATA_DIR: dir, INTERNAL_TOKEN: TOKEN, GRPC_PORT: '0' });
    const service = await startKnowledgeBase({ config, logger: silentLogger() });
    const client = (name: string) =>
      createRpcClient(serviceConstructor(loadProto('knowledge_base.proto'), `knowledge_base.v1.${name}`), {
        address: service.address,
        internalToken: TOKEN,
        name: 'knowledge-base',
      });
    const tree = client('KnowledgeBaseTree');
    const tags = client('Tags');
    const ctx: CallContext = {
      org_id: randomUUID(),
      principal: { type: 'api_key', id: randomUUID() },
      permissions: [],
      folder_scope: null,
      request_id: randomUUID(),
    };
    const a = await tree.call<{ kb_node_id: string }>('CreateFolder', { name: 'A', tags: ['one', 'two'] }, ctx);
    const b = await tree.call<{ kb_node_id: string }>('CreateFolder', { name: 'B', parent_id: a.kb_node_id }, ctx);
    const c = await tree.call<{ kb_node_id: string }>('CreateFolder', { name: 'C' }, ctx);
    await tree.call('UpdateNode', { kb_node_id: b.kb_node_id, parent_id: c.kb_node_id, name: 'B2', set_tags: true, tags: ['two'] }, ctx);
    await tree.call('DeleteNode', { kb_node_id: a.kb_node_id }, ctx);
    const tag = await tags.call<{ tag_id: string }>('CreateTag', { name: 'Three', color: '#123456' }, ctx);
    await tags.call('UpdateTag', { tag_id: tag.tag_id, name: 'Three!', clear_color: true }, ctx);
    const rule = await tags.call<{ rule_id: string }>('CreateTagRule', { tag: 'Three!', format: 'pdf' }, ctx);
    await tags.call('CreateTagRule', { tag: 'one', folder_id: c.kb_node_id }, ctx);
    await tags.call('DeleteTagRule', { rule_id: rule.rule_id }, ctx);
    tree.close();
    tags.close();
    await service.stop();

    const store = await openStore(config, SERVICE_NAME, systemClock, silentLogger());
    try {
      const projections = [kbTreeProjection, tagsProjection];
      const before = await snapshotReadModels(store, projections);
      assert.equal(before.kb_nodes!.length, 3, 'root, B2 and C');
      await rebuildReadModels(store, projections);
      assert.deepEqual(await snapshotReadModels(store, projections), before);
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
