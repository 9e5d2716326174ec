import * as grpc from '@grpc/grpc-js';
import { loadProto, serviceConstructor } from './proto.js';

export type ServingStatus = 'UNKNOWN' | 'SERVING' | 'NOT_SERVING' | 'SERVICE_UNKNOWN';

const healthService = () => serviceConstructor(loadProto('grpc/health/v1/health.proto'), 'grpc.health.v1.Health');

/**
 * The standard grpc.health.v1 Check, answered from `ready()` on every call. It
 * needs no internal token: probes (Kubernetes, grpc_health_probe) send none,
 * and it tells nothing but up or down.
 */
export function addHealthService(server: grpc.Server, ready: () => Promise<boolean>): void {
  server.addService(healthService().service, {
    Check: (call: grpc.ServerUnaryCall<{ service?: string }, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      if (call.request.service) {
        callback(null, { status: 'SERVICE_UNKNOWN' });
        return;
      }
      ready().then(
        (ok) => callback(null, { status: ok ? 'SERVING' : 'NOT_SERVING' }),
        () => callback(null, { status: 'NOT_SERVING' }),
      );
    },
  });
}

/** Asks a server's grpc.health.v1 Check (what a probe does). */
export function checkHealth(address: string, deadlineMs = 5000): Promise<ServingStatus> {
  const Client = healthService();
  const client = new Client(address, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
    Check(
      request: object,
      options: grpc.CallOptions,
      callback: (err: grpc.ServiceError | null, res: { status?: ServingStatus }) => void,
    ): grpc.ClientUnaryCall;
  };
  return new Promise<ServingStatus>((resolve, reject) => {
    client.Check({}, { deadline: Date.now() + deadlineMs }, (err, res) => {
      client.close();
      if (err) reject(err);
      else resolve(res.status ?? 'UNKNOWN');
    });
  });
}
