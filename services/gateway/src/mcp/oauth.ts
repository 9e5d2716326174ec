import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { isAppError, systemClock, type Clock } from '@kb/platform';
import type { Store } from '@kb/store';
import type { CommandBus } from '@kb/eventsourcing';
import { ACCESS_TOKEN_RE, REFRESH_TOKEN_RE } from './oauth-tokens.js';
import { NO_ORG } from '../app/identity.js';
import {
  oauthClientDecider,
  oauthClientStream,
  oauthCodeDecider,
  oauthCodeStream,
  oauthGrantDecider,
  oauthGrantStream,
} from '../domain/oauth.js';
import {
  OAUTH_ACCESS_TOKENS,
  OAUTH_CLIENTS,
  OAUTH_GRANTS,
  type OAuthAccessDoc,
  type OAuthClientDoc,
  type OAuthGrantDoc,
} from '../projections/oauth.js';

/**
 * The OAuth 2.1 authorization server for assistants (spec 5.3): dynamic client
 * registration (RFC 7591, public clients), authorization code with PKCE S256
 * only, short-lived access tokens, rotating refresh tokens (a reused one revokes
 * the grant), revocation (RFC 7009). A grant is one user's consent for one
 * client in one organization, optionally limited to knowledge-base folders.
 * Clients, codes, grants and token families are event-sourced (domain/oauth.ts,
 * events oauth.* in @kb/events, read models in projections/oauth.ts), so every
 * replica and a restarted gateway see the same state. Only hashes are recorded.
 */
export interface OAuthClient {
  id: string;
  client_name: string;
  redirect_uris: string[];
  created_at: string;
}

/** An RFC 6749 error: the token endpoint answers it as { error, error_description }. */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
  ) {
    super(description);
  }
}

export interface AuthorizeRequest {
  response_type?: string;
  client_id?: string;
  redirect_uri?: string;
  code_challenge?: string;
  code_challenge_method?: string;
  state?: string;
  scope?: string;
  resource?: string;
}

export interface TokenSet {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

export interface ResolvedGrant {
  grant_id: string;
  client_id: string;
  org_id: string;
  user_id: string;
  folder_scope: string[] | null;
  /** RFC 8707: the resource server its tokens are for; null: any. */
  resource: string | null;
}

/** A resource indicator as compared: the absolute URL without a trailing slash. */
export const normalizeResource = (uri: string) => uri.replace(/\/+$/, '');

/** RFC 8707 2: an absolute URI without a fragment. */
function resourceProblem(uri: string): string | undefined {
  try {
    const url = new URL(uri);
    return url.hash || uri.includes('#') ? 'resource must not have a fragment' : undefined;
  } catch {
    return 'resource must be an absolute URI';
  }
}

/** RFC 8707: this issuer issues tokens only for its own resource servers; undefined when no list is given. */
function foreignResource(uri: string, resources: readonly string[] | undefined): string | undefined {
  if (!resources || resources.map(normalizeResource).includes(normalizeResource(uri))) return undefined;
  return `resource must be one of this server's: ${resources.join(', ')}`;
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const CHALLENGE_RE = /^[A-Za-z0-9_-]{43}$/;
const VERIFIER_RE = /^[A-Za-z0-9._~-]{43,128}$/;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Registration is anonymous: what one client may record is small. */
export const MAX_REDIRECT_URIS = 5;
export const MAX_REDIRECT_URI_LENGTH = 512;

/** https anywhere, or http on the loopback (native assistants); never a fragment (RFC 6749 3.1.2). */
function redirectUriProblem(uri: unknown): string | undefined {
  if (typeof uri !== 'string' || uri.length > MAX_REDIRECT_URI_LENGTH)
    return `must be a URL of at most ${MAX_REDIRECT_URI_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.hash) return 'must not have a fragment';
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url.protocol === 'https:' || (url.protocol === 'http:' && loopback)) return undefined;
  if (url.protocol === 'http:' || url.protocol === 'javascript:' || url.protocol === 'data:') return 'must be https (or http on localhost)';
  // Private-use schemes of native apps (RFC 8252 7.1), e.g. com.example.app:/callback.
  return /^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+:$/.test(url.protocol) ? undefined : 'must be https (or http on localhost)';
}

export function createOAuthService(deps: {
  store: Store;
  commands: CommandBus;
  clock?: Clock;
  random?: (bytes: number) => Buffer;
  accessTtlSeconds: number;
  refreshTtlSeconds: number;
  codeTtlSeconds?: number;
  /** Whether the user still belongs to the organization (a grant of someone who left is revoked at its next refresh). */
  isMember?: (orgId: string, userId: string) => Promise<boolean>;
}) {
  const { store, commands } = deps;
  const clock = deps.clock ?? systemClock;
  const random = deps.random ?? randomBytes;
  const now = () => clock.now().getTime();
  const iso = (ms: number) => new Date(ms).toISOString();
  const codeTtlMs = (deps.codeTtlSeconds ?? 60) * 1000;

  /** A new access token and the next refresh token of a grant's family: the tokens (once) and their hashes (recorded). */
  function mint(grantId: string) {
    const access = `kbat_${grantId}_${random(32).toString('base64url')}`;
    const refresh = `kbrt_${grantId}_${random(32).toString('base64url')}`;
    const at = now();
    const set: TokenSet = {
      access_token: access,
      token_type: 'Bearer',
      expires_in: deps.accessTtlSeconds,
      refresh_token: refresh,
      scope: 'mcp',
    };
    const hashes = {
      access_hash: sha256(access),
      access_expires_at: iso(at + deps.accessTtlSeconds * 1000),
      refresh_hash: sha256(refresh),
      refresh_expires_at: iso(at + deps.refreshTtlSeconds * 1000),
    };
    return { set, hashes };
  }

  async function revokeGrant(grant: OAuthGrantDoc, reason: 'revoked' | 'code_reuse' | 'member_removed') {
    await commands.transaction({ metadata: { org_id: grant.org_id, actor: `oauth-client:${grant.client_id}` } }, (s) =>
      s.execute(oauthGrantDecider, oauthGrantStream(grant.id), {
        type: 'revoke',
        grant_id: grant.id,
        reason,
        at: clock.now().toISOString(),
      }),
    );
  }

  /** OAuth 2.1 4.1.3: a code presented again revokes the tokens already issued from it (someone else may hold them). */
  async function revokeGrantsOfCode(codeHash: string) {
    for (const grant of await store.find<OAuthGrantDoc>(OAUTH_GRANTS, { where: { code_hash: codeHash, revoked_at: null } }))
      await revokeGrant(grant, 'code_reuse');
  }

  return {
    /** A member left the organization: every grant they gave in it ends (it does not revive if they come back). */
    async revokeGrantsOfMember(orgId: string, userId: string): Promise<number> {
      const grants = await store.find<OAuthGrantDoc>(OAUTH_GRANTS, { where: { org_id: orgId, user_id: userId, revoked_at: null } });
      for (const grant of grants) await revokeGrant(grant, 'member_removed');
      return grants.length;
    },

    /** RFC 7591: a public client (no secret), its redirect URIs matched exactly later. */
    async register(input: Record<string, unknown>): Promise<OAuthClient & Record<string, unknown>> {
      const uris = input.redirect_uris;
      if (!Array.isArray(uris) || uris.length === 0 || uris.length > MAX_REDIRECT_URIS) {
        throw new OAuthError('invalid_redirect_uri', `redirect_uris must list 1 to ${MAX_REDIRECT_URIS} URLs`);
      }
      for (const uri of uris) {
        const problem = redirectUriProblem(uri);
        if (problem) throw new OAuthError('invalid_redirect_uri', `redirect_uri ${String(uri).slice(0, 200)} ${problem}`);
      }
      const method = input.token_endpoint_auth_method ?? 'none';
      if (method !== 'none') throw new OAuthError('invalid_client_metadata', 'Only public clients: token_endpoint_auth_method none');
      for (const [field, allowed] of [
        ['grant_types', ['authorization_code', 'refresh_token']],
        ['response_types', ['code']],
      ] as const) {
        const v = input[field];
        if (v !== undefined && (!Array.isArray(v) || v.some((x) => !(allowed as readonly string[]).includes(x as string)))) {
          throw new OAuthError('invalid_client_metadata', `${field} may only hold ${allowed.join(', ')}`);
        }
      }
      const name = input.client_name;
      if (name !== undefined && (typeof name !== 'string' || name.length > 100)) {
        throw new OAuthError('invalid_client_metadata', 'client_name must be a string of at most 100 characters');
      }
      const client: OAuthClient = {
        id: random(16).toString('hex'),
        client_name: (name as string | undefined)?.trim() || 'MCP client',
        redirect_uris: uris as string[],
        created_at: clock.now().toISOString(),
      };
      await commands.transaction({ metadata: { org_id: NO_ORG, actor: `oauth-client:${client.id}` } }, (s) =>
        s.execute(oauthClientDecider, oauthClientStream(client.id), {
          type: 'register',
          client_id: client.id,
          client_name: client.client_name,
          redirect_uris: client.redirect_uris,
          at: client.created_at,
        }),
      );
      return {
        ...client,
        client_id: client.id,
        client_id_issued_at: Math.floor(now() / 1000),
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      };
    },

    /**
     * Removes clients registered more than maxAgeSeconds ago that never completed
     * a flow (no grant was made for them). Decided on each client's stream, so
     * replicas sweeping at once expire each client once. Returns how many went.
     */
    async expireUnusedClients(maxAgeSeconds: number): Promise<number> {
      const cutoff = now() - maxAgeSeconds * 1000;
      let expired = 0;
      for (;;) {
        const unused = await store.find<OAuthClientDoc>(OAUTH_CLIENTS, {
          where: { used_at: null },
          sort: [{ field: 'created_at', order: 'asc' }],
          limit: 200,
        });
        const due = unused.filter((c) => Date.parse(c.created_at) <= cutoff);
        for (const client of due) {
          await commands.transaction({ metadata: { org_id: NO_ORG, actor: 'oauth-client-sweeper' } }, (s) =>
            s.execute(oauthClientDecider, oauthClientStream(client.id), { type: 'expire', client_id: client.id, at: iso(now()) }),
          );
        }
        expired += due.length;
        if (due.length < 200) return expired;
      }
    },

    /**
     * Checks an authorization request. Problems with the client or the redirect
     * URI are shown to the user (never redirected); the rest go back to the
     * client's redirect URI as error parameters.
     */
    async checkAuthorize(
      req: AuthorizeRequest,
      resources?: readonly string[],
    ): Promise<{ client: OAuthClient; redirect_uri: string; redirectError?: OAuthError }> {
      const client = typeof req.client_id === 'string' ? await store.get<OAuthClientDoc>(OAUTH_CLIENTS, req.client_id) : undefined;
      if (!client) throw new OAuthError('invalid_client', 'Unknown client_id');
      if (typeof req.redirect_uri !== 'string' || !client.redirect_uris.includes(req.redirect_uri)) {
        throw new OAuthError('invalid_request', 'redirect_uri does not exactly match one registered for this client');
      }
      const result = { client, redirect_uri: req.redirect_uri };
      if (req.response_type !== 'code')
        return { ...result, redirectError: new OAuthError('unsupported_response_type', 'response_type must be code') };
      if (req.code_challenge_method !== 'S256') {
        return { ...result, redirectError: new OAuthError('invalid_request', 'PKCE with code_challenge_method S256 is required') };
      }
      if (typeof req.code_challenge !== 'string' || !CHALLENGE_RE.test(req.code_challenge)) {
        return {
          ...result,
          redirectError: new OAuthError('invalid_request', 'code_challenge must be a base64url SHA-256 (43 characters)'),
        };
      }
      const problem = req.resource === undefined ? undefined : (resourceProblem(req.resource) ?? foreignResource(req.resource, resources));
      if (problem) return { ...result, redirectError: new OAuthError('invalid_target', problem) };
      return result;
    },

    /** The user consented: a one-time code bound to the client, redirect URI, PKCE challenge, organization and folders. */
    async issueCode(
      req: AuthorizeRequest,
      consent: { org_id: string; user_id: string; folder_scope: string[] | null },
      resources?: readonly string[],
    ): Promise<string> {
      const { client, redirect_uri, redirectError } = await this.checkAuthorize(req, resources);
      if (redirectError) throw redirectError;
      if (consent.folder_scope && (consent.folder_scope.length > 50 || consent.folder_scope.some((f) => !UUID_RE.test(f)))) {
        throw new OAuthError('invalid_request', 'folder ids must be at most 50 uuids');
      }
      const code = random(32).toString('base64url');
      const codeHash = sha256(code);
      await commands.transaction({ metadata: { org_id: consent.org_id, actor: `user:${consent.user_id}` } }, (s) =>
        s.execute(oauthCodeDecider, oauthCodeStream(codeHash), {
          type: 'issue',
          code_hash: codeHash,
          client_id: client.id,
          redirect_uri,
          code_challenge: req.code_challenge!,
          org_id: consent.org_id,
          user_id: consent.user_id,
          folder_scope: consent.folder_scope,
          ...(req.resource !== undefined && { resource: normalizeResource(req.resource) }),
          expires_at: iso(now() + codeTtlMs),
          at: clock.now().toISOString(),
        }),
      );
      return code;
    },

    /** authorization_code: the code once, with the verifier of its challenge, by its client, to its redirect URI. */
    async exchangeCode(input: Record<string, unknown>, resources?: readonly string[]): Promise<TokenSet> {
      const { code, client_id, redirect_uri, code_verifier } = input;
      if (typeof code !== 'string' || typeof client_id !== 'string')
        throw new OAuthError('invalid_request', 'code and client_id are required');
      if (typeof code_verifier !== 'string' || !VERIFIER_RE.test(code_verifier)) {
        throw new OAuthError('invalid_request', 'code_verifier (43 to 128 characters) is required');
      }
      if (input.resource !== undefined) {
        const problem =
          typeof input.resource === 'string'
            ? (resourceProblem(input.resource) ?? foreignResource(input.resource, resources))
            : 'resource must be a string';
        if (problem) throw new OAuthError('invalid_target', problem);
      }
      const codeHash = sha256(code);
      const { state: pending } = await commands.transaction({ metadata: { org_id: NO_ORG } }, (s) =>
        s.load(oauthCodeDecider, oauthCodeStream(codeHash)),
      );
      if (pending.status === 'redeemed') await revokeGrantsOfCode(codeHash);
      if (pending.status !== 'issued') throw new OAuthError('invalid_grant', 'Unknown, used or expired code');
      const grantId = random(16).toString('hex');
      const { set, hashes } = mint(grantId);
      let outcome: OAuthError | undefined;
      try {
        await commands.transaction({ metadata: { org_id: pending.org_id, actor: `oauth-client:${client_id}` } }, async (s) => {
          // One use only, whatever happens next (so the failures below are kept, not thrown: the redemption commits).
          const { state } = await s.execute(oauthCodeDecider, oauthCodeStream(codeHash), {
            type: 'redeem',
            code_hash: codeHash,
            at: clock.now().toISOString(),
          });
          if (state.client_id !== client_id) return (outcome = new OAuthError('invalid_grant', 'The code was issued to another client'));
          if (state.redirect_uri !== redirect_uri)
            return (outcome = new OAuthError('invalid_grant', 'redirect_uri does not match the authorization request'));
          const expected = Buffer.from(state.code_challenge);
          const actual = Buffer.from(createHash('sha256').update(code_verifier).digest('base64url'));
          if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) {
            return (outcome = new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge'));
          }
          // RFC 8707: a resource named at the token endpoint is the one consented to.
          const asked = typeof input.resource === 'string' ? normalizeResource(input.resource) : undefined;
          if (asked !== undefined && state.resource !== undefined && asked !== state.resource)
            return (outcome = new OAuthError('invalid_target', 'resource is not the one of the authorization request'));
          const resource = state.resource ?? asked;
          return s.execute(oauthGrantDecider, oauthGrantStream(grantId), {
            type: 'create',
            grant_id: grantId,
            client_id: state.client_id,
            org_id: state.org_id,
            user_id: state.user_id,
            folder_scope: state.folder_scope,
            ...(resource !== undefined && { resource }),
            code_hash: codeHash,
            at: clock.now().toISOString(),
            ...hashes,
          });
        });
      } catch (err) {
        // Spent (by a request racing this one: reuse) or expired between the look and the redemption.
        if (isAppError(err) && err.code === 'invalid_grant') {
          await revokeGrantsOfCode(codeHash);
          throw new OAuthError('invalid_grant', 'Unknown, used or expired code');
        }
        throw err;
      }
      if (outcome) throw outcome;
      return set;
    },

    /** refresh_token: rotates; presenting a refresh token already rotated away revokes the whole grant (theft detection). */
    async refresh(input: Record<string, unknown>): Promise<TokenSet> {
      const { refresh_token, client_id } = input;
      if (typeof refresh_token !== 'string' || typeof client_id !== 'string') {
        throw new OAuthError('invalid_request', 'refresh_token and client_id are required');
      }
      const grantId = REFRESH_TOKEN_RE.exec(refresh_token)?.[1];
      if (!grantId) throw new OAuthError('invalid_grant', 'Unknown refresh token');
      const grant = await store.get<OAuthGrantDoc>(OAUTH_GRANTS, grantId);
      if (!grant || grant.revoked_at !== null || grant.client_id !== client_id)
        throw new OAuthError('invalid_grant', 'Unknown, expired or revoked refresh token');
      if (deps.isMember && !(await deps.isMember(grant.org_id, grant.user_id))) {
        await revokeGrant(grant, 'member_removed');
        throw new OAuthError('invalid_grant', 'The user no longer belongs to the organization: the grant is revoked');
      }
      const { set, hashes } = mint(grantId);
      const { events } = await commands.transaction({ metadata: { org_id: grant.org_id, actor: `oauth-client:${client_id}` } }, (s) =>
        s.execute(oauthGrantDecider, oauthGrantStream(grantId), {
          type: 'refresh',
          grant_id: grantId,
          client_id,
          presented_hash: sha256(refresh_token),
          at: clock.now().toISOString(),
          ...hashes,
        }),
      );
      if (events[0]?.type === 'oauth.grant_revoked')
        throw new OAuthError('invalid_grant', 'Refresh token already used: the grant is revoked');
      if (events[0]?.type !== 'oauth.tokens_issued') throw new OAuthError('invalid_grant', 'Unknown, expired or revoked refresh token');
      return set;
    },

    /** RFC 7009: a refresh token revokes its grant (and so every access token of it); an access token only itself. Unknown tokens are fine. */
    async revoke(token: unknown): Promise<void> {
      if (typeof token !== 'string' || !token) throw new OAuthError('invalid_request', 'token is required');
      const refreshGrant = REFRESH_TOKEN_RE.exec(token)?.[1];
      if (refreshGrant) {
        const grant = await store.get<OAuthGrantDoc>(OAUTH_GRANTS, refreshGrant);
        if (!grant || grant.refresh_hash !== sha256(token) || grant.revoked_at !== null) return;
        await commands.transaction({ metadata: { org_id: grant.org_id, actor: `oauth-client:${grant.client_id}` } }, (s) =>
          s.execute(oauthGrantDecider, oauthGrantStream(grant.id), { type: 'revoke', grant_id: grant.id, at: clock.now().toISOString() }),
        );
        return;
      }
      if (!ACCESS_TOKEN_RE.test(token)) return;
      const access = await store.get<OAuthAccessDoc>(OAUTH_ACCESS_TOKENS, sha256(token));
      const grant = access && (await store.get<OAuthGrantDoc>(OAUTH_GRANTS, access.grant_id));
      if (!access || !grant) return;
      await commands.transaction({ metadata: { org_id: grant.org_id, actor: `oauth-client:${grant.client_id}` } }, (s) =>
        s.execute(oauthGrantDecider, oauthGrantStream(grant.id), {
          type: 'revoke_access',
          grant_id: grant.id,
          access_hash: access.id,
          at: clock.now().toISOString(),
        }),
      );
    },

    /** The grant behind a live access token; undefined when unknown, expired or revoked. */
    async resolveAccessToken(token: string): Promise<ResolvedGrant | undefined> {
      if (!ACCESS_TOKEN_RE.test(token)) return undefined;
      const access = await store.get<OAuthAccessDoc>(OAUTH_ACCESS_TOKENS, sha256(token));
      if (!access || Date.parse(access.expires_at) <= now()) return undefined;
      const grant = await store.get<OAuthGrantDoc>(OAUTH_GRANTS, access.grant_id);
      if (!grant || grant.revoked_at !== null || !token.startsWith(`kbat_${grant.id}_`)) return undefined;
      return {
        grant_id: grant.id,
        client_id: grant.client_id,
        org_id: grant.org_id,
        user_id: grant.user_id,
        folder_scope: grant.folder_scope,
        resource: grant.resource ?? null,
      };
    },
  };
}

export type OAuthService = ReturnType<typeof createOAuthService>;
