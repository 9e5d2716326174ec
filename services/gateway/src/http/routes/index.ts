import type { FastifyInstance } from 'fastify';
import type { ServiceClients } from '../../clients.js';
import type { IdentityService } from '../../app/identity.js';
import { categoryRoutes } from './categories.js';

export interface RouteDeps {
  clients: ServiceClients;
  identity: IdentityService;
}

/** Every feature area's routes, registered under /api/v1. A new area adds one line. */
export async function registerRoutes(api: FastifyInstance, deps: RouteDeps): Promise<void> {
  await api.register(categoryRoutes(deps.clients.categories));
}
