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
const ctxFor = (org: string): CallContext => ({
  org_id: org,
  principal: { type: 'api_key', id: randomUUID() },
  permissions: ['read:kb', 'write:kb'],
  folder_scope: null,
  request_id: randomUUID(),
});

let dir: string;
let service: RunningService;
let tags: RpcClient;
let tree: RpcClient;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kb-tags-int-'));
  const config = loadConfig(knowledgeBaseConfigSpec, { DATA_DIR: dir, INTERNAL_TOKEN: TOKEN, GRPC_PORT: '0' });
  service = await startKnowledgeBase({ config, logger: silentLogger() });
  const client = (name: string) =>
    createRpcClient(serviceConstructor(loadProto('knowledge_base.proto'), `knowledge_base.v1.${name}`), {
      address: service.address,
      internalToken: TOKEN,
      name: 'knowledge-base',
    });
  tags = client('Tags');
  tree = client('KnowledgeBaseTree');
});
afterAll(async () => {
  tags.close();
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

describe('Tags over gRPC', () => {
  it('resolves tags by id or by name for other features, creating unknown names once', async () => {
    const ctx = ctxFor(randomUUID());
    const known = await tags.call<{ tag_id: string }>('CreateTag', { name: 'Known' }, ctx);
    const first = await tags.call<{ tags: { tag_id: string; name: string }[] }>(
      'ResolveTags',
      { tags: [known.tag_id, 'KNOWN', 'Fresh'] },
      ctx,
    );
    assert.deepEqual(
      first.tags.map((t) => t.name),
      ['Known', 'Fresh'],
    );
    const again = await tags.call<{ tags: { tag_id: string }[] }>('ResolveTags', { tags: ['fresh'] }, ctx);
    assert.equal(again.tags[0]!.tag_id, first.tags[1]!.tag_id);
    assert.equal((await tags.call<{ total_count: number }>('ListTags', {}, ctx)).total_count, 2);
    assert.equal(await kindOf(tags.call('ResolveTags', { tags: [randomUUID()] }, ctx)), 'not_found');
  });

  it('keeps organizations apart: another organization sees none of the tags and cannot use their ids', async () => {
    const a = ctxFor(randomUUID());
    const b = ctxFor(randomUUID());
    const tag = await tags.call<{ tag_id: string }>('CreateTag', { name: 'Private' }, a);
    const rule = await tags.call<{ rule_id: string }>('CreateTagRule', { tag: 'Private', source_kind: 'raw' }, a);
    assert.equal((await tags.call<{ total_count: number }>('ListTags', {}, b)).total_count, 0);
    assert.equal((await tags.call<{ total_count: number }>('ListTagRules', {}, b)).total_count, 0);
    assert.equal(await kindOf(tags.call('UpdateTag', { tag_id: tag.tag_id, name: 'Stolen' }, b)), 'not_found');
    assert.equal(await kindOf(tags.call('DeleteTag', { tag_id: tag.tag_id }, b)), 'not_found');
    assert.equal(await kindOf(tags.call('DeleteTagRule', { rule_id: rule.rule_id }, b)), 'not_found');
    assert.equal(await kindOf(tags.call('ResolveTags', { tags: [tag.tag_id] }, b)), 'not_found');
    assert.equal(await kindOf(tree.call('CreateFolder', { name: 'F', tags: [tag.tag_id] }, b)), 'not_found');
    // The same name is free in another organization.
    assert.equal(await kindOf(tags.call('CreateTag', { name: 'private' }, b)), 'ok');
  });

  it('lets exactly one of many concurrent creates of one name win', async () => {
    const ctx = ctxFor(randomUUID());
    const results = await Promise.all(Array.from({ length: 10 }, () => kindOf(tags.call('CreateTag', { name: 'Race' }, ctx))));
    assert.equal(results.filter((r) => r === 'ok').length, 1);
    assert.equal(results.filter((r) => r === 'conflict').length, 9);
  });
});
