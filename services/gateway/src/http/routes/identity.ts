import type { FastifyPluginAsync } from 'fastify';
import type { RouteDeps } from './index.js';
import { identitySchemas } from '../identity-schemas.js';
import { authRoutes } from './auth.js';
import { organizationRoutes } from './organization.js';
import { orgUserRoutes } from './org-users.js';
import { roleRoutes } from './roles.js';
import { apiKeyRoutes } from './api-keys.js';
import { creditRoutes } from './credits.js';

/** Identity, access and credits: sessions, organizations, users, roles, API keys and the credits ledger. */
export function identityRoutes(deps: RouteDeps): FastifyPluginAsync {
  return async (app) => {
    for (const schema of identitySchemas) app.addSchema(schema);
    await app.register(authRoutes(deps.identity, deps.loginThrottle));
    await app.register(organizationRoutes(deps.organizations));
    await app.register(orgUserRoutes(deps.organizations));
    await app.register(roleRoutes(deps.organizations));
    await app.register(apiKeyRoutes(deps.apiKeys, deps.clients.kbTree));
    await app.register(creditRoutes(deps.credits));
  };
}
