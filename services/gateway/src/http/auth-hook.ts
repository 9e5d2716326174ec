import type { FastifyRequest } from 'fastify';
import { errors } from '@kb/platform';
import type { CallContext } from '@kb/rpc';
import type { IdentityService } from '../app/identity.js';
import { API_KEY_RE } from '../auth/secrets.js';
import { apiKeyPermissions } from '../auth/permissions.js';
import type { RouteAuth } from './route-auth.js';

declare module 'fastify' {
  interface FastifyRequest {
    caller?: CallContext;
  }
}

export function callerOf(request: FastifyRequest): CallContext {
  if (!request.caller) throw errors.internal('Route has no caller context');
  return request.caller;
}

/**
 * Authenticates every request against the route's declared requirement, before
 * the body is even parsed: a request without a valid credential is 401 whatever
 * else is wrong with it. The organization always comes from the credential.
 */
export function createAuthHook(identity: IdentityService) {
  return async function authenticate(request: FastifyRequest): Promise<void> {
    if (request.is404) return;
    const auth: RouteAuth | undefined = request.routeOptions.config.auth;
    if (!auth) throw errors.internal('Route declares no auth requirement');
    if (auth.credential === 'none') return;

    const header = request.headers['x-api-key'];
    if (header === undefined) throw errors.unauthenticated('Missing credential: send the X-API-Key header', { code: 'missing_credential' });
    const key = Array.isArray(header) ? undefined : header.trim();
    if (!key || !API_KEY_RE.test(key)) throw errors.unauthenticated('Malformed API key', { code: 'malformed_credential' });
    const found = await identity.findActiveApiKey(key);
    if (!found) throw errors.unauthenticated('Unknown or revoked API key', { code: 'invalid_credential' });
    if (auth.credential === 'user') {
      throw errors.unauthenticated('This operation needs a signed-in user, not an API key', { code: 'user_session_required' });
    }
    if (auth.permission && !apiKeyPermissions.includes(auth.permission)) {
      throw errors.forbidden(`API keys do not carry ${auth.permission}`, { code: 'missing_permission' });
    }
    request.caller = {
      org_id: found.org_id,
      principal: { type: 'api_key', id: found.key_id },
      permissions: apiKeyPermissions,
      folder_scope: found.folder_scope,
      request_id: request.id,
    };
  };
}
