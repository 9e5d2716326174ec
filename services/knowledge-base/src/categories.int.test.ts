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
let client: RpcClient;
const orgA = ctxFor(randomUUID());
const orgB = ctxFor(randomUUID());

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kb-int-'));
  const config = loadConfig(knowledgeBaseConfigSpec, { DATA_DIR: dir, INTERNAL_TOKEN: TOKEN, GRPC_PORT: '0' });
  service = await startKnowledgeBase({ config, logger: silentLogger() });
  client = createRpcClient(serviceConstructor(loadProto('knowledge_base.proto'), 'knowledge_base.v1.CategoryService'), {
    address: service.address,
    internalToken: TOKEN,
    name: 'knowledge-base',
  });
});
afterAll(async () => {
  client.close();
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

describe('knowledge-base CategoryService over gRPC', () => {
  it('keeps organizations apart: another organization sees nothing and gets not_found for every id', async () => {
    const cat = await client.call<{ category_id: string }>('CreateCategory', { name: 'Org A only' }, orgA);
    const topic = await client.call<{ topic_id: string }>('CreateTopic', { category_id: cat.category_id, name: 'A topic' }, orgA);
    assert.equal((await client.call<{ categories: unknown[] }>('ListAllCategories', {}, orgB)).categories.length, 0);
    assert.equal((await client.call<{ total_count: number }>('ListCategories', { limit: 10, offset: 0 }, orgB)).total_count, 0);
    const id = { category_id: cat.category_id };
    assert.equal(await kindOf(client.call('GetCategory', id, orgB)), 'not_found');
    assert.equal(await kindOf(client.call('ReplaceCategory', { ...id, name: 'Stolen' }, orgB)), 'not_found');
    assert.equal(await kindOf(client.call('UpdateCategory', { ...id, name: 'Stolen' }, orgB)), 'not_found');
    assert.equal(await kindOf(client.call('DeleteCategory', id, orgB)), 'not_found');
    assert.equal(await kindOf(client.call('CreateTopic', { ...id, name: 'Sneaky' }, orgB)), 'not_found');
    assert.equal(await kindOf(client.call('BatchCreateTopics', { ...id, topics: [{ name: 'Sneaky' }] }, orgB)), 'not_found');
    assert.equal(await kindOf(client.call('UpdateTopic', { ...id, topic_id: topic.topic_id, name: 'Sneaky' }, orgB)), 'not_found');
    assert.equal(await kindOf(client.call('DeleteTopic', { ...id, topic_id: topic.topic_id }, orgB)), 'not_found');
    // The same name is free in another organization.
    assert.equal(await kindOf(client.call('CreateCategory', { name: 'Org A only' }, orgB)), 'ok');
    assert.equal((await client.call<{ name: string }>('GetCategory', id, orgA)).name, 'Org A only');
  });

  it('rejects calls without the internal token', async () => {
    const rogue = createRpcClient(serviceConstructor(loadProto('knowledge_base.proto'), 'knowledge_base.v1.CategoryService'), {
      address: service.address,
      internalToken: 'wrong-token-wrong-token-wrong',
      name: 'knowledge-base',
    });
    try {
      // A deployment fault (the services' INTERNAL_TOKEN differs), not the end client's: unavailable (503).
      assert.equal(await kindOf(rogue.call('ListAllCategories', {}, orgA)), 'unavailable');
    } finally {
      rogue.close();
    }
  });

  it('lets exactly one of many concurrent creates of one name win', async () => {
    const org = ctxFor(randomUUID());
    const results = await Promise.all(Array.from({ length: 20 }, () => kindOf(client.call('CreateCategory', { name: 'Race' }, org))));
    assert.equal(results.filter((r) => r === 'ok').length, 1);
    assert.equal(results.filter((r) => r === 'conflict').length, 19);
    const topicsOrg = await client.call<{ category_id: string }>('CreateCategory', { name: 'Topic race' }, org);
    const topicResults = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        kindOf(client.call('CreateTopic', { category_id: topicsOrg.category_id, name: `T${i % 5}x` }, org)),
      ),
    );
    assert.equal(topicResults.filter((r) => r === 'ok').length, 5);
    const all = await client.call<{ categories: { topics: unknown[] }[] }>('ListAllCategories', {}, org);
    assert.equal(all.categories.find((c) => c.topics.length > 0)!.topics.length, 5);
  });
});
