import * as grpc from '@grpc/grpc-js';
import { internalAuthMisconfigured } from '@kb/platform';
import { loadProto, serviceConstructor } from './proto.js';
import { hasInternalToken } from './context.js';
import { fromServiceError, toServiceError } from './status.js';

export type ServingStatus = 'UNKNOWN' | 'SERVING' | 'NOT_SERVING' | 'SERVICE_UNKNOWN';

const healthService = () => serviceConstructor(loadProto('grpc/health/v1/health.proto'), 'grpc.health.v1.Health');

/** What a readiness answer may take: most of the caller's deadline, so NOT_SERVING arrives before it. */
export const DEFAULT_HEALTH_BUDGET_MS = 2000;

/** Time for the checks of a health call: three quarters of what is left of its deadline, at most `max`. */
export function healthBudgetMs(deadline: grpc.Deadline | undefined, now = Date.now(), max = DEFAULT_HEALTH_BUDGET_MS): number {
  const at = deadline instanceof Date ? deadline.getTime() : typeof deadline === 'number' ? deadline : Infinity;
  if (!Number.isFinite(at)) return max;
  return Math.max(50, Math.min(max, Math.floor((at - now) * 0.75)));
}

export interface HealthOptions {
  /** Whether the service is ready, deciding within `budgetMs`. */
  ready: (budgetMs: number) => Promise<boolean>;
  internalToken: string;
  /** A check sent a wrong internal token (its caller's INTERNAL_TOKEN differs). */
  onRefused?: () => void;
}

/**
 * The standard grpc.health.v1 Check, answered from `ready()` on every call
 * within the caller's deadline. It needs no internal token: probes
 * (Kubernetes, grpc_health_probe) send none, and it tells nothing but up or
 * down. A caller that sends one (the gateway's readiness) learns whether it
 * is the right one: a wrong token fails the check with internal_auth_misconfigured.
 */
export function addHealthService(server: grpc.Server, options: HealthOptions): void {
  server.addService(healthService().service, {
    Check: (call: grpc.ServerUnaryCall<{ service?: string }, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      if (call.metadata.get('x-internal-token').length > 0 && !hasInternalToken(call.metadata, options.internalToken)) {
        options.onRefused?.();
        callback(toServiceError(internalAuthMisconfigured('wrong internal token')));
        return;
      }
      if (call.request.service) {
        callback(null, { status: 'SERVICE_UNKNOWN' });
        return;
      }
      options.ready(healthBudgetMs(call.getDeadline())).then(
        (ok) => callback(null, { status: ok ? 'SERVING' : 'NOT_SERVING' }),
        () => callback(null, { status: 'NOT_SERVING' }),
      );
    },
  });
}

/**
 * Asks a server's grpc.health.v1 Check (what a probe does). With `internalToken`
 * it also learns whether the server accepts it: a refused token rejects with the
 * internal_auth_misconfigured AppError.
 */
export function checkHealth(address: string, deadlineMs = 5000, internalToken?: string): Promise<ServingStatus> {
  const Client = healthService();
  const client = new Client(address, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
    Check(
      request: object,
      metadata: grpc.Metadata,
      options: grpc.CallOptions,
      callback: (err: grpc.ServiceError | null, res: { status?: ServingStatus }) => void,
    ): grpc.ClientUnaryCall;
  };
  const metadata = new grpc.Metadata();
  if (internalToken) metadata.set('x-internal-token', internalToken);
  return new Promise<ServingStatus>((resolve, reject) => {
    client.Check({}, metadata, { deadline: Date.now() + deadlineMs }, (err, res) => {
      client.close();
      if (err) reject(err.metadata?.get('x-error-code').length ? fromServiceError(err, address) : err);
      else resolve(res.status ?? 'UNKNOWN');
    });
  });
}
