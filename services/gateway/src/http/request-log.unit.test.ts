import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { levelFor, registerRequestLog, type RequestLogMode } from './request-log.js';

async function linesFor(mode: RequestLogMode, level: string, send: Array<{ method: 'GET' | 'POST'; url: string }>) {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const app = Fastify({
    loggerInstance: pino({ level }, sink) as unknown as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
  });
  registerRequestLog(app, mode);
  app.get('/ok', async () => ({ ok: true }));
  app.post('/write', async () => ({ ok: true }));
  app.post('/search', { config: { readOnly: true } }, async () => ({ ok: true }));
  app.get('/missing', async (_req, reply) => reply.status(404).send({}));
  app.get('/boom', async () => {
    throw new Error('boom');
  });
  for (const r of send) await app.inject(r);
  await app.close();
  return lines.filter((l) => l.msg === 'request');
}

describe('request log', () => {
  it('picks the level from the mode, the method, the status and readOnly', () => {
    assert.equal(levelFor('changes', 'GET', 200, false), 'debug');
    assert.equal(levelFor('changes', 'POST', 200, true), 'debug');
    assert.equal(levelFor('changes', 'POST', 201, false), 'info');
    assert.equal(levelFor('changes', 'GET', 404, false), 'info');
    assert.equal(levelFor('changes', 'GET', 503, false), 'error');
    assert.equal(levelFor('all', 'GET', 200, false), 'info');
    assert.equal(levelFor('all', 'POST', 500, true), 'error');
  });

  it('writes one line per request: at info only writes, 4xx and 5xx by default', async () => {
    const lines = await linesFor('changes', 'info', [
      { method: 'GET', url: '/ok' },
      { method: 'POST', url: '/search' },
      { method: 'POST', url: '/write' },
      { method: 'GET', url: '/missing' },
      { method: 'GET', url: '/boom' },
    ]);
    assert.deepEqual(
      lines.map((l) => [l.url, l.status]),
      [
        ['/write', 200],
        ['/missing', 404],
        ['/boom', 500],
      ],
    );
    assert.equal(lines[2]!.level, 50, 'a 5xx logs at error');
  });

  it('logs every request once in `all` mode, and reads at debug when the level allows', async () => {
    const all = await linesFor('all', 'info', [
      { method: 'GET', url: '/ok' },
      { method: 'POST', url: '/search' },
    ]);
    assert.equal(all.length, 2);
    const debug = await linesFor('changes', 'debug', [{ method: 'GET', url: '/ok' }]);
    assert.equal(debug.length, 1);
    assert.equal(debug[0]!.level, 20);
    assert.equal(typeof debug[0]!.ms, 'number');
  });
});
