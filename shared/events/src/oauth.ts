import { Type } from '@sinclair/typebox';
import { defineEvent, type EventData, type EventOf } from './define.js';
import { topics } from './topics.js';

/**
 * The gateway's OAuth 2.1 authorization server for MCP assistants: clients
 * (dynamic registration), one-time authorization codes, grants and their
 * rotating refresh-token family. Only hashes of codes and tokens are recorded.
 * Internal: they never leave the gateway.
 */
const gw = topics.gateway;
const Uuid = Type.String({ format: 'uuid' });
const Timestamp = Type.String({ format: 'date-time' });
const Hash = Type.String({ pattern: '^[0-9a-f]{64}$', description: 'SHA-256 (hex) of a code or token' });
const Id = Type.String({ pattern: '^[0-9a-f]{32}$' });
const FolderScope = Type.Union([Type.Array(Uuid, { maxItems: 50 }), Type.Null()]);

export const oauthClientRegistered = defineEvent(
  gw,
  'oauth.client_registered',
  1,
  Type.Object({
    client_id: Id,
    client_name: Type.String({ minLength: 1, maxLength: 200 }),
    redirect_uris: Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), { minItems: 1, maxItems: 10 }),
    at: Timestamp,
  }),
  { internal: true },
);
/** A client that completed no flow within its time was removed (registration is anonymous: abandoned ones do not pile up). */
export const oauthClientExpired = defineEvent(gw, 'oauth.client_expired', 1, Type.Object({ client_id: Id, at: Timestamp }), {
  internal: true,
});
/** A signed-in user consented: a one-time code bound to the client, redirect URI, PKCE challenge, organization and folders. */
export const oauthCodeIssued = defineEvent(
  gw,
  'oauth.code_issued',
  1,
  Type.Object({
    code_hash: Hash,
    client_id: Id,
    redirect_uri: Type.String({ minLength: 1 }),
    code_challenge: Type.String({ pattern: '^[A-Za-z0-9_-]{43}$' }),
    org_id: Uuid,
    user_id: Uuid,
    folder_scope: FolderScope,
    resource: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, description: 'RFC 8707: the resource server the token is for' })),
    expires_at: Timestamp,
    at: Timestamp,
  }),
  { internal: true },
);
/** The code was presented: spent, whatever the exchange's outcome. */
export const oauthCodeRedeemed = defineEvent(gw, 'oauth.code_redeemed', 1, Type.Object({ code_hash: Hash, at: Timestamp }), {
  internal: true,
});
export const oauthGrantCreated = defineEvent(
  gw,
  'oauth.grant_created',
  1,
  Type.Object({
    grant_id: Id,
    client_id: Id,
    org_id: Uuid,
    user_id: Uuid,
    folder_scope: FolderScope,
    resource: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, description: 'RFC 8707: the resource server the token is for' })),
    code_hash: Hash,
    at: Timestamp,
  }),
  { internal: true },
);
/** A new access token and the next refresh token of the grant's family (the previous one is spent). */
export const oauthTokensIssued = defineEvent(
  gw,
  'oauth.tokens_issued',
  1,
  Type.Object({
    grant_id: Id,
    access_hash: Hash,
    access_expires_at: Timestamp,
    refresh_hash: Hash,
    refresh_expires_at: Timestamp,
    at: Timestamp,
  }),
  { internal: true },
);
export const oauthAccessTokenRevoked = defineEvent(
  gw,
  'oauth.access_token_revoked',
  1,
  Type.Object({ grant_id: Id, access_hash: Hash, at: Timestamp }),
  { internal: true },
);
/**
 * The grant ends: revoked by its client (RFC 7009), a spent refresh token of
 * its family was presented again (refresh_reuse), the code it came from was
 * presented again (code_reuse), or its user left the organization (member_removed).
 */
export const oauthGrantRevoked = defineEvent(
  gw,
  'oauth.grant_revoked',
  1,
  Type.Object({
    grant_id: Id,
    reason: Type.Union([
      Type.Literal('revoked'),
      Type.Literal('refresh_reuse'),
      Type.Literal('code_reuse'),
      Type.Literal('member_removed'),
    ]),
    at: Timestamp,
  }),
  { internal: true },
);

export const oauthEvents = [
  oauthClientRegistered,
  oauthClientExpired,
  oauthCodeIssued,
  oauthCodeRedeemed,
  oauthGrantCreated,
  oauthTokensIssued,
  oauthAccessTokenRevoked,
  oauthGrantRevoked,
];

/** Every OAuth event (clients, codes, grants, tokens). */
export type OAuthEvent = EventOf<(typeof oauthEvents)[number]>;

export type OAuthClientRegistered = EventData<typeof oauthClientRegistered>;
export type OAuthClientExpired = EventData<typeof oauthClientExpired>;
export type OAuthCodeIssued = EventData<typeof oauthCodeIssued>;
export type OAuthCodeRedeemed = EventData<typeof oauthCodeRedeemed>;
export type OAuthGrantCreated = EventData<typeof oauthGrantCreated>;
export type OAuthTokensIssued = EventData<typeof oauthTokensIssued>;
export type OAuthAccessTokenRevoked = EventData<typeof oauthAccessTokenRevoked>;
export type OAuthGrantRevoked = EventData<typeof oauthGrantRevoked>;
