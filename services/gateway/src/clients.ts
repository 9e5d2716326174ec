import { createRpcClient, loadProto, serviceConstructor, type RpcClient } from '@kb/rpc';
import type { GatewayConfig } from './config.js';

/**
 * gRPC clients of the services behind the gateway, one per proto service. A new
 * service adds its clients here (and its address variable to the config).
 */
export interface ServiceClients {
  categories: RpcClient;
  analyticsAnswers: RpcClient;
  analyticsReports: RpcClient;
  trackedSources: RpcClient;
  competitors: RpcClient;
  runConfiguration: RpcClient;
  kbTree: RpcClient;
  tags: RpcClient;
  search: RpcClient;
  prompts: RpcClient;
  ingest: RpcClient;
  generation: RpcClient;
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
    analyticsAnswers: client('analytics.proto', 'analytics.v1.AnswerService', config.ANALYTICS_GRPC, 'analytics'),
    analyticsReports: client('analytics.proto', 'analytics.v1.ReportService', config.ANALYTICS_GRPC, 'analytics'),
    trackedSources: client('analytics.proto', 'analytics.v1.TrackedSourceService', config.ANALYTICS_GRPC, 'analytics'),
    competitors: client('analytics.proto', 'analytics.v1.CompetitorService', config.ANALYTICS_GRPC, 'analytics'),
    runConfiguration: client('analytics.proto', 'analytics.v1.RunConfigurationService', config.ANALYTICS_GRPC, 'analytics'),
    kbTree: client('knowledge_base.proto', 'knowledge_base.v1.KnowledgeBaseTree', config.KNOWLEDGE_BASE_GRPC, 'knowledge-base'),
    tags: client('knowledge_base.proto', 'knowledge_base.v1.Tags', config.KNOWLEDGE_BASE_GRPC, 'knowledge-base'),
    search: client('knowledge_base.proto', 'knowledge_base.v1.Search', config.KNOWLEDGE_BASE_GRPC, 'knowledge-base'),
    prompts: client('knowledge_base.proto', 'knowledge_base.v1.Prompts', config.KNOWLEDGE_BASE_GRPC, 'knowledge-base'),
    ingest: client('ingest.proto', 'ingest.v1.IngestService', config.INGEST_GRPC, 'ingest'),
    generation: client('generation.proto', 'generation.v1.Generation', config.GENERATION_GRPC, 'generation'),
  };
  return {
    ...clients,
    close() {
      for (const c of Object.values(clients)) c.close();
    },
  };
}
