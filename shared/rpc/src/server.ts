import * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { contextFromTraceparent, inSpan, INTERNAL_AUTH_MISCONFIGURED, isAppError, SpanKind } from '@kb/platform';
import { metadataToContext, type CallContext } from './context.js';
import { toServiceError } from './status.js';
import { addHealthService, type HealthAnswer } from './health.js';
import { registerLocalServer, type LocalMethod } from './in-process.js';

export type UnaryHandler<Req = any, Res = any> = (request: Req, ctx: CallContext) => Promise<Res>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface RpcServerOptions {
  internalToken: string;
  logger: Logger;
}

/**
 * A gRPC server whose every handler requires the internal token and receives the
 * caller context; thrown AppErrors become statuses through the one mapping. Each
 * call runs in a server span, child of the caller's `traceparent`, that is the
 * active span for the handler (so events it appends carry it) and is the
 * `trace` of the context the handler gets (so calls it makes continue it).
 */
export function createRpcServer(options: RpcServerOptions) {
  const server = new grpc.Server({ 'grpc.max_receive_message_length': 64 * 1024 * 1024 });

  /** Refused internal tokens: an operator's problem, said at most once a minute. */
  let refused = 0;
  let lastSaid = -Infinity;
  const onRefused = () => {
    refused++;
    if (Date.now() - lastSaid < 60_000) return;
    options.logger.warn(
      { refused_calls: refused },
      'refused internal calls with a missing or wrong internal token: every service must run with the same INTERNAL_TOKEN',
    );
    lastSaid = Date.now();
    refused = 0;
  };

  const local = new Map<string, LocalMethod>();
  let unregister: (() => void) | undefined;

  function addService(service: grpc.ServiceClientConstructor, handlers: Record<string, UnaryHandler>): void {
    const implementation: grpc.UntypedServiceImplementation = {};
    for (const [method, definition] of Object.entries(service.service)) {
      const handler = handlers[method] ?? handlers[definition.originalName ?? ''];
      if (!handler) throw new Error(`No handler for ${method}`);
      const name = definition.path.replace(/^\//, '');
      /** Resolves with the response or rejects with the status the caller gets, on either transport. */
      const dispatch = (request: unknown, metadata: grpc.Metadata): Promise<unknown> => {
        let ctx: CallContext;
        try {
          ctx = metadataToContext(metadata, options.internalToken);
        } catch (err) {
          if (isAppError(err) && err.code === INTERNAL_AUTH_MISCONFIGURED) onRefused();
          return Promise.reject(toServiceError(err));
        }
        const caller = ctx;
        return inSpan(
          name,
          { kind: SpanKind.SERVER, attributes: { 'rpc.system': 'grpc', 'rpc.method': method, 'kb.request_id': ctx.request_id } },
          contextFromTraceparent(ctx.trace),
          ({ traceparent }) => handler(request, traceparent ? { ...caller, trace: traceparent } : caller),
        ).catch((err: unknown) => {
          if (!isAppError(err) || err.httpStatus >= 500) {
            options.logger.error({ err, method, request_id: ctx.request_id }, 'rpc handler failed');
          }
          throw toServiceError(err);
        });
      };
      implementation[method] = (call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
        dispatch(call.request, call.metadata).then(
          (response) => callback(null, response),
          (err: Partial<grpc.ServiceError>) => callback(err),
        );
      };
      local.set(definition.path, { definition: definition as grpc.MethodDefinition<unknown, unknown>, dispatch });
    }
    server.addService(service.service, implementation);
  }

  return {
    addService,
    /** grpc.health.v1 Check: SERVING while `ready(budgetMs)` resolves ready within the caller's deadline (see health.ts). */
    addHealth(ready: (budgetMs: number) => Promise<boolean | HealthAnswer>): void {
      addHealthService(server, { ready, internalToken: options.internalToken, onRefused });
    },
    /** Binds and resolves with the actual port (0 picks a free one). */
    listen(host: string, port: number): Promise<number> {
      return new Promise((resolve, reject) => {
        server.bindAsync(`${host}:${port}`, grpc.ServerCredentials.createInsecure(), (err, bound) => {
          if (err) return reject(err);
          unregister = registerLocalServer(bound, local);
          resolve(bound);
        });
      });
    },
    /** Lets in-flight calls finish, then forces after the grace period. */
    shutdown(graceMs = 5000): Promise<void> {
      unregister?.();
      return new Promise((resolve) => {
        const force = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      });
    },
  };
}
