import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Bytes of a refused body read and thrown away so its client can read the answer; beyond this the connection is closed. */
export const DRAIN_MAX_BYTES = 16 * 1024 * 1024;
/** How long the rest of a refused body may take to arrive before its connection is dropped. */
export const DRAIN_MS = 60_000;

/**
 * A body refused as too large (413) before it was read to its end. Fastify
 * answers such a body with `Connection: close`, and the socket is destroyed as
 * soon as the answer is written, while the client is still sending: it sees a
 * broken pipe or a reset instead of the 413. So the rest of a body up to
 * DRAIN_MAX_BYTES is read and discarded, the connection kept for the client's
 * next request; past that bound (declared or counted), or after DRAIN_MS, the
 * connection is closed.
 *
 * Multipart uploads drain their own refused bodies (intake-support.ts).
 */
export function drainOversizedBodies(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode !== 413 || request.raw.readableEnded) return payload;
    if (/^multipart\//i.test(request.headers['content-type'] ?? '')) return payload;
    const declared = Number(request.headers['content-length']);
    if (Number.isFinite(declared) && declared > DRAIN_MAX_BYTES) return payload;
    keepReading(request, reply);
    return payload;
  });
}

function keepReading(request: FastifyRequest, reply: FastifyReply): void {
  const raw = request.raw;
  const socket = raw.socket;
  void reply.removeHeader('connection');
  let seen = 0;
  const drop = () => socket?.destroy();
  const timer = setTimeout(drop, DRAIN_MS);
  timer.unref();
  const stop = () => {
    clearTimeout(timer);
    raw.removeListener('data', count);
  };
  // Counts what the parser has not read yet (fastify stops at the limit): an
  // undeclared (chunked) body is bounded the same way.
  function count(chunk: Buffer) {
    seen += chunk.length;
    if (seen > DRAIN_MAX_BYTES) {
      stop();
      drop();
    }
  }
  raw.on('data', count);
  raw.once('end', stop);
  raw.once('close', stop);
  raw.resume();
}
