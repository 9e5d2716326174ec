import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { AppError, errors, silentLogger } from '@kb/platform';
import {
  createRpcClient,
  createRpcServer,
  loadProto,
  serviceConstructor,
  type CallContext,
  type RpcClient,
  type UnaryHandler,
} from './index.js';
import { setInProcessCalls, findLocalMethod } from './in-process.js';
import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The gRPC kit over a real loopback connection and over the in-process transport (a server in the
 * same process): internal token, caller context in metadata, deadlines, error mapping, the same on both.
 */

const TOKEN = 'rpc-kit-internal-token-0123456789';
const Service = serviceConstructor(loadProto('knowledge_base.proto'), 'knowledge_base.v1.CategoryService');
const ctx: CallContext = {
  org_id: '6f1c2a4e-0000-4000-8000-000000000001',
  principal: { type: 'api_key', id: 'key:with:colons' },
  permissions: ['read:kb', 'write:kb'],
  folder_scope: ['folder-a', 'folder-b'],
  request_id: 'req-1',
  trace: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
};

let server: ReturnType<typeof createRpcServer>;
let address: string;
let client: RpcClient;
const seen: CallContext[] = [];

beforeAll(async () => {
  server = createRpcServer({ internalToken: TOKEN, logger: silentLogger() });
  const behaviour: Record<string, UnaryHandler> = {
    GetCategory: async (_req, c) => {
      seen.push(c);
      return { category_id: 'c', name: 'n', created_at: 'x', updated_at: 'x' };
    },
    ListAllCategories: async () => {
      await new Promise((r) => setTimeout(r, 1000));
      return { categories: [] };
    },
    CreateCategory: async () => {
      throw errors.conflict('Category name taken', { code: 'category_name_taken', details: { field: 'name' } });
    },
    DeleteCategory: async () => {
      throw new Error('disk /var/secret is full');
    },
    UpdateCategory: async () => ({ category_id: 'c', name: 'n'.repeat(5 * 1024 * 1024), created_at: 'x', updated_at: 'x' }),
  };
  const handlers = new Proxy(behaviour, {
    get: (target, method: string) => target[method] ?? (async () => assert.fail(`unexpected call ${method}`)),
  });
  server.addService(Service, handlers);
  address = `127.0.0.1:${await server.listen('127.0.0.1', 0)}`;
  client = createRpcClient(Service, { address, internalToken: TOKEN, name: 'knowledge-base', deadlineMs: 5000 });
});
afterAll(async () => {
  client.close();
  await server.shutdown(100);
});

const failure = async (p: Promise<unknown>): Promise<AppError> => {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof AppError, String(err));
    return err;
  }
  return assert.fail('the call succeeded');
};

for (const transport of ['grpc', 'in-process'] as const)
  describe(`gRPC kit (${transport})`, () => {
    beforeAll(() => setInProcessCalls(transport === 'in-process'));
    afterAll(() => setInProcessCalls(true));

    it(`calls ${transport === 'grpc' ? 'over HTTP/2' : 'the server in this process directly'}`, () => {
      const found = findLocalMethod(address, '/knowledge_base.v1.CategoryService/GetCategory');
      assert.equal(found !== undefined, transport === 'in-process');
    });

    it('carries the whole caller context in metadata', async () => {
      await client.call('GetCategory', { category_id: 'c' }, ctx);
      const got = seen.at(-1)!;
      assert.deepEqual({ ...got, trace: undefined }, { ...ctx, trace: undefined });
      assert.equal(got.trace, ctx.trace, 'with telemetry off the caller trace is passed through unchanged');
    });

    it('refuses a call without the internal token, with a wrong one, or without a caller context', async () => {
      const raw = new Service(address, grpc.credentials.createInsecure());
      try {
        const rawCall = (md: grpc.Metadata) =>
          new Promise<grpc.ServiceError>((resolve, reject) =>
            (raw as unknown as Record<string, (r: unknown, m: grpc.Metadata, cb: (e: grpc.ServiceError | null) => void) => void>)
              .GetCategory!({ category_id: 'c' }, md, (err) => (err ? resolve(err) : reject(new Error('accepted')))),
          );
        const before = seen.length;
        assert.equal((await rawCall(new grpc.Metadata())).code, grpc.status.UNAUTHENTICATED);
        const wrong = new grpc.Metadata();
        wrong.set('x-internal-token', 'x'.repeat(TOKEN.length));
        wrong.set('x-org-id', ctx.org_id);
        wrong.set('x-principal', 'user:u');
        assert.equal((await rawCall(wrong)).code, grpc.status.UNAUTHENTICATED);
        const noContext = new grpc.Metadata();
        noContext.set('x-internal-token', TOKEN);
        assert.equal((await rawCall(noContext)).code, grpc.status.UNAUTHENTICATED);
        assert.equal(seen.length, before, 'no handler ran');
      } finally {
        raw.close();
      }
      const rogue = createRpcClient(Service, { address, internalToken: 'not-the-token-not-the-token', name: 'knowledge-base' });
      try {
        // The services disagree on INTERNAL_TOKEN: a deployment fault the end client did not cause, so a 5xx.
        const refused = await failure(rogue.call('GetCategory', { category_id: 'c' }, ctx));
        assert.equal(refused.httpStatus, 503);
        assert.equal(refused.code, 'internal_auth_misconfigured');
        assert.match(refused.message, /knowledge-base refused this service's internal token: set the same INTERNAL_TOKEN on every service/);
      } finally {
        rogue.close();
      }
    });

    it('applies the deadline: a slow call fails as unavailable (503) instead of hanging', async () => {
      const started = Date.now();
      const err = await failure(client.call('ListAllCategories', {}, ctx, { deadlineMs: 100 }));
      assert.equal(err.httpStatus, 503);
      assert.ok(Date.now() - started < 900, 'failed at the deadline, before the handler finished');
      const short = createRpcClient(Service, { address, internalToken: TOKEN, name: 'knowledge-base', deadlineMs: 100 });
      try {
        assert.equal((await failure(short.call('ListAllCategories', {}, ctx))).httpStatus, 503, 'the client default deadline');
      } finally {
        short.close();
      }
    });

    it('maps a thrown AppError to a status and back, and hides the message of an unexpected one', async () => {
      const conflict = await failure(client.call('CreateCategory', { name: 'x' }, ctx));
      assert.equal(conflict.kind, 'conflict');
      assert.equal(conflict.code, 'category_name_taken');
      assert.deepEqual(conflict.details, { field: 'name' });
      const crash = await failure(client.call('DeleteCategory', { category_id: 'c' }, ctx));
      assert.equal(crash.httpStatus, 500);
      assert.doesNotMatch(crash.message, /secret/);
    });

    it('refuses a response over the client message limit (4 MB), as grpc-js does', async () => {
      const err = await failure(client.call('UpdateCategory', { category_id: 'c' }, ctx));
      assert.equal(err.kind, 'rate_limited', 'RESOURCE_EXHAUSTED, mapped as every such status is');
    });

    it('fails a call to a server that is not there as unavailable (503)', async () => {
      const nowhere = createRpcClient(Service, { address: '127.0.0.1:1', internalToken: TOKEN, name: 'knowledge-base', deadlineMs: 2000 });
      try {
        assert.equal((await failure(nowhere.call('GetCategory', { category_id: 'c' }, ctx))).httpStatus, 503);
      } finally {
        nowhere.close();
      }
    });
  });

describe('the in-process transport', () => {
  it('runs the handler outside the caller async context, as a remote server would', async () => {
    const als = new AsyncLocalStorage<string>();
    const local = createRpcServer({ internalToken: TOKEN, logger: silentLogger() });
    let inside: string | undefined = 'not called';
    local.addService(
      Service,
      new Proxy({} as Record<string, UnaryHandler>, {
        get: () => async () => {
          inside = als.getStore();
          return { category_id: 'c', name: 'n', created_at: 'x', updated_at: 'x' };
        },
      }),
    );
    const at = `127.0.0.1:${await local.listen('127.0.0.1', 0)}`;
    const c = createRpcClient(Service, { address: at, internalToken: TOKEN, name: 'knowledge-base' });
    try {
      assert.ok(findLocalMethod(at, '/knowledge_base.v1.CategoryService/GetCategory'));
      await als.run('the gateway request', () => c.call('GetCategory', { category_id: 'c' }, ctx));
      assert.equal(inside, undefined);
    } finally {
      c.close();
      await local.shutdown(100);
    }
    assert.equal(findLocalMethod(at, '/knowledge_base.v1.CategoryService/GetCategory'), undefined, 'a stopped server is gone');
  });

  it('copies messages through the protobuf serializers: unknown fields dropped, the response not shared', async () => {
    const local = createRpcServer({ internalToken: TOKEN, logger: silentLogger() });
    const held = { category_id: 'c', name: 'n', created_at: 'x', updated_at: 'x', extra: 'dropped' };
    let got: unknown;
    local.addService(
      Service,
      new Proxy({} as Record<string, UnaryHandler>, {
        get: () => async (req: unknown) => {
          got = req;
          return held;
        },
      }),
    );
    const at = `127.0.0.1:${await local.listen('127.0.0.1', 0)}`;
    const c = createRpcClient(Service, { address: at, internalToken: TOKEN, name: 'knowledge-base' });
    try {
      const sent = { category_id: 'c', not_in_proto: 1 };
      const res = await c.call<Record<string, unknown>>('GetCategory', sent, ctx);
      assert.notEqual(got, sent);
      assert.equal((got as Record<string, unknown>).not_in_proto, undefined);
      assert.notEqual(res, held);
      assert.equal(res.extra, undefined);
      assert.equal(res.name, 'n');
    } finally {
      c.close();
      await local.shutdown(100);
    }
  });
});
