import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/** protos/ at the repository root (also copied next to the app in the container image). */
export const protosDir = process.env.PROTOS_DIR ?? join(dirname(fileURLToPath(import.meta.url)), '../../../protos');

/**
 * keepCase: field names stay snake_case, the same as the JSON API; defaults off so
 * absent optional fields stay undefined (PATCH semantics), arrays always present.
 */
export const loaderOptions: protoLoader.Options = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: false,
  arrays: true,
  oneofs: true,
};

const cache = new Map<string, grpc.GrpcObject>();

export function loadProto(file: string): grpc.GrpcObject {
  let pkg = cache.get(file);
  if (!pkg) {
    const definition = protoLoader.loadSync(join(protosDir, file), { ...loaderOptions, includeDirs: [protosDir] });
    pkg = grpc.loadPackageDefinition(definition);
    cache.set(file, pkg);
  }
  return pkg;
}

/** Finds `package.v1.Service` in a loaded proto. */
export function serviceConstructor(pkg: grpc.GrpcObject, path: string): grpc.ServiceClientConstructor {
  const found = path.split('.').reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part], pkg);
  if (typeof found !== 'function' || !('service' in found)) throw new Error(`No gRPC service ${path} in proto`);
  return found as grpc.ServiceClientConstructor;
}
