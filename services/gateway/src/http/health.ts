import type { FastifyInstance } from 'fastify';
import { checkHealth } from '@kb/rpc';
import { checkDependencies, type DependencyCheck } from '@kb/runtime';

export interface HealthDeps {
  /** Named checks: the gateway's store and bus, and each service it calls. */
  checks: Record<string, DependencyCheck>;
  /** Longest wait for one check. */
  timeoutMs?: number;
}

/** The standard grpc.health.v1 answer of the service at `address`, as a check (fails unless SERVING). */
export const grpcServing =
  (address: string, deadlineMs = 2000): DependencyCheck =>
  async () => {
    const status = await checkHealth(address, deadlineMs);
    if (status !== 'SERVING') throw new Error(status);
  };

/**
 * Operational probes, outside the API (no credential, not in the OpenAPI):
 * GET /health/live answers 200 while the process serves HTTP; GET /health/ready
 * answers 200 only when every dependency answers (the gateway's store and bus,
 * and the gRPC health of every service it calls), else 503 naming what failed.
 * Kubernetes and compose use ready for traffic and live for restarts.
 */
export function registerHealth(app: FastifyInstance, deps: HealthDeps): void {
  const open = { config: { auth: { credential: 'none' as const } }, schema: { hide: true } };
  app.get('/health/live', open, async () => ({ status: 'live' }));
  app.get('/health/ready', open, async (_request, reply) => {
    const { ready, checks } = await checkDependencies(deps.checks, deps.timeoutMs ?? 2000);
    const failing = Object.keys(checks).filter((name) => checks[name] !== 'ok');
    return reply
      .status(ready ? 200 : 503)
      .header('cache-control', 'no-store')
      .send({ status: ready ? 'ready' : 'not_ready', checks, ...(!ready && { failing }) });
  });
}
