import type { Logger } from 'pino';
import { systemClock } from '@kb/platform';
import { openStore, type AdapterSettings, type StoreFileOptions } from '@kb/runtime';
import { rebuildReadModels, type Projection, type RebuildProgress } from '@kb/eventsourcing';
import { gatewayProjections, SERVICE_NAME as GATEWAY } from '@kb/gateway';
import { knowledgeBaseProjections, SERVICE_NAME as KNOWLEDGE_BASE } from '@kb/knowledge-base';
import { ingestProjections, SERVICE_NAME as INGEST } from '@kb/ingest';
import { analyticsProjections, ANALYTICS_STORE_FILE, SERVICE_NAME as ANALYTICS } from '@kb/analytics';
import { generationProjections, SERVICE_NAME as GENERATION } from '@kb/generation';

/** Every event-sourced service and the read models it owns. */
export const serviceProjections: Record<string, Projection[]> = {
  [GATEWAY]: gatewayProjections,
  [KNOWLEDGE_BASE]: knowledgeBaseProjections,
  [INGEST]: ingestProjections,
  [ANALYTICS]: analyticsProjections,
  [GENERATION]: generationProjections,
};

/** Store files laid out otherwise than the default (so a rebuild that creates one makes it as the service would). */
const serviceStoreFiles: Record<string, StoreFileOptions> = { [ANALYTICS]: ANALYTICS_STORE_FILE };

/** Drops and rebuilds one service's read models by replaying its event store (service stopped). */
export async function rebuildService(
  service: string,
  settings: AdapterSettings,
  logger: Logger,
  onProgress?: (p: RebuildProgress) => void,
): Promise<RebuildProgress> {
  const projections = serviceProjections[service];
  if (!projections) throw new Error(`Unknown service ${service}; one of: ${Object.keys(serviceProjections).join(', ')}`);
  const store = await openStore(settings, service, systemClock, logger, serviceStoreFiles[service]);
  try {
    return await rebuildReadModels(store, projections, onProgress ? { onProgress } : {});
  } finally {
    await store.close();
  }
}
