import type { DestinationAdapter } from './port.js';
import { closedConfig } from './config.js';

/** Built in: the service serves the pages itself (see app/sites.ts); publishing records the page. */
export function createHostedAdapter(): DestinationAdapter {
  return {
    type: 'hosted',
    secret: 'none',
    validateConfig: (config) => closedConfig(config, {}),
    publish: async (_d, request) => (request.canonical_url ? { url: request.canonical_url } : {}),
    unpublish: async () => ({}),
  };
}
