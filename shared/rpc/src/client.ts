import * as grpc from '@grpc/grpc-js';
import { activeContext, contextFromTraceparent, endSpan, SpanKind, startSpan } from '@kb/platform';
import { contextToMetadata, type CallContext } from './context.js';
import { fromServiceError } from './status.js';
import { callLocal, findLocalMethod } from './in-process.js';

export interface RpcClientOptions {
  address: string;
  internalToken: string;
  /** Per-call deadline. */
  deadlineMs?: number;
  /** Names the service in errors. */
  name: string;
}

export interface RpcClient {
  call<Res>(method: string, request: unknown, ctx: CallContext, options?: { deadlineMs?: number }): Promise<Res>;
  close(): void;
}

/**
 * A client whose calls carry the internal token and caller context, with
 * deadlines. Each call is a client span, child of the caller's trace context
 * (`ctx.trace`, else the active span), and its traceparent travels in metadata.
 */
export function createRpcClient(service: grpc.ServiceClientConstructor, options: RpcClientOptions): RpcClient {
  // A channel whose server went away retries on a backoff that grows to 120 s by default: a restarted
  // service would answer only once that wait ends (503s seconds after it listens). Capped at 1 s.
  const client = new service(options.address, grpc.credentials.createInsecure(), {
    'grpc.initial_reconnect_backoff_ms': 200,
    'grpc.max_reconnect_backoff_ms': 1000,
  });
  const deadlineMs = options.deadlineMs ?? 10_000;
  // Method name (as defined, or its camelCase original) -> path, for the in-process transport.
  const paths = new Map<string, string>();
  for (const [name, definition] of Object.entries(service.service)) {
    paths.set(name, definition.path);
    if (definition.originalName) paths.set(definition.originalName, definition.path);
  }
  return {
    call<Res>(method: string, request: unknown, ctx: CallContext, callOptions?: { deadlineMs?: number }): Promise<Res> {
      const fn = (client as unknown as Record<string, grpc.requestCallback<Res> | undefined>)[method] as unknown as
        | ((req: unknown, md: grpc.Metadata, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res?: Res) => void) => void)
        | undefined;
      if (typeof fn !== 'function') return Promise.reject(new Error(`${options.name} has no method ${method}`));
      const deadline = new Date(Date.now() + (callOptions?.deadlineMs ?? deadlineMs));
      const parent = ctx.trace ? contextFromTraceparent(ctx.trace) : activeContext();
      const { span, traceparent } = startSpan(
        `${options.name}/${method}`,
        { kind: SpanKind.CLIENT, attributes: { 'rpc.system': 'grpc', 'rpc.method': method, 'kb.request_id': ctx.request_id } },
        parent,
      );
      const sent: CallContext = traceparent ? { ...ctx, trace: traceparent } : ctx;
      const metadata = contextToMetadata(sent, options.internalToken);
      const local = findLocalMethod(options.address, paths.get(method) ?? '');
      if (local)
        return callLocal(local, request, metadata, deadline).then(
          (res) => {
            endSpan(span);
            return res as Res;
          },
          (err: grpc.ServiceError) => {
            const mapped = fromServiceError(err, options.name);
            endSpan(span, mapped);
            throw mapped;
          },
        );
      return new Promise<Res>((resolve, reject) => {
        fn.call(client, request, metadata, { deadline }, (err, res) => {
          if (err) {
            const mapped = fromServiceError(err, options.name);
            endSpan(span, mapped);
            reject(mapped);
          } else {
            endSpan(span);
            resolve(res as Res);
          }
        });
      });
    },
    close: () => client.close(),
  };
}
