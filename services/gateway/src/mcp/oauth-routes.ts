import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '@kb/platform';
import type { RateLimiter } from '@kb/coordination';
import type { RpcClient } from '@kb/rpc';
import { checkFolderScope } from '../http/routes/api-keys.js';
import type { IdentityService } from '../app/identity.js';
import { OAuthError, type AuthorizeRequest, type OAuthService } from './oauth.js';
import { consentForm, escapeHtml as escape, signInForm, type FolderChoice } from './consent-page.js';
import { ownBaseUrl } from './public-url.js';

const none = { auth: { credential: 'none' as const } };
const BEARER_RE = /^Bearer +(\S+)$/i;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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
        '<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem}label{display:block;margin:1rem 0 .25rem}' +
        'input[type=email],input[type=password],select{width:100%;padding:.4rem}fieldset{margin-top:1rem}fieldset label{display:inline;margin-left:.4rem}' +
        'button{margin:1.5rem .5rem 0 0;padding:.5rem 1rem}.error{color:#a00}</style>' +
        `</head><body><h1>${escape(title)}</h1>${body}</body></html>`,
    );
}

/** An authorization request that is not valid: shown to the person, never redirected. */
const refusedPage = (reply: FastifyReply, err: OAuthError) =>
  page(reply, 400, 'Authorization request refused', `<p>${escape(err.description)}</p><p>Error: <code>${escape(err.error)}</code></p>`);

/**
 * The OAuth endpoints (under the gateway's root): authorization server metadata
 * (RFC 8414), registration (RFC 7591), the consent page, token and revocation
 * (RFC 7009). Form bodies are parsed only here.
 */
export function oauthRoutes(deps: {
  oauth: OAuthService;
  identity: IdentityService;
  publicUrl?: string;
  /** Further resource servers (URLs of MCP endpoints, e.g. the mcp process's) tokens may be issued for. */
  resources?: readonly string[];
  /** The knowledge-base tree, to check that consented folders are folders of the chosen organization. */
  kbTree?: RpcClient;
  /** Registrations per client address and hour (registration is anonymous). */
  registrations?: { limiter: RateLimiter; perHour: number };
}) {
  const { oauth, identity } = deps;
  /** The issuer: the configured public URL, else this server's loopback address (never a Host it does not own). */
  const issuerOf = (request: FastifyRequest) => ownBaseUrl(request, deps.publicUrl);
  /** RFC 8707: the resource servers tokens may be issued for: this server's /mcp and the configured others. */
  const resourcesOf = (request: FastifyRequest) => [`${issuerOf(request)}/mcp`, ...(deps.resources ?? [])];

  const oauthError = (reply: FastifyReply, err: unknown) => {
    if (!(err instanceof OAuthError)) throw err;
    return reply.status(err.status).header('cache-control', 'no-store').send({ error: err.error, error_description: err.description });
  };

  /** Step 2 of the page: the user's organizations and the folders of the session's one. */
  async function consent(
    request: FastifyRequest,
    reply: FastifyReply,
    title: string,
    checked: { client: { client_name: string }; redirect_uri: string },
    authorize: Record<string, string>,
    token: string,
    error?: string,
  ) {
    const session = await identity.findOpenSession(token);
    if (!session) throw errors.unauthenticated('Sign in first', { code: 'invalid_credential' });
    const me = await identity.me(session);
    if (!session.org_id || me.organizations.length === 0) {
      return page(reply, 403, title, '<p>You belong to no organization yet: create one in the console first.</p>');
    }
    const { folders, cut } = await foldersOf(request.server, token);
    return page(
      reply,
      200,
      title,
      consentForm({
        client: checked.client.client_name,
        redirectUri: checked.redirect_uri,
        resource: authorize.resource ?? `${issuerOf(request)}/mcp`,
        authorize,
        sessionToken: token,
        email: me.user.email,
        organizations: me.organizations,
        orgId: session.org_id,
        folders,
        foldersCut: cut,
        ...(error && { error }),
      }),
    );
  }

  return async (app: FastifyInstance) => {
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 65536 }, (_req, body, done) => {
      // A repeated field (the folder checkboxes) is a list.
      const out: Record<string, string | string[]> = {};
      for (const [k, v] of new URLSearchParams(body as string)) {
        const had = out[k];
        out[k] = had === undefined ? v : [...[had].flat(), v];
      }
      done(null, out);
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
      if (deps.registrations) {
        const { limiter, perHour } = deps.registrations;
        const decision = await limiter.hit(`oauth-register:${request.ip}`, perHour, 3_600_000);
        if (!decision.allowed) {
          return reply
            .status(429)
            .header('retry-after', String(decision.retryAfterSeconds))
            .header('cache-control', 'no-store')
            .send({
              error: 'rate_limited',
              error_description: `More than ${perHour} client registrations from this address in an hour; retry after ${decision.retryAfterSeconds} s`,
            });
        }
      }
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
        checked = await oauth.checkAuthorize(req, resourcesOf(request));
      } catch (err) {
        if (!(err instanceof OAuthError)) throw err;
        return refusedPage(reply, err);
      }
      const { client, redirect_uri, redirectError } = checked;
      // RFC 9700 4.11.2: an invalid request is not sent on to a redirect URI nobody has vouched for (an open redirector).
      if (redirectError) return refusedPage(reply, redirectError);
      return page(
        reply,
        200,
        `Allow ${client.client_name} to use your knowledge base?`,
        signInForm({
          client: client.client_name,
          redirectUri: redirect_uri,
          resource: req.resource ?? `${issuerOf(request)}/mcp`,
          authorize: req as Record<string, string>,
        }),
      );
    });

    app.post('/oauth/authorize', { config: none }, async (request, reply) => {
      const body = request.body && typeof request.body === 'object' ? (request.body as Record<string, unknown>) : {};
      const req = authorizeRequestOf(body);
      let checked;
      try {
        checked = await oauth.checkAuthorize(req, resourcesOf(request));
      } catch (err) {
        return oauthError(reply, err);
      }
      const back = (params: Record<string, string | undefined>) =>
        redirectTo(reply, checked.redirect_uri, { ...params, state: req.state, iss: issuerOf(request) });
      if (checked.redirectError) return refusedPage(reply, checked.redirectError);
      const title = `Allow ${checked.client.client_name} to use your knowledge base?`;
      const authorize = req as Record<string, string>;

      if (body.step === 'signin') {
        // The REST login, with its limit on failed attempts per email and address.
        const email = typeof body.email === 'string' ? body.email : '';
        const login = await request.server.inject({
          method: 'POST',
          url: '/api/v1/auth/login',
          remoteAddress: request.ip,
          payload: { email, password: typeof body.password === 'string' ? body.password : '' },
        });
        const answer = login.json<{ token?: string; error?: { message?: string } }>();
        if (login.statusCode !== 200 || !answer.token) {
          const form = signInForm({
            client: checked.client.client_name,
            redirectUri: checked.redirect_uri,
            resource: req.resource ?? `${issuerOf(request)}/mcp`,
            authorize,
            email,
            error: answer.error?.message ?? 'Sign-in failed',
          });
          // The login's backoff reaches the person as it would the API client: 429 with Retry-After.
          const retryAfter = login.headers['retry-after'];
          if (retryAfter !== undefined) void reply.header('retry-after', String(retryAfter));
          return page(reply, login.statusCode >= 400 ? login.statusCode : 401, title, form);
        }
        // The page holds a session of its own that soon expires and ends with the decision, not the login's day-long one.
        const signedIn = await identity.findOpenSession(answer.token);
        if (!signedIn) throw errors.unauthenticated('Sign in first', { code: 'invalid_credential' });
        return consent(request, reply, title, checked, authorize, await identity.shortSessionFor(signedIn, CONSENT_SESSION_TTL_SECONDS));
      }

      // A script sends its own session (Authorization or session_token) and keeps it; the page's consent_session ends below.
      const own =
        BEARER_RE.exec(request.headers.authorization ?? '')?.[1] ??
        (typeof body.session_token === 'string' ? body.session_token : undefined);
      const pageSession = own === undefined && typeof body.consent_session === 'string' ? body.consent_session : undefined;
      const token = own ?? pageSession ?? '';
      const session = token ? await identity.findOpenSession(token) : undefined;
      if (!session) throw errors.unauthenticated('Sign in first: send your session token', { code: 'invalid_credential' });
      /** Allow and Deny end the page's session: nothing the person leaves behind signs in again. */
      const decided = async () => {
        if (pageSession) await identity.logout(session);
      };
      if (body.step === 'org') {
        const orgId = typeof body.org_id === 'string' ? body.org_id : '';
        if (!UUID_RE.test(orgId) || !(await identity.memberPermissions(orgId, session.user_id))) throw errors.notFound('Organization');
        await identity.switchOrganization(session, orgId);
        return consent(request, reply, title, checked, authorize, token);
      }
      if (body.decision !== 'allow') {
        await decided();
        return back({ error: 'access_denied', error_description: 'The user denied the request' });
      }

      const orgId = typeof body.org_id === 'string' && body.org_id.trim() ? body.org_id.trim() : session.org_id;
      if (!orgId || !UUID_RE.test(orgId))
        throw errors.validation('org_id must be the uuid of one of your organizations', { code: 'validation_failed' });
      const permissions = await identity.memberPermissions(orgId, session.user_id);
      if (!permissions) throw errors.notFound('Organization');
      const rawFolders = body.folder_ids;
      const folders = (
        Array.isArray(rawFolders) ? rawFolders.map(String) : typeof rawFolders === 'string' ? rawFolders.split(/[\s,]+/) : []
      )
        .map((f) => f.trim())
        .filter(Boolean);
      if (folders.some((f) => !UUID_RE.test(f)) || folders.length > 50) {
        throw errors.validation('folder_ids must be at most 50 folder uuids', { code: 'validation_failed' });
      }
      // Folders ticked on the page are those of the organization shown there.
      if (folders.length > 0 && typeof body.shown_org_id === 'string' && body.shown_org_id !== orgId) {
        return consent(request, reply, title, checked, authorize, token, 'Show this organization’s folders before choosing among them.');
      }
      // As for an API key's scope: folders of this organization, each named when it is not one.
      if (folders.length > 0 && deps.kbTree) {
        await checkFolderScope(
          deps.kbTree,
          { org_id: orgId, principal: { type: 'user', id: session.user_id }, permissions, folder_scope: null, request_id: request.id },
          folders,
        );
      }
      const code = await oauth.issueCode(
        req,
        { org_id: orgId, user_id: session.user_id, folder_scope: folders.length > 0 ? folders : null },
        resourcesOf(request),
      );
      await decided();
      return back({ code });
    });

    app.post('/oauth/token', { config: none }, async (request, reply) => {
      const body = request.body && typeof request.body === 'object' ? (request.body as Record<string, unknown>) : {};
      try {
        const tokens =
          body.grant_type === 'authorization_code'
            ? await oauth.exchangeCode(body, resourcesOf(request))
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

const MAX_FOLDERS = 60;
/** How long the consent page's own session lives (it ends with Allow or Deny before that). */
export const CONSENT_SESSION_TTL_SECONDS = 600;

/** The folders of the session's organization, two levels deep, as the REST tree gives them to that user. */
async function foldersOf(app: FastifyInstance, token: string): Promise<{ folders: FolderChoice[]; cut: boolean }> {
  interface Node {
    kb_node_id: string;
    type: string;
    name: string;
  }
  const get = async (path: string) => {
    const res = await app.inject({ method: 'GET', url: `/api/v1${path}`, headers: { authorization: `Bearer ${token}` } });
    return res.statusCode === 200 ? res.json<{ children: Node[]; children_total: number }>() : undefined;
  };
  const top = await get('/org/kb/tree?limit=100');
  if (!top) return { folders: [], cut: false };
  const folders: FolderChoice[] = [];
  let cut = top.children_total > top.children.length;
  for (const folder of top.children.filter((c) => c.type === 'folder')) {
    if (folders.length >= MAX_FOLDERS) {
      cut = true;
      break;
    }
    folders.push({ kb_node_id: folder.kb_node_id, name: folder.name, depth: 0 });
    const inner = await get(`/org/kb/nodes/${folder.kb_node_id}?limit=100`);
    for (const sub of inner?.children.filter((c) => c.type === 'folder') ?? [])
      folders.push({ kb_node_id: sub.kb_node_id, name: sub.name, depth: 1 });
  }
  return { folders: folders.slice(0, MAX_FOLDERS), cut: cut || folders.length > MAX_FOLDERS };
}
