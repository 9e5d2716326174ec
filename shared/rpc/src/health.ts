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

/** A readiness answer with its checks: each 'ok' or why it failed. */
export interface HealthAnswer {
  ready: boolean;
  checks: Record<string, string>;
}

/** The trailer that carries why a service is NOT_SERVING, to a caller presenting the internal token. */
export const NOT_READY_TRAILER = 'x-not-ready';

/** The failing checks as one line a metadata value can carry (printable ASCII, bounded). */
const reasonsOf = (checks: Record<string, string>): string =>
  Object.entries(checks)
    .filter(([, result]) => result !== 'ok')
    .map(([name, result]) => `${name}: ${result}`)
    .join('; ')
    .replace(/[^\x20-\x7e]/g, '?')
    .slice(0, 2000);

export interface HealthOptions {
  /** Whether the service is ready (with its checks, to say why not), deciding within `budgetMs`. */
  ready: (budgetMs: number) => Promise<boolean | HealthAnswer>;
  internalToken: string;
  /** A check sent a wrong internal token (its caller's INTERNAL_TOKEN differs). */
  onRefused?: () => void;
}

/**
 * The standard grpc.health.v1 Check, answered from `ready()` on every call
 * within the caller's deadline. It needs no internal token: probes
 * (Kubernetes, grpc_health_probe) send none, and it tells nothing but up or
 * down. A caller that sends one (the gateway's readiness) learns whether it
 * is the right one: a wrong token fails the check with internal_auth_misconfigured;
 * the right one gets, with NOT_SERVING, the failing checks and why (trailer
 * `x-not-ready`).
 */
export function addHealthService(server: grpc.Server, options: HealthOptions): void {
  server.addService(healthService().service, {
    Check: (call: grpc.ServerUnaryCall<{ service?: string }, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      const presented = call.metadata.get('x-internal-token').length > 0;
      if (presented && !hasInternalToken(call.metadata, options.internalToken)) {
        options.onRefused?.();
        callback(toServiceError(internalAuthMisconfigured('wrong internal token')));
        return;
      }
      if (call.request.service) {
        callback(null, { status: 'SERVICE_UNKNOWN' });
        return;
      }
      options.ready(healthBudgetMs(call.getDeadline())).then(
        (answer) => {
          const ok = typeof answer === 'boolean' ? answer : answer.ready;
          if (ok || typeof answer === 'boolean' || !presented) return callback(null, { status: ok ? 'SERVING' : 'NOT_SERVING' });
          const trailer = new grpc.Metadata();
          trailer.set(NOT_READY_TRAILER, reasonsOf(answer.checks));
          callback(null, { status: 'NOT_SERVING' }, trailer);
        },
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
export async function checkHealth(address: string, deadlineMs = 5000, internalToken?: string): Promise<ServingStatus> {
  return (await checkHealthWithReason(address, deadlineMs, internalToken)).status;
}

/** checkHealth, and with the internal token why a NOT_SERVING service is not ready (its failing checks). */
export function checkHealthWithReason(
  address: string,
  deadlineMs = 5000,
  internalToken?: string,
): Promise<{ status: ServingStatus; reason?: string }> {
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
  return new Promise((resolve, reject) => {
    let reason: string | undefined;
    let answered: { status?: ServingStatus } | undefined;
    let done = false;
    const finish = () => {
      if (done || !answered) return;
      done = true;
      client.close();
      const status = answered.status ?? 'UNKNOWN';
      resolve(reason ? { status, reason } : { status });
    };
    const call = client.Check({}, metadata, { deadline: Date.now() + deadlineMs }, (err, res) => {
      if (err) {
        done = true;
        client.close();
        reject(err.metadata?.get('x-error-code').length ? fromServiceError(err, address) : err);
        return;
      }
      answered = res;
      // The trailer comes with the status, which grpc-js may report just after the answer.
      setImmediate(finish);
    });
    call.on('status', (status: grpc.StatusObject) => {
      const value = status.metadata.get(NOT_READY_TRAILER)[0];
      if (value !== undefined) reason = String(value);
      finish();
    });
  });
}
