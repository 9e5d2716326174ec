import { createRpcClient, loadProto, serviceConstructor, type RpcClient } from '@kb/rpc';
import type { GatewayConfig } from './config.js';

/**
 * gRPC clients of the services behind the gateway, one per proto service. A new
 * service adds its clients here (and its address variable to the config).
 */
export interface ServiceClients {
  categories: RpcClient;
}

export function createServiceClients(config: GatewayConfig): ServiceClients & { close(): void } {
  const client = (proto: string, service: string, address: string, name: string) =>
    createRpcClient(serviceConstructor(loadProto(proto), service), {
      address,
      internalToken: config.INTERNAL_TOKEN,
      deadlineMs: config.RPC_DEADLINE_MS,
      name,
    });
  const clients: ServiceClients = {
    categories: client('knowledge_base.proto', 'knowledge_base.v1.CategoryService', config.KNOWLEDGE_BASE_GRPC, 'knowledge-base'),
  };
  return {
    ...clients,
    close() {
      for (const c of Object.values(clients)) c.close();
    },
  };
}
