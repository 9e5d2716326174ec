import { errors } from '@kb/platform';
import type { Decider } from '@kb/eventsourcing';
import type { EventsNamed } from '@kb/events';

/**
 * OAuth 2.1 state as event-sourced aggregates (DESIGN section 2's decider
 * shape): a registered client, a one-time authorization code, and a grant
 * (one user's consent for one client in one organization) with its rotating
 * refresh-token family. Only hashes of codes and tokens are ever recorded.
 */

export const oauthClientStream = (clientId: string) => `oauth-client-${clientId}`;
export const oauthCodeStream = (codeHash: string) => `oauth-code-${codeHash}`;
export const oauthGrantStream = (grantId: string) => `oauth-grant-${grantId}`;

export interface OAuthClientState {
  status: 'new' | 'registered' | 'expired';
}
export type OAuthClientCommand =
  | { type: 'register'; client_id: string; client_name: string; redirect_uris: string[]; at: string }
  /** A client that never completed a flow is removed; an expired or unknown one stays as it is. */
  | { type: 'expire'; client_id: string; at: string };

export const oauthClientDecider: Decider<OAuthClientCommand, OAuthClientState, EventsNamed<'oauth'>> = {
  initialState: () => ({ status: 'new' }),
  evolve: (state, event) =>
    event.type === 'oauth.client_registered'
      ? { status: 'registered' }
      : event.type === 'oauth.client_expired'
        ? { status: 'expired' }
        : state,
  decide(command, state) {
    if (command.type === 'expire') {
      return state.status === 'registered'
        ? [{ type: 'oauth.client_expired', data: { client_id: command.client_id, at: command.at } }]
        : [];
    }
    if (state.status !== 'new') throw errors.conflict('OAuth client already registered');
    const { type: _t, ...data } = command;
    return [{ type: 'oauth.client_registered', data }];
  },
};

/** What an authorization code is bound to: the client, redirect URI, PKCE challenge, organization, user and folders. */
export interface OAuthCodeFields {
  client_id: string;
  redirect_uri: string;
  code_challenge: string;
  org_id: string;
  user_id: string;
  folder_scope: string[] | null;
  /** RFC 8707: the resource server the tokens are for (any when absent). */
  resource?: string;
  expires_at: string;
}
export interface OAuthCodeState extends OAuthCodeFields {
  status: 'new' | 'issued' | 'redeemed';
}
export type OAuthCodeCommand =
  ({ type: 'issue'; code_hash: string; at: string } & OAuthCodeFields) | { type: 'redeem'; code_hash: string; at: string };

export const oauthCodeDecider: Decider<OAuthCodeCommand, OAuthCodeState, EventsNamed<'oauth'>> = {
  initialState: () => ({
    status: 'new',
    client_id: '',
    redirect_uri: '',
    code_challenge: '',
    org_id: '',
    user_id: '',
    folder_scope: null,
    expires_at: '',
  }),
  evolve(state, event) {
    switch (event.type) {
      case 'oauth.code_issued': {
        const d = event.data;
        return {
          status: 'issued',
          client_id: d.client_id,
          redirect_uri: d.redirect_uri,
          code_challenge: d.code_challenge,
          org_id: d.org_id,
          user_id: d.user_id,
          folder_scope: d.folder_scope,
          ...(d.resource !== undefined && { resource: d.resource }),
          expires_at: d.expires_at,
        };
      }
      case 'oauth.code_redeemed':
        return { ...state, status: 'redeemed' };
      default:
        return state;
    }
  },
  decide(command, state) {
    switch (command.type) {
      case 'issue': {
        if (state.status !== 'new') throw errors.conflict('Authorization code already issued');
        const { type: _t, ...data } = command;
        return [{ type: 'oauth.code_issued', data }];
      }
      case 'redeem':
        // One use: an unknown, spent or expired code is refused with nothing recorded.
        if (state.status !== 'issued' || Date.parse(state.expires_at) <= Date.parse(command.at))
          throw errors.validation('Unknown, used or expired code', { code: 'invalid_grant' });
        return [{ type: 'oauth.code_redeemed', data: { code_hash: command.code_hash, at: command.at } }];
      default: {
        const never: never = command;
        throw new Error(`Unknown command ${JSON.stringify(never)}`);
      }
    }
  },
};

export interface OAuthGrantState {
  status: 'new' | 'active' | 'revoked';
  client_id: string;
  /** The live refresh token of the family. */
  refresh_hash: string;
  refresh_expires_at: string;
  /** Every earlier refresh token of the family (rotated away): presenting one of these again is reuse. */
  spent_refresh_hashes: string[];
}
interface Tokens {
  access_hash: string;
  access_expires_at: string;
  refresh_hash: string;
  refresh_expires_at: string;
}
export type OAuthGrantCommand =
  | ({
      type: 'create';
      grant_id: string;
      client_id: string;
      org_id: string;
      user_id: string;
      folder_scope: string[] | null;
      resource?: string;
      code_hash: string;
      at: string;
    } & Tokens)
  /** Rotation: the presented refresh token's hash; a spent one of the family revokes it, any other is refused. */
  | ({ type: 'refresh'; grant_id: string; client_id: string; presented_hash: string; at: string } & Tokens)
  | { type: 'revoke'; grant_id: string; at: string; reason?: 'revoked' | 'code_reuse' | 'member_removed' }
  | { type: 'revoke_access'; grant_id: string; access_hash: string; at: string };

export const oauthGrantDecider: Decider<OAuthGrantCommand, OAuthGrantState, EventsNamed<'oauth'>> = {
  initialState: () => ({ status: 'new', client_id: '', refresh_hash: '', refresh_expires_at: '', spent_refresh_hashes: [] }),
  evolve(state, event) {
    const { type, data: d } = event;
    switch (type) {
      case 'oauth.grant_created':
        return { ...state, status: 'active', client_id: d.client_id };
      case 'oauth.tokens_issued':
        return {
          ...state,
          refresh_hash: d.refresh_hash,
          refresh_expires_at: d.refresh_expires_at,
          spent_refresh_hashes: state.refresh_hash ? [...state.spent_refresh_hashes, state.refresh_hash] : state.spent_refresh_hashes,
        };
      case 'oauth.grant_revoked':
        return { ...state, status: 'revoked' };
      default:
        return state;
    }
  },
  decide(command, state) {
    const tokens = (c: Tokens & { grant_id: string; at: string }) => ({
      type: 'oauth.tokens_issued',
      data: {
        grant_id: c.grant_id,
        access_hash: c.access_hash,
        access_expires_at: c.access_expires_at,
        refresh_hash: c.refresh_hash,
        refresh_expires_at: c.refresh_expires_at,
        at: c.at,
      },
    });
    switch (command.type) {
      case 'create': {
        if (state.status !== 'new') throw errors.conflict('Grant already exists');
        const { grant_id, client_id, org_id, user_id, folder_scope, resource, code_hash, at } = command;
        return [
          {
            type: 'oauth.grant_created',
            data: { grant_id, client_id, org_id, user_id, folder_scope, ...(resource !== undefined && { resource }), code_hash, at },
          },
          tokens(command),
        ];
      }
      case 'refresh':
        if (state.status !== 'active' || state.client_id !== command.client_id) return [];
        if (command.presented_hash !== state.refresh_hash) {
          // Reuse only when the token was issued to this family before: a forged one (the grant id is public) changes nothing.
          if (!state.spent_refresh_hashes.includes(command.presented_hash)) return [];
          return [{ type: 'oauth.grant_revoked', data: { grant_id: command.grant_id, reason: 'refresh_reuse', at: command.at } }];
        }
        if (Date.parse(state.refresh_expires_at) <= Date.parse(command.at)) return [];
        return [tokens(command)];
      case 'revoke':
        if (state.status !== 'active') return [];
        return [{ type: 'oauth.grant_revoked', data: { grant_id: command.grant_id, reason: command.reason ?? 'revoked', at: command.at } }];
      case 'revoke_access':
        if (state.status === 'new') return [];
        return [
          { type: 'oauth.access_token_revoked', data: { grant_id: command.grant_id, access_hash: command.access_hash, at: command.at } },
        ];
      default: {
        const never: never = command;
        throw new Error(`Unknown command ${JSON.stringify(never)}`);
      }
    }
  },
};
