import { AsyncResource } from 'node:async_hooks';
import { Metadata, status, type MethodDefinition, type ServiceError } from '@grpc/grpc-js';

/**
 * The in-process transport: when a client's address names a server that
 * listens in this same process (the all-in-one deployment, `npm start`), the
 * call skips HTTP/2 and loopback TCP but keeps everything else the wire does:
 * the request and response go through the method's protobuf serializers (so
 * field types, 32/64-bit bounds and copies are exactly the wire's), the caller
 * context travels as gRPC metadata and is checked with the internal token, the
 * handler runs in its server span, errors cross as the same status + metadata,
 * deadlines and message-size limits apply. Servers in other processes are
 * reached over gRPC as before; `setInProcessCalls(false)` forces the wire.
 */

/** What a server registers for each unary method: the same dispatch its gRPC handler uses. */
export interface LocalMethod {
  definition: MethodDefinition<unknown, unknown>;
  /** Resolves with the response, or rejects with the ServiceError the wire would carry. */
  dispatch(request: unknown, metadata: Metadata): Promise<unknown>;
}

interface LocalServer {
  methods: Map<string, LocalMethod>;
  /** The async context of the server's start: handlers never inherit the caller's. */
  scope: AsyncResource;
  open: boolean;
}

const byPort = new Map<number, LocalServer>();
let enabled = true;

/** Turns the in-process transport on or off for this process (on by default). */
export function setInProcessCalls(on: boolean): void {
  enabled = on;
}

export function registerLocalServer(port: number, methods: Map<string, LocalMethod>): () => void {
  const server: LocalServer = { methods, scope: new AsyncResource('kb.rpc.in-process-server'), open: true };
  byPort.set(port, server);
  return () => {
    server.open = false;
    if (byPort.get(port) === server) byPort.delete(port);
  };
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]', '0.0.0.0']);

/** The local server method an address + path resolves to, if the transport is on and one exists. */
export function findLocalMethod(address: string, path: string): { method: LocalMethod; server: LocalServer } | undefined {
  if (!enabled || byPort.size === 0) return undefined;
  const at = address.lastIndexOf(':');
  if (at < 0) return undefined;
  const host = address.slice(address.indexOf('///') >= 0 ? address.indexOf('///') + 3 : 0, at);
  if (!LOOPBACK.has(host)) return undefined;
  const server = byPort.get(Number(address.slice(at + 1)));
  const method = server?.methods.get(path);
  return server && method ? { method, server } : undefined;
}

/** grpc-js defaults: a client receives at most 4 MB; our servers accept 64 MB. */
const CLIENT_MAX_RECEIVE = 4 * 1024 * 1024;
const SERVER_MAX_RECEIVE = 64 * 1024 * 1024;

function serviceError(code: status, details: string): ServiceError {
  return Object.assign(new Error(`${code} ${status[code]}: ${details}`), { code, details, metadata: new Metadata() });
}

/** A message as the wire carries it: serialized, within the receiver's limit (else the status grpc-js gives). */
function encode(serialize: (value: unknown) => Buffer, value: unknown, what: 'Request' | 'Response', max: number): Buffer | ServiceError {
  let bytes: Buffer;
  try {
    bytes = serialize(value);
  } catch (err) {
    return serviceError(status.INTERNAL, `${what} message serialization failure: ${(err as Error).message}`);
  }
  return bytes.length > max
    ? serviceError(status.RESOURCE_EXHAUSTED, `Received message larger than max (${bytes.length} vs ${max})`)
    : bytes;
}

/** One unary call through the in-process transport, with the wire's serialization, limits and deadline. */
export function callLocal(
  target: { method: LocalMethod; server: LocalServer },
  request: unknown,
  metadata: Metadata,
  deadline: Date,
): Promise<unknown> {
  const { definition } = target.method;
  return new Promise((resolve, reject) => {
    if (!target.server.open) return reject(serviceError(status.UNAVAILABLE, 'server is shutting down'));
    const sent = encode(definition.requestSerialize, request, 'Request', SERVER_MAX_RECEIVE);
    if (!Buffer.isBuffer(sent)) return reject(sent);
    const ms = deadline.getTime() - Date.now();
    if (ms <= 0) return reject(serviceError(status.DEADLINE_EXCEEDED, 'Deadline exceeded'));
    let settled = false;
    const timer = setTimeout(() => {
      settled = true;
      reject(serviceError(status.DEADLINE_EXCEEDED, 'Deadline exceeded'));
    }, ms);
    target.server.scope.runInAsyncScope(() =>
      target.method.dispatch(definition.requestDeserialize(sent), metadata).then(
        (response) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          const received = encode(definition.responseSerialize, response, 'Response', CLIENT_MAX_RECEIVE);
          if (!Buffer.isBuffer(received)) return reject(received);
          resolve(definition.responseDeserialize(received));
        },
        (err: Partial<ServiceError>) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          const code = err.code ?? status.UNKNOWN;
          const details = err.details ?? 'unknown error';
          reject(Object.assign(serviceError(code, details), { metadata: err.metadata ?? new Metadata() }));
        },
      ),
    );
  });
}
