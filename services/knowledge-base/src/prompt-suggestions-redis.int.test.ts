import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { AppError, ConfigError, loadConfig, silentLogger } from '@kb/platform';
import { createRpcClient, loadProto, serviceConstructor, type CallContext, type RpcClient } from '@kb/rpc';
import { startTestRedis, type TestRedis } from '@kb/coordination/testing';
import { knowledgeBaseConfigSpec } from './config.js';
import { startKnowledgeBase, type RunningService } from './service.js';

/**
 * The suggestion limit with COORDINATION=redis: two replicas of the knowledge
 * base (each its own process state and Redis connection) share one count per
 * organization, so a client cannot double its quota by landing on another
 * replica. Runs against a real redis-server; skipped (and says so) without one.
 */
const TOKEN = 'internal-token-for-tests-0123456789';
const PER_MINUTE = 2;

let redis: TestRedis | { skip: string };
const replicas: { dir: string; service: RunningService; prompts: RpcClient }[] = [];

const ctxFor = (org: string): CallContext => ({
  org_id: org,
  principal: { type: 'api_key', id: randomUUID() },
  permissions: ['read:kb', 'write:kb'],
  folder_scope: null,
  request_id: randomUUID(),
});

beforeAll(async () => {
  redis = await startTestRedis();
  if ('skip' in redis) return;
  for (let i = 0; i < 2; i++) {
    const dir = mkdtempSync(join(tmpdir(), 'kb-suggest-redis-'));
    const config = loadConfig(knowledgeBaseConfigSpec, {
      DATA_DIR: dir,
      INTERNAL_TOKEN: TOKEN,
      GRPC_PORT: '0',
      COORDINATION: 'redis',
      REDIS_URL: redis.url,
      PROMPT_SUGGESTIONS_PER_MINUTE: String(PER_MINUTE),
    });
    const service = await startKnowledgeBase({ config, logger: silentLogger() });
    const prompts = createRpcClient(serviceConstructor(loadProto('knowledge_base.proto'), 'knowledge_base.v1.Prompts'), {
      address: service.address,
      internalToken: TOKEN,
      name: 'knowledge-base',
    });
    replicas.push({ dir, service, prompts });
  }
});
afterAll(async () => {
  for (const r of replicas) {
    r.prompts.close();
    await r.service.stop();
    rmSync(r.dir, { recursive: true, force: true });
  }
  if (redis && !('skip' in redis)) await redis.stop();
});

const suggest = async (replica: number, ctx: CallContext): Promise<'ok' | AppError> => {
  try {
    await replicas[replica]!.prompts.call('SuggestPrompts', { count: 5 }, ctx);
    return 'ok';
  } catch (err) {
    assert.ok(err instanceof AppError, String(err));
    return err;
  }
};

describe('prompt suggestion limit with COORDINATION=redis', () => {
  it('is shared by replicas: per organization, with a retry-after', async (t) => {
    if ('skip' in redis) return t.skip(redis.skip);
    const ctx = ctxFor(randomUUID());
    // The quota spent across both replicas...
    assert.equal(await suggest(0, ctx), 'ok');
    assert.equal(await suggest(1, ctx), 'ok');
    // ...is spent for both.
    for (const replica of [0, 1]) {
      const denied = await suggest(replica, ctx);
      assert.ok(denied instanceof AppError, `replica ${replica} should deny`);
      assert.equal(denied.kind, 'rate_limited');
      assert.ok(denied.retryAfterSeconds! >= 1 && denied.retryAfterSeconds! <= 60, String(denied.retryAfterSeconds));
    }
    // Another organization has its own count.
    assert.equal(await suggest(1, ctxFor(randomUUID())), 'ok');
  });

  it('refuses to start with COORDINATION=redis and no REDIS_URL (not at the first suggestion)', () => {
    assert.throws(
      () => loadConfig(knowledgeBaseConfigSpec, { DATA_DIR: tmpdir(), INTERNAL_TOKEN: TOKEN, COORDINATION: 'redis' }),
      (err) => err instanceof ConfigError && /REDIS_URL is required when COORDINATION=redis/.test(err.message),
    );
  });
});
