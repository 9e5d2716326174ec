import { describe, expectTypeOf, it } from 'vitest';
import { apiKeyDecider } from './api-key.js';
import { creditsDecider } from './credits.js';
import { oauthClientDecider, oauthCodeDecider, oauthGrantDecider } from './oauth.js';
import { organizationDecider } from './organization.js';
import { sessionDecider } from './session.js';

/**
 * Type-level checks (they fail at compile time, in `npm run typecheck`): each
 * stream's decider narrows `event.data` by `event.type`, so a field renamed in
 * the catalogue breaks the code that reads it instead of reading undefined.
 */

type StreamEvent<D extends { evolve: (...args: any[]) => unknown }> = Parameters<D['evolve']>[1];

describe('gateway stream events (type-level)', () => {
  it('credits: credits.granted carries amount', () => {
    const read = (e: StreamEvent<typeof creditsDecider>) => {
      if (e.type !== 'credits.granted') return;
      expectTypeOf(e.data.amount).toEqualTypeOf<number>();
      // @ts-expect-error a field credits.granted does not have
      void e.data.amount_renamed;
    };
    expectTypeOf(read).toBeFunction();
  });
  it('session: session.started carries user_id', () => {
    const read = (e: StreamEvent<typeof sessionDecider>) => {
      if (e.type !== 'session.started') return;
      expectTypeOf(e.data.user_id).toEqualTypeOf<string>();
      // @ts-expect-error a field session.started does not have
      void e.data.user_id_renamed;
    };
    expectTypeOf(read).toBeFunction();
  });
  it('api key: api_key.created carries org_id', () => {
    const read = (e: StreamEvent<typeof apiKeyDecider>) => {
      if (e.type !== 'api_key.created') return;
      expectTypeOf(e.data.org_id).toEqualTypeOf<string>();
      // @ts-expect-error a field api_key.created does not have
      void e.data.org_id_renamed;
    };
    expectTypeOf(read).toBeFunction();
  });
  it('oauth client: oauth.client_registered carries client_id', () => {
    const read = (e: StreamEvent<typeof oauthClientDecider>) => {
      if (e.type !== 'oauth.client_registered') return;
      expectTypeOf(e.data.client_id).toEqualTypeOf<string>();
      // @ts-expect-error a field oauth.client_registered does not have
      void e.data.client_id_renamed;
    };
    expectTypeOf(read).toBeFunction();
  });
  it('oauth code: oauth.code_issued carries redirect_uri', () => {
    const read = (e: StreamEvent<typeof oauthCodeDecider>) => {
      if (e.type !== 'oauth.code_issued') return;
      expectTypeOf(e.data.redirect_uri).toEqualTypeOf<string>();
      // @ts-expect-error a field oauth.code_issued does not have
      void e.data.redirect_uri_renamed;
    };
    expectTypeOf(read).toBeFunction();
  });
  it('oauth grant: oauth.tokens_issued carries refresh_hash', () => {
    const read = (e: StreamEvent<typeof oauthGrantDecider>) => {
      if (e.type !== 'oauth.tokens_issued') return;
      expectTypeOf(e.data.refresh_hash).toEqualTypeOf<string>();
      // @ts-expect-error a field oauth.tokens_issued does not have
      void e.data.refresh_hash_renamed;
    };
    expectTypeOf(read).toBeFunction();
  });
  it('organization: role.created carries permissions', () => {
    const read = (e: StreamEvent<typeof organizationDecider>) => {
      if (e.type !== 'role.created') return;
      expectTypeOf(e.data.permissions).toEqualTypeOf<string[]>();
      // @ts-expect-error a field role.created does not have
      void e.data.permissions_renamed;
    };
    expectTypeOf(read).toBeFunction();
  });
});
