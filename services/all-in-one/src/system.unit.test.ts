import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { ConfigError } from '@kb/platform';
import { checkSettings, defaultPublicBaseUrl, developmentDefaults, embeddedListenHost } from './system.js';

describe('the public base URL of hosted pages in the all-in-one', () => {
  it('follows the gateway port when PUBLIC_BASE_URL is not set', () => {
    assert.equal(defaultPublicBaseUrl({ PORT: '3000' }), 'http://localhost:3000');
    assert.equal(defaultPublicBaseUrl({ PORT: ' 8080 ' }), 'http://localhost:8080');
  });

  it('keeps a PUBLIC_BASE_URL that is set', () => {
    assert.equal(defaultPublicBaseUrl({ PORT: '3000', PUBLIC_BASE_URL: 'https://kb.example.com' }), 'https://kb.example.com');
  });

  it("takes the gateway's PUBLIC_URL when PUBLIC_BASE_URL is not set", () => {
    assert.equal(defaultPublicBaseUrl({ PORT: '3000', PUBLIC_URL: 'https://kb.example.com/' }), 'https://kb.example.com');
    assert.equal(
      defaultPublicBaseUrl({ PUBLIC_URL: 'https://kb.example.com', PUBLIC_BASE_URL: 'https://pages.example.com' }),
      'https://pages.example.com',
    );
  });

  it("leaves publishing's default when the port is unknown or not a port", () => {
    assert.equal(defaultPublicBaseUrl({}), undefined);
    assert.equal(defaultPublicBaseUrl({ PORT: '0' }), undefined);
    assert.equal(defaultPublicBaseUrl({ PORT: 'eighty' }), undefined);
  });
});

describe('the interface the all-in-one listens on', () => {
  it('is loopback unless HOST is set', () => {
    assert.equal(embeddedListenHost({}), '127.0.0.1');
    assert.equal(embeddedListenHost({ HOST: '' }), '127.0.0.1');
    assert.equal(embeddedListenHost({ HOST: '0.0.0.0' }), '0.0.0.0');
    assert.equal(embeddedListenHost({ HOST: '::1' }), '::1');
  });
});

describe('the settings of every service, checked before any starts', () => {
  const base = { ...developmentDefaults, INTERNAL_TOKEN: 'x'.repeat(32) };

  it('accepts the development defaults', () => {
    checkSettings(base);
  });

  it('names a bad value with the accepted ones, before anything listens', () => {
    assert.throws(
      () => checkSettings({ ...base, PORT: 'eighty' }),
      (err: unknown) => err instanceof ConfigError && /PORT="eighty" is invalid: expected a whole number/.test(err.message),
    );
    assert.throws(
      () => checkSettings({ ...base, SEARCH_FUSION: 'foo' }),
      (err: unknown) => err instanceof ConfigError && /SEARCH_FUSION="foo" is invalid: expected one of /.test(err.message),
    );
  });
});
