import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { ownBaseUrl } from './public-url.js';

const request = (host: string | undefined, localPort = 8080) =>
  ({ headers: host === undefined ? {} : { host }, raw: { socket: { localPort } } }) as unknown as Parameters<typeof ownBaseUrl>[0];

describe('the server’s own URL', () => {
  it('is the configured one whatever Host says', () => {
    assert.equal(ownBaseUrl(request('evil.example'), 'https://kb.example.com/'), 'https://kb.example.com');
  });

  it('without configuration: a loopback alias of the listening port, else the loopback default; never another Host', () => {
    assert.equal(ownBaseUrl(request('localhost:8080')), 'http://localhost:8080');
    assert.equal(ownBaseUrl(request('127.0.0.1:8080')), 'http://127.0.0.1:8080');
    assert.equal(ownBaseUrl(request('[::1]:8080')), 'http://[::1]:8080');
    for (const forged of ['evil.example', 'evil.example:8080', 'localhost:9999', 'a"b', 'localhost:8080@evil.example', undefined])
      assert.equal(ownBaseUrl(request(forged)), 'http://127.0.0.1:8080', String(forged));
  });
});
