import { afterEach, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { errors } from '@kb/platform';
import type { CallContext, RpcClient } from '@kb/rpc';
import { sendError } from './errors.js';
import { registerMultipart } from './intake-support.js';
import { DRAIN_MAX_BYTES, settleUnreadBodies } from './early-answer.js';

/**
 * An answer sent before the request's body was read to its end (an upload
 * refused while ingest is down, a 401, a 413): the connection either closes or
 * carries the next request, and a graceful stop never waits on it.
 */
const BOUNDARY = 'early-answer-boundary';
const caller = { org_id: '11111111-1111-4111-8111-111111111111', actor: 'test', folder_scope: null } as unknown as CallContext;

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function start(ingest: RpcClient): Promise<number> {
  app = Fastify();
  app.setErrorHandler((err, request, reply) => sendError(request, reply, err as Error));
  settleUnreadBodies(app);
  app.addHook('onRequest', async (request) => {
    if (request.headers['x-api-key'] !== 'good') throw errors.unauthenticated();
    request.caller = caller;
  });
  app.get('/live', async () => ({ status: 'live' }));
  await app.register(async (scope) => {
    await registerMultipart(scope, { maxUploadBytes: 50 * 1024 * 1024, fileFields: ['files'], textFields: [], ingest });
    scope.post('/upload', async () => ({ ok: true }));
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return (app.server.address() as { port: number }).port;
}

/** One keep-alive connection, read as it arrives. */
function rawConnection(port: number) {
  const socket: Socket = connect(port, '127.0.0.1');
  let received = '';
  let closed = false;
  socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
  socket.on('error', () => {});
  socket.on('close', () => (closed = true));
  const waitFor = async (what: string, done: () => boolean, ms = 10_000) => {
    const deadline = Date.now() + ms;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`${what} within ${ms} ms; received: ${received.slice(0, 400)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  return {
    socket,
    get received() {
      return received;
    },
    get closed() {
      return closed;
    },
    waitFor,
    /** Responses received so far (status lines). */
    statuses: () => [...received.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1])),
  };
}

function upload(bytes: number, key = 'good'): Buffer {
  const head = Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="files"; filename="big.txt"\r\nContent-Type: text/plain\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  const body = Buffer.concat([head, Buffer.alloc(bytes, 'a'), tail]);
  return Buffer.concat([
    Buffer.from(
      `POST /upload HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\nx-api-key: ${key}\r\nContent-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${body.length}\r\n\r\n`,
    ),
    body,
  ]);
}

const LIVE = Buffer.from('GET /live HTTP/1.1\r\nHost: x\r\nx-api-key: good\r\nConnection: keep-alive\r\n\r\n');

describe('an answer before the body is read', () => {
  const down = { call: async () => Promise.reject(errors.unavailable('ingest is unavailable')) } as unknown as RpcClient;

  for (const [name, key, status] of [
    ['503: a 1.4 MB upload while ingest is down', 'good', 503],
    ['401: a 1.4 MB upload without a valid key', 'bad', 401],
  ] as const) {
    it(`${name}: the next request on the same connection is answered`, { timeout: 30_000 }, async () => {
      const port = await start(down);
      const conn = rawConnection(port);
      conn.socket.write(upload(1_400_000, key));
      await conn.waitFor('the early answer', () => conn.statuses().length >= 1);
      assert.equal(conn.statuses()[0], status);
      assert.doesNotMatch(conn.received, /\r\nconnection: close\r\n/i);
      // The client sends its next request as soon as it read the answer.
      conn.socket.write(LIVE);
      await conn.waitFor('the next answer', () => conn.statuses().length >= 2);
      assert.equal(conn.statuses()[1], 200);
      assert.equal(conn.closed, false);
      conn.socket.destroy();
    });
  }

  it('a body too large to drain is answered with Connection: close, and the connection ends', { timeout: 30_000 }, async () => {
    const port = await start(down);
    const conn = rawConnection(port);
    const whole = upload(DRAIN_MAX_BYTES + 1_000_000);
    // Headers and the first 2 MB: ingest's refusal of the first piece answers it.
    conn.socket.write(whole.subarray(0, 2_000_000));
    await conn.waitFor('the early answer', () => conn.statuses().length >= 1);
    assert.equal(conn.statuses()[0], 503);
    assert.match(conn.received, /\r\nconnection: close\r\n/i);
    await conn.waitFor('the end of the connection', () => conn.closed);
  });

  it('a graceful stop does not wait for a client that stopped sending its body', { timeout: 30_000 }, async () => {
    const port = await start(down);
    const conn = rawConnection(port);
    const whole = upload(1_400_000);
    // Headers and half the body; the rest never comes.
    conn.socket.write(whole.subarray(0, 700_000));
    await conn.waitFor('the early answer', () => conn.statuses().length >= 1);
    const started = Date.now();
    await app!.close();
    app = undefined;
    assert.ok(Date.now() - started < 5_000, `stopped in ${Date.now() - started} ms`);
    conn.socket.destroy();
  });
});
