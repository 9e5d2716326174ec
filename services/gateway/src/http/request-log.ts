import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';

/**
 * One log line per request, written when the response is sent (fastify's own
 * request logging writes two: "incoming request" and "request completed").
 *
 * - `changes` (default): requests that change something, and every 4xx, at
 *   info; successful reads (GET, HEAD, and routes declaring `config.readOnly`,
 *   such as search) at debug, so hot read paths cost no log I/O at the default
 *   level; every 5xx at error.
 * - `all`: every request at info (5xx still at error).
 */
export type RequestLogMode = 'changes' | 'all';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A POST that changes nothing the caller owns (search, verify): logged as a read. */
    readOnly?: boolean;
  }
}

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function levelFor(mode: RequestLogMode, method: string, status: number, readOnly: boolean): 'error' | 'info' | 'debug' {
  if (status >= 500) return 'error';
  if (mode === 'all' || status >= 400) return 'info';
  return READ_METHODS.has(method) || readOnly ? 'debug' : 'info';
}

export function registerRequestLog(app: FastifyInstance, mode: RequestLogMode): void {
  app.addHook('onResponse', async (request: FastifyRequest, reply: FastifyReply) => {
    // Probes: every few seconds, answered 503 for as long as a dependency is away; the health
    // route itself says when readiness changes.
    const probe = request.url.startsWith('/health/');
    const level = probe ? 'debug' : levelFor(mode, request.method, reply.statusCode, request.routeOptions.config?.readOnly === true);
    // Checked first so a line below the logger's level costs no object building.
    const log = request.log as unknown as Logger;
    if (!log.isLevelEnabled(level)) return;
    log[level](
      {
        method: request.method,
        url: request.url,
        route: request.routeOptions.url,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
        org_id: request.caller?.org_id,
      },
      'request',
    );
  });
}
