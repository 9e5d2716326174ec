import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { CallContext } from '@kb/rpc';
import { destinationRoutes, Delivery, Destination } from './publishing/destinations.js';
import { domainRoutes, Domain } from './publishing/domains.js';
import { Outcome, Piece } from './publishing/piece-schemas.js';
import { pieceRoutes } from './publishing/pieces.js';
import { publishingProxies, type PublishingClients } from './publishing/support.js';
import { webhookRoutes, Subscription } from './publishing/webhooks.js';

export type { PublishingClients } from './publishing/support.js';

/** Content (review, publish, outcomes) and Destinations (destinations, custom domains, lifecycle webhooks); one file per resource under publishing/. */
export function publishingRoutes(clients: PublishingClients, onSiteChange: () => void = () => undefined): FastifyPluginAsyncTypebox {
  const proxies = publishingProxies(clients, onSiteChange);
  return async (app) => {
    for (const s of [Piece, Outcome, Destination, Delivery, Domain, Subscription]) app.addSchema(s);
    pieceRoutes(app, proxies);
    destinationRoutes(app, proxies);
    domainRoutes(app, proxies);
    webhookRoutes(app, proxies);
  };
}

/** The caller of hosted-site reads: nobody in particular (the pages are public). */
export const hostedCaller = (requestId: string): CallContext => ({
  org_id: '00000000-0000-0000-0000-000000000000',
  principal: { type: 'system', id: 'hosted-site' },
  permissions: [],
  folder_scope: null,
  request_id: requestId,
});
