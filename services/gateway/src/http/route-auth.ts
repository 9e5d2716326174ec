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
  /**
   * A signed-in user only: a valid API key gets 401 (spec 5.4). `orgOptional`
   * routes (the session itself, creating an organization) also serve a user who
   * has no current organization; every other route needs one (404 without).
   */
  | { credential: 'user'; permission: Permission | null; orgOptional?: true };

/**
 * A metered route: the gateway reserves the operation's cost in credits before
 * the handler runs (402 and no work when the balance or spend limit does not
 * allow it) and settles after (a failed operation releases the reservation).
 * `units` scales the configured per-unit cost, e.g. the number of files uploaded.
 */
export interface RouteMeter {
  operation: 'ingest' | 'query' | 'generation';
  units?: (request: import('fastify').FastifyRequest) => number;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: RouteAuth;
    meter?: RouteMeter;
  }
}
