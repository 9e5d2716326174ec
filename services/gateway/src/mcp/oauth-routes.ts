import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '@kb/platform';
import type { IdentityService } from '../app/identity.js';
import { OAuthError, type AuthorizeRequest, type OAuthService } from './oauth.js';

const none = { auth: { credential: 'none' as const } };
const BEARER_RE = /^Bearer +(\S+)$/i;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const AUTHORIZE_FIELDS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'code_challenge',
  'code_challenge_method',
  'state',
  'scope',
  'resource',
] as const;

function authorizeRequestOf(source: Record<string, unknown>): AuthorizeRequest {
  const out: Record<string, string> = {};
  for (const f of AUTHORIZE_FIELDS) if (typeof source[f] === 'string') out[f] = source[f];
  return out;
}

function redirectTo(reply: FastifyReply, redirectUri: string, params: Record<string, string | undefined>) {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return reply.status(302).header('location', url.toString()).header('cache-control', 'no-store').send();
}

function page(reply: FastifyReply, status: number, title: string, body: string) {
  return reply
    .status(status)
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
    .header('x-frame-options', 'DENY')
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title>` +
        '<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem}label{display:block;margin:1rem 0 .25rem}input{width:100%;padding:.4rem}button{margin:1.5rem .5rem 0 0;padding:.5rem 1rem}</style>' +
        `</head><body><h1>${escape(title)}</h1>${body}</body></html>`,
    );
}

/**
 * The OAuth endpoints (under the gateway's root): authorization server metadata
 * (RFC 8414), registration (RFC 7591), the consent page, token and revocation
 * (RFC 7009). Form bodies are parsed only here.
 */
export function oauthRoutes(deps: { oauth: OAuthService; identity: IdentityService; publicUrl?: string }) {
  const { oauth, identity } = deps;
  const issuerOf = (request: FastifyRequest) =>
    (deps.publicUrl ?? `${request.protocol}://${request.headers.host ?? 'localhost'}`).replace(/\/+$/, '');

  const oauthError = (reply: FastifyReply, err: unknown) => {
    if (!(err instanceof OAuthError)) throw err;
    return reply.status(err.status).header('cache-control', 'no-store').send({ error: err.error, error_description: err.description });
  };

  return async (app: FastifyInstance) => {
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 65536 }, (_req, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    });

    app.get('/.well-known/oauth-authorization-server', { config: none }, async (request) => {
      const issuer = issuerOf(request);
      return {
        issuer,
        authorization_endpoint: `${issuer}/oauth/authorize`,
        token_endpoint: `${issuer}/oauth/token`,
        registration_endpoint: `${issuer}/oauth/register`,
        revocation_endpoint: `${issuer}/oauth/revoke`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
        revocation_endpoint_auth_methods_supported: ['none'],
        scopes_supported: ['mcp'],
        authorization_response_iss_parameter_supported: true,
      };
    });

    app.post('/oauth/register', { config: none }, async (request, reply) => {
      try {
        const body = request.body && typeof request.body === 'object' ? (request.body as Record<string, unknown>) : {};
        return reply
          .status(201)
          .header('cache-control', 'no-store')
          .send(await oauth.register(body));
      } catch (err) {
        return oauthError(reply, err);
      }
    });

    app.get('/oauth/authorize', { config: none }, async (request, reply) => {
      const req = authorizeRequestOf(request.query as Record<string, unknown>);
      let checked;
      try {
        checked = await oauth.checkAuthorize(req);
      } catch (err) {
        if (!(err instanceof OAuthError)) throw err;
        return page(reply, 400, 'Authorization request refused', `<p>${escape(err.description)}</p>`);
      }
      const { client, redirect_uri, redirectError } = checked;
      if (redirectError) {
        return redirectTo(reply, redirect_uri, {
          error: redirectError.error,
          error_description: redirectError.description,
          state: req.state,
          iss: issuerOf(request),
        });
      }
      const hidden = Object.entries(req)
        .map(([k, v]) => `<input type="hidden" name="${escape(k)}" value="${escape(v)}">`)
        .join('');
      return page(
        reply,
        200,
        `Allow ${client.client_name} to use your knowledge base?`,
        `<p><strong>${escape(client.client_name)}</strong> asks to act for you through the MCP server with your role's permissions ` +
          `(searching, reading and adding knowledge-base content, prompts and analytics). It will be redirected to ` +
          `<code>${escape(redirect_uri)}</code>.</p>` +
          `<form method="post" action="/oauth/authorize">${hidden}` +
          '<label for="session_token">Your session token (sign in with POST /api/v1/auth/login)</label>' +
          '<input id="session_token" name="session_token" type="password" autocomplete="off" required>' +
          '<label for="org_id">Organization id (your current organization when empty)</label><input id="org_id" name="org_id">' +
          '<label for="folder_ids">Knowledge-base folder ids the assistant may see, comma separated (the whole knowledge base when empty)</label>' +
          '<input id="folder_ids" name="folder_ids">' +
          '<button type="submit" name="decision" value="allow">Allow</button><button type="submit" name="decision" value="deny">Deny</button>' +
          '</form>',
      );
    });

    app.post('/oauth/authorize', { config: none }, async (request, reply) => {
      const body = request.body && typeof request.body === 'object' ? (request.body as Record<string, unknown>) : {};
      const req = authorizeRequestOf(body);
      let checked;
      try {
        checked = await oauth.checkAuthorize(req);
      } catch (err) {
        return oauthError(reply, err);
      }
      const back = (params: Record<string, string | undefined>) =>
        redirectTo(reply, checked.redirect_uri, { ...params, state: req.state, iss: issuerOf(request) });
      if (checked.redirectError) return back({ error: checked.redirectError.error, error_description: checked.redirectError.description });

      const token =
        BEARER_RE.exec(request.headers.authorization ?? '')?.[1] ?? (typeof body.session_token === 'string' ? body.session_token : '');
      const session = token ? await identity.findOpenSession(token) : undefined;
      if (!session) throw errors.unauthenticated('Sign in first: send your session token', { code: 'invalid_credential' });
      if (body.decision !== 'allow') return back({ error: 'access_denied', error_description: 'The user denied the request' });

      const orgId = typeof body.org_id === 'string' && body.org_id.trim() ? body.org_id.trim() : session.org_id;
      if (!orgId || !UUID_RE.test(orgId))
        throw errors.validation('org_id must be the uuid of one of your organizations', { code: 'validation_failed' });
      if (!(await identity.memberPermissions(orgId, session.user_id))) throw errors.notFound('Organization');
      const rawFolders = body.folder_ids;
      const folders = (
        Array.isArray(rawFolders) ? rawFolders.map(String) : typeof rawFolders === 'string' ? rawFolders.split(/[\s,]+/) : []
      )
        .map((f) => f.trim())
        .filter(Boolean);
      if (folders.some((f) => !UUID_RE.test(f)) || folders.length > 50) {
        throw errors.validation('folder_ids must be at most 50 folder uuids', { code: 'validation_failed' });
      }
      const code = await oauth.issueCode(req, {
        org_id: orgId,
        user_id: session.user_id,
        folder_scope: folders.length > 0 ? folders : null,
      });
      return back({ code });
    });

    app.post('/oauth/token', { config: none }, async (request, reply) => {
      const body = request.body && typeof request.body === 'object' ? (request.body as Record<string, unknown>) : {};
      try {
        const tokens =
          body.grant_type === 'authorization_code'
            ? await oauth.exchangeCode(body)
            : body.grant_type === 'refresh_token'
              ? await oauth.refresh(body)
              : (() => {
                  throw new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token');
                })();
        return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(tokens);
      } catch (err) {
        return oauthError(reply, err);
      }
    });

    app.post('/oauth/revoke', { config: none }, async (request, reply) => {
      const body = request.body && typeof request.body === 'object' ? (request.body as Record<string, unknown>) : {};
      try {
        await oauth.revoke(body.token);
        return reply.status(200).header('cache-control', 'no-store').send({});
      } catch (err) {
        return oauthError(reply, err);
      }
    });
  };
}
