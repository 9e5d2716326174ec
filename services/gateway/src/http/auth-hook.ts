import type { FastifyRequest } from 'fastify';
import { errors } from '@kb/platform';
import type { CallContext } from '@kb/rpc';
import type { IdentityService, ResolvedSession } from '../app/identity.js';
import type { ApiKeyService } from '../app/api-keys.js';
import { API_KEY_RE, SESSION_TOKEN_RE } from '../auth/secrets.js';
import { apiKeyPermissions } from '../auth/permissions.js';
import type { RouteAuth } from './route-auth.js';
import { DISPATCH_HEADER, RESOURCE_HEADER } from '../mcp/dispatcher.js';
import { normalizeResource, type ResolvedGrant } from '../mcp/oauth.js';
import { timingSafeEqual } from 'node:crypto';

/** OAuth access tokens are accepted only on requests the MCP dispatcher makes (it alone knows the secret); REST stays on keys and sessions. */
export interface McpDispatchAuth {
  secret: string;
  resolveAccessToken(token: string): Promise<ResolvedGrant | undefined>;
}

const sameSecret = (given: string, secret: string) => {
  // Compared as bytes: a multi-byte header of the same string length must not reach timingSafeEqual unequal in size.
  const a = Buffer.from(given);
  const b = Buffer.from(secret);
  return a.length === b.length && timingSafeEqual(a, b);
};

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is calling, in which organization, with what rights (forwarded to every service call). */
    caller?: CallContext;
    /** The signed-in user's session, when the credential is one. */
    session?: ResolvedSession;
  }
}

export function callerOf(request: FastifyRequest): CallContext {
  if (!request.caller) throw errors.internal('Route has no caller context');
  return request.caller;
}

export function sessionOf(request: FastifyRequest): ResolvedSession {
  if (!request.session) throw errors.internal('Route has no session');
  return request.session;
}

const BEARER_RE = /^Bearer +(\S+)$/i;

function single(header: string | string[] | undefined): string | undefined {
  return Array.isArray(header) ? undefined : header?.trim();
}

/**
 * Authenticates every request against the route's declared requirement, before
 * the body is even parsed: a request without a valid credential is 401 whatever
 * else is wrong with it. Credentials: an API key in X-API-Key, or a session
 * token in `Authorization: Bearer` (never both). The organization always comes
 * from the credential; a missing permission is 403.
 */
export function createAuthHook(identity: IdentityService, apiKeys: ApiKeyService, mcp?: McpDispatchAuth) {
  async function asOAuthGrant(
    request: FastifyRequest,
    auth: Exclude<RouteAuth, { credential: 'none' }>,
    token: string,
    m: McpDispatchAuth,
  ) {
    const grant = await m.resolveAccessToken(token);
    // A user who left the organization no longer acts in it through the grant.
    const permissions = grant && (await identity.memberPermissions(grant.org_id, grant.user_id));
    if (!grant || !permissions) throw errors.unauthenticated('Unknown, expired or revoked access token', { code: 'invalid_credential' });
    // RFC 8707: a token bound to another resource server is not for the MCP server that forwards it.
    const audience = single(request.headers[RESOURCE_HEADER]);
    if (grant.resource && audience && normalizeResource(audience) !== grant.resource) {
      throw errors.unauthenticated(`The access token was issued for ${grant.resource}, not this server`, { code: 'invalid_audience' });
    }
    if (auth.credential === 'user') {
      throw errors.unauthenticated('This operation needs a signed-in user, not an OAuth grant', { code: 'user_session_required' });
    }
    if (auth.permission && !permissions.includes(auth.permission)) {
      throw errors.forbidden(`Your role does not grant ${auth.permission}`, { code: 'missing_permission' });
    }
    request.caller = {
      org_id: grant.org_id,
      principal: { type: 'user', id: grant.user_id },
      permissions,
      folder_scope: grant.folder_scope,
      request_id: request.id,
    };
  }

  async function asApiKey(request: FastifyRequest, auth: Exclude<RouteAuth, { credential: 'none' }>, header: string | string[]) {
    const key = single(header);
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
    apiKeys.recordUse(found.key_id).catch((err: unknown) => request.log.warn({ err }, 'could not record API key use'));
  }

  async function asSession(request: FastifyRequest, auth: Exclude<RouteAuth, { credential: 'none' }>, header: string | string[]) {
    const token = BEARER_RE.exec(single(header) ?? '')?.[1];
    if (!token || !SESSION_TOKEN_RE.test(token)) {
      throw errors.unauthenticated('Malformed Authorization header: send Bearer <session token>', { code: 'malformed_credential' });
    }
    const session = await identity.findOpenSession(token);
    if (!session) throw errors.unauthenticated('Unknown, expired or ended session', { code: 'invalid_credential' });
    request.session = session;
    if (session.org_id === null) {
      if (auth.credential === 'user' && auth.orgOptional) return;
      throw errors.notFound('Organization', { code: 'no_current_organization' });
    }
    if (auth.permission && !session.permissions.includes(auth.permission)) {
      throw errors.forbidden(`Your role does not grant ${auth.permission}`, { code: 'missing_permission' });
    }
    request.caller = {
      org_id: session.org_id,
      principal: { type: 'user', id: session.user_id },
      permissions: session.permissions,
      // Sessions see the whole knowledge base; folder scopes restrict API keys.
      folder_scope: null,
      request_id: request.id,
    };
  }

  return async function authenticate(request: FastifyRequest): Promise<void> {
    if (request.is404) return;
    const auth: RouteAuth | undefined = request.routeOptions.config.auth;
    if (!auth) throw errors.internal('Route declares no auth requirement');
    if (auth.credential === 'none') return;

    const key = request.headers['x-api-key'];
    const bearer = request.headers.authorization;
    const dispatched = request.headers[DISPATCH_HEADER];
    if (mcp && typeof dispatched === 'string' && sameSecret(dispatched, mcp.secret) && key === undefined) {
      const token = BEARER_RE.exec(single(bearer) ?? '')?.[1];
      if (token?.startsWith('kbat_')) return asOAuthGrant(request, auth, token, mcp);
    }
    if (key !== undefined && bearer !== undefined) {
      throw errors.unauthenticated('Send one credential: X-API-Key or Authorization, not both', { code: 'ambiguous_credential' });
    }
    if (key !== undefined) return asApiKey(request, auth, key);
    if (bearer !== undefined) return asSession(request, auth, bearer);
    throw errors.unauthenticated('Missing credential: send X-API-Key or Authorization: Bearer <session token>', {
      code: 'missing_credential',
    });
  };
}
