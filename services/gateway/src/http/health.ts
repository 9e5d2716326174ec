import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { checkHealthWithReason } from '@kb/rpc';
import { checkDependencies, type DependencyCheck } from '@kb/runtime';

/** Where the probes live (outside the API; no traces). */
export const HEALTH_PREFIX = '/health/';

export interface HealthDeps {
  /** Named checks: the gateway's store and bus, and each service it calls. */
  checks: Record<string, DependencyCheck>;
  /** Longest wait for one check (they run at once, each with its own deadline). */
  timeoutMs?: number;
  /** Who presents it (header x-internal-token) gets each check's reason, not only its name. */
  internalToken?: string;
}

/**
 * The standard grpc.health.v1 answer of the service at `address`, as a check: fails unless
 * SERVING (with the token, saying which of the service's checks fail and why), and when
 * the service refuses this gateway's internal token. The service decides within most of
 * the deadline, so a NOT_SERVING arrives as such.
 */
export const grpcServing =
  (address: string, internalToken?: string, deadlineMs = 2000): DependencyCheck =>
  async () => {
    const { status, reason } = await checkHealthWithReason(address, deadlineMs, internalToken);
    if (status !== 'SERVING') throw new Error(reason ? `${status} (${reason})` : status);
  };

/** Compared as SHA-256 digests: equal lengths whatever bytes were presented, and no timing on the secret's length. */
const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
const sameSecret = (a: string, b: string) => timingSafeEqual(digest(a), digest(b));

/**
 * Operational probes, outside the API (no credential, not in the OpenAPI):
 * GET /health/live answers 200 while the process serves HTTP; GET /health/ready
 * answers 200 only when every dependency answers (the gateway's store, bus and
 * consumers, and the gRPC health of every service it calls, which includes
 * whether it accepts the internal token), else 503 naming what failed.
 * Kubernetes and compose use ready for traffic and live for restarts.
 *
 * Anyone gets the names of the checks and ok or failing; why a check failed
 * (addresses, gRPC errors) only a caller presenting the internal token.
 */
export function registerHealth(app: FastifyInstance, deps: HealthDeps): void {
  const open = { config: { auth: { credential: 'none' as const } }, schema: { hide: true } };
  app.get(`${HEALTH_PREFIX}live`, open, async () => ({ status: 'live' }));
  /** The last answer, so a change is logged once (not every probe while a dependency is away). */
  let wasReady: boolean | undefined;
  app.get(`${HEALTH_PREFIX}ready`, open, async (request, reply) => {
    const { ready, checks } = await checkDependencies(deps.checks, deps.timeoutMs ?? 2000);
    const failing = Object.keys(checks).filter((name) => checks[name] !== 'ok');
    if (ready !== wasReady) {
      if (!ready) request.log.warn({ failing: Object.fromEntries(failing.map((name) => [name, checks[name]])) }, 'gateway not ready');
      else if (wasReady === false) request.log.info('gateway ready again');
      wasReady = ready;
    }
    const presented = request.headers['x-internal-token'];
    const detailed = deps.internalToken !== undefined && typeof presented === 'string' && sameSecret(presented, deps.internalToken);
    const shown = detailed ? checks : Object.fromEntries(Object.entries(checks).map(([name, r]) => [name, r === 'ok' ? 'ok' : 'failing']));
    return reply
      .status(ready ? 200 : 503)
      .header('cache-control', 'no-store')
      .send({ status: ready ? 'ready' : 'not_ready', checks: shown, ...(!ready && { failing }) });
  });
}
