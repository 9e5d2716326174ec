import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import Fastify, { type FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { AppError, errorKinds, errors, type ErrorKind } from '@kb/platform';
import { fromServiceError, toServiceError } from '@kb/rpc';
import { sendError } from './errors.js';
import { buildValidatorFactory } from './validation.js';

/**
 * The one HTTP mapping of the error taxonomy (spec section 7), through fastify
 * as the gateway wires it: status, JSON body, Retry-After, no leaked 5xx text.
 */

let app: FastifyInstance;
beforeAll(async () => {
  app = Fastify({ schemaController: { compilersFactory: { buildValidator: buildValidatorFactory as never } } });
  app.setErrorHandler((err, request, reply) => sendError(request, reply, err as Error));
  app.get<{ Params: { kind: string } }>('/throw/:kind', async (req) => {
    const kind = req.params.kind as ErrorKind;
    throw new AppError(kind, `secret detail of ${kind}`, { code: `test_${kind}`, ...(kind === 'unavailable' && { retryAfterSeconds: 5 }) });
  });
  app.get('/rate-limited', async () => {
    throw errors.rateLimited(42);
  });
  // A 429 raised by a service behind gRPC arrives with its Retry-After intact.
  app.get('/via-grpc/:kind', async (req) => {
    const kind = (req.params as { kind: ErrorKind }).kind;
    const wire = toServiceError(new AppError(kind, `service says ${kind}`, { retryAfterSeconds: 9 })) as Parameters<
      typeof fromServiceError
    >[0];
    throw fromServiceError(wire, 'knowledge-base');
  });
  app.get('/crash', async () => {
    throw new Error('connection string mongodb://admin:hunter2@db');
  });
  app.post(
    '/validated',
    {
      schema: {
        body: Type.Object(
          { name: Type.String({ minLength: 2 }), nested: Type.Optional(Type.Object({ n: Type.Integer() })) },
          { additionalProperties: false },
        ),
      },
    },
    async () => ({ ok: true }),
  );
  await app.ready();
});
afterAll(() => app.close());

describe('HTTP error mapping', () => {
  for (const [kind, { http }] of Object.entries(errorKinds)) {
    it(`${kind} -> ${http} with a JSON error body`, async () => {
      const res = await app.inject({ method: 'GET', url: `/throw/${kind}` });
      assert.equal(res.statusCode, http);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      const body = res.json() as { error: { code: string; message: string } };
      assert.equal(body.error.code, `test_${kind}`);
      if (http >= 500) assert.doesNotMatch(body.error.message, /secret/, '5xx messages are never leaked');
      else assert.equal(body.error.message, `secret detail of ${kind}`);
    });
  }

  it('429 carries Retry-After', async () => {
    const res = await app.inject({ method: 'GET', url: '/rate-limited' });
    assert.equal(res.statusCode, 429);
    assert.equal(res.headers['retry-after'], '42');
    const res503 = await app.inject({ method: 'GET', url: '/throw/unavailable' });
    assert.equal(res503.headers['retry-after'], '5');
  });

  it('keeps the status and Retry-After of an error raised behind gRPC', async () => {
    for (const [kind, { http }] of Object.entries(errorKinds)) {
      const res = await app.inject({ method: 'GET', url: `/via-grpc/${kind}` });
      assert.equal(res.statusCode, http, kind);
      assert.equal(res.headers['retry-after'], '9', kind);
      if (http >= 500) assert.doesNotMatch(res.body, /service says/);
    }
  });

  it('turns an unexpected exception into a 500 that says nothing about it', async () => {
    const res = await app.inject({ method: 'GET', url: '/crash' });
    assert.equal(res.statusCode, 500);
    assert.doesNotMatch(res.body, /hunter2|mongodb/);
    assert.equal((res.json() as { error: { code: string } }).error.code, 'internal');
  });

  it('answers a schema violation with 400 naming the field', async () => {
    const cases: [unknown, string][] = [
      [{}, 'name'],
      [{ name: 'x' }, 'name'],
      [{ name: 42 }, 'name'],
      [{ name: 'ok', nested: { n: 1.5 } }, 'nested/n'],
      [{ name: 'ok', surprise: true }, 'surprise'],
    ];
    for (const [payload, field] of cases) {
      const res = await app.inject({ method: 'POST', url: '/validated', payload: payload as object });
      assert.equal(res.statusCode, 400, JSON.stringify(payload));
      const body = res.json() as { error: { message: string; details: { field: string } } };
      assert.equal(body.error.details.field, field);
      assert.match(body.error.message, new RegExp(field.replace('/', '\\/')));
    }
  });

  it('maps malformed JSON and a wrong content type to 400, an oversized body to 413', async () => {
    const bad = await app.inject({
      method: 'POST',
      url: '/validated',
      headers: { 'content-type': 'application/json' },
      payload: '{"name":',
    });
    assert.equal(bad.statusCode, 400);
    const type = await app.inject({ method: 'POST', url: '/validated', headers: { 'content-type': 'text/csv' }, payload: 'a,b' });
    assert.equal(type.statusCode, 400);
    const big = await app.inject({
      method: 'POST',
      url: '/validated',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }),
    });
    assert.equal(big.statusCode, 413);
    assert.equal((big.json() as { error: { code: string } }).error.code, 'body_too_large');
  });
});
