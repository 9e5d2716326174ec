import type { Permission } from '../auth/permissions.js';

/**
 * What a route requires, declared on every route (`config.auth`). The auth hook
 * enforces it, the OpenAPI description shows it, and the authorization matrix
 * test reads it from the route table.
 */
export type RouteAuth =
  | { credential: 'none' }
  /** Either an API key or a signed-in user, holding the permission. */
  | { credential: 'any'; permission: Permission | null }
  /** A signed-in user only: a valid API key gets 401 (spec 5.4). */
  | { credential: 'user'; permission: Permission | null };

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: RouteAuth;
  }
}
