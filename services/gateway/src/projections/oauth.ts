import type { Projection } from '@kb/eventsourcing';
import type { StoreTransaction } from '@kb/store';
import type { OAuthCodeFields } from '../domain/oauth.js';

/** Read models of the OAuth aggregates: what the authorization server and the token checks look up. */
export const OAUTH_CLIENTS = 'oauth_clients';
/** Live (issued, not yet redeemed) codes by hash. */
export const OAUTH_CODES = 'oauth_codes';
export const OAUTH_GRANTS = 'oauth_grants';
/** Access tokens by hash. */
export const OAUTH_ACCESS_TOKENS = 'oauth_access_tokens';

export interface OAuthClientDoc {
  id: string;
  client_name: string;
  redirect_uris: string[];
  created_at: string;
  /** When a grant was first made for it (a completed flow); null: never, and it expires. */
  used_at?: string | null;
}

export interface OAuthCodeDoc extends OAuthCodeFields {
  id: string;
}

export interface OAuthGrantDoc {
  id: string;
  client_id: string;
  org_id: string;
  user_id: string;
  folder_scope: string[] | null;
  /** RFC 8707: the resource server its tokens are for; null: any (a client that named none). */
  resource?: string | null;
  refresh_hash: string;
  refresh_expires_at: string;
  revoked_at: string | null;
  revoked_reason: 'revoked' | 'refresh_reuse' | 'code_reuse' | 'member_removed' | null;
  /** The authorization code it came from (a reused code revokes it). */
  code_hash?: string;
  created_at: string;
}

export interface OAuthAccessDoc {
  id: string;
  grant_id: string;
  expires_at: string;
}

async function update<T extends { id: string }>(tx: StoreTransaction, collection: string, id: string, change: (doc: T) => T) {
  const doc = await tx.get<T>(collection, id);
  if (doc) await tx.put(collection, change(doc));
}

export const oauthProjection: Projection = {
  name: 'oauth',
  collections: [OAUTH_CLIENTS, OAUTH_CODES, OAUTH_GRANTS, OAUTH_ACCESS_TOKENS],
  // The sweep of unused clients, a reused code's grants, and a removed member's grants.
  indexes: [
    { collection: OAUTH_CLIENTS, fields: ['used_at'] },
    { collection: OAUTH_GRANTS, fields: ['code_hash'] },
    { collection: OAUTH_GRANTS, fields: ['org_id', 'user_id'] },
  ],
  async apply(tx, event) {
    switch (event.type) {
      case 'oauth.client_registered': {
        const d = event.data;
        const doc: OAuthClientDoc = {
          id: d.client_id,
          client_name: d.client_name,
          redirect_uris: d.redirect_uris,
          created_at: d.at,
          used_at: null,
        };
        await tx.put(OAUTH_CLIENTS, doc);
        break;
      }
      case 'oauth.client_expired':
        await tx.delete(OAUTH_CLIENTS, event.data.client_id);
        break;
      case 'oauth.code_issued': {
        const d = event.data;
        const doc: OAuthCodeDoc = {
          id: d.code_hash,
          client_id: d.client_id,
          redirect_uri: d.redirect_uri,
          code_challenge: d.code_challenge,
          org_id: d.org_id,
          user_id: d.user_id,
          folder_scope: d.folder_scope,
          expires_at: d.expires_at,
        };
        await tx.put(OAUTH_CODES, doc);
        break;
      }
      case 'oauth.code_redeemed':
        await tx.delete(OAUTH_CODES, event.data.code_hash);
        break;
      case 'oauth.grant_created': {
        const d = event.data;
        const doc: OAuthGrantDoc = {
          id: d.grant_id,
          client_id: d.client_id,
          org_id: d.org_id,
          user_id: d.user_id,
          folder_scope: d.folder_scope,
          resource: d.resource ?? null,
          refresh_hash: '',
          refresh_expires_at: d.at,
          revoked_at: null,
          revoked_reason: null,
          code_hash: d.code_hash,
          created_at: d.at,
        };
        await tx.put(OAUTH_GRANTS, doc);
        await update<OAuthClientDoc>(tx, OAUTH_CLIENTS, d.client_id, (c) => (c.used_at ? c : { ...c, used_at: d.at }));
        break;
      }
      case 'oauth.tokens_issued': {
        const d = event.data;
        await update<OAuthGrantDoc>(tx, OAUTH_GRANTS, d.grant_id, (g) => ({
          ...g,
          refresh_hash: d.refresh_hash,
          refresh_expires_at: d.refresh_expires_at,
        }));
        await tx.put(OAUTH_ACCESS_TOKENS, { id: d.access_hash, grant_id: d.grant_id, expires_at: d.access_expires_at });
        break;
      }
      case 'oauth.access_token_revoked':
        await tx.delete(OAUTH_ACCESS_TOKENS, event.data.access_hash);
        break;
      case 'oauth.grant_revoked': {
        const d = event.data;
        await update<OAuthGrantDoc>(tx, OAUTH_GRANTS, d.grant_id, (g) => ({ ...g, revoked_at: d.at, revoked_reason: d.reason }));
        break;
      }
      default:
        break;
    }
  },
};
