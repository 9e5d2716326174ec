import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Socket } from 'node:net';

/** Bytes of an unread body read and thrown away so its client can read the answer; beyond this the connection is closed. */
export const DRAIN_MAX_BYTES = 16 * 1024 * 1024;
/** How long the rest of an unread body may take to arrive before its connection is dropped. */
export const DRAIN_MS = 60_000;

declare module 'fastify' {
  interface FastifyRequest {
    /** Refused while its body streamed: answer with Connection: close (its rest is not worth reading). */
    closeAfterReply?: boolean;
  }
}

/** Whether the request announces a body (a length above 0, or chunked). */
const hasBody = (request: FastifyRequest) =>
  request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;

/**
 * An answer sent before the request's body was read to its end: a 401 from the
 * auth hook, a 413, a 503 at upload admission or from ingest while a file
 * streamed, any error. Left alone, the body stays in the socket (a parser that
 * gave up may still hold it piped and paused) and the next request on the
 * keep-alive connection is never answered; closing at once instead makes the
 * client, still sending, see a reset rather than the answer.
 *
 * So the body is unhooked from whatever read it, and its rest is read and
 * thrown away: the client finishes sending, reads the answer and sends its next
 * request on the same connection. A body declared over DRAIN_MAX_BYTES, or one
 * a handler marked `closeAfterReply`, is answered with Connection: close (and
 * still discarded while the connection lasts). A body that goes on past
 * DRAIN_MAX_BYTES or DRAIN_MS loses its connection; so does one still being
 * drained when the server stops, once its answer is written, so a graceful stop
 * never waits for a client that stopped sending.
 */
export function settleUnreadBodies(app: FastifyInstance): void {
  /** Connections whose answered request's body is still being read and discarded. */
  const draining = new Set<Socket>();
  let closing = false;

  app.addHook('onSend', async (request, reply, payload) => {
    const raw = request.raw;
    if (raw.readableEnded || !hasBody(request)) return payload;
    const socket = raw.socket as Socket | null;
    const declared = Number(request.headers['content-length']);
    if (request.closeAfterReply || closing || (Number.isFinite(declared) && declared > DRAIN_MAX_BYTES)) {
      void reply.header('connection', 'close');
    } else {
      void reply.removeHeader('connection');
    }
    // A parser (multipart, JSON) that gave up may still hold the body piped and paused.
    raw.unpipe();
    let seen = 0;
    const drop = () => socket?.destroy();
    const timer = setTimeout(drop, DRAIN_MS);
    timer.unref();
    const stop = () => {
      clearTimeout(timer);
      raw.removeListener('data', count);
      if (socket) draining.delete(socket);
    };
    // Counts what no parser read (an undeclared, chunked body is bounded the same way).
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
    if (socket && !raw.complete) draining.add(socket);
    return payload;
  });

  app.addHook('preClose', async () => {
    closing = true;
    // Their requests are answered: end them once the answer is out, not when their client finishes sending.
    for (const socket of draining) {
      if (socket.writableNeedDrain) socket.once('drain', () => socket.destroy());
      else socket.destroy();
    }
    draining.clear();
  });
}
