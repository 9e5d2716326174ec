import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { classifyAddress, redactUrl, refusedUrlReason } from './address-policy.js';
import { createOutboundFetch, guardedLookup, outboundFailureReason, OutboundRefusedError, type ResolveAll } from './guarded-fetch.js';

const strict = { allowPrivate: false };
const relaxed = { allowPrivate: true };

describe('classifyAddress', () => {
  const refused: [string, string][] = [
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['fe80::1', 'linkLocal'],
    ['fd00::1', 'uniqueLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.2.10', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:169.254.169.254', 'linkLocal'],
    ['64:ff9b::7f00:1', 'rfc6052'],
    ['2002:7f00:1::', '6to4'],
    ['fec0::1', 'deprecatedSiteLocal'],
  ];
  for (const [address, range] of refused)
    it(`refuses ${address} (${range})`, () => {
      const v = classifyAddress(address, strict);
      assert.equal(v.allowed, false);
      assert.equal(!v.allowed && v.range, range);
    });

  it('allows public unicast addresses', () => {
    for (const a of ['93.184.216.34', '8.8.8.8', '2606:2800:220:1:248:1893:25c8:1946', '::ffff:93.184.216.34'])
      assert.equal(classifyAddress(a, strict).allowed, true, a);
  });

  it('ALLOW_PRIVATE_DESTINATIONS opens loopback and private ranges, never link-local or special-purpose ones', () => {
    for (const a of ['127.0.0.1', '::1', '10.0.0.1', '192.168.0.2', 'fd12::3', '::ffff:127.0.0.1'])
      assert.equal(classifyAddress(a, relaxed).allowed, true, a);
    for (const a of ['169.254.169.254', 'fe80::1', '0.0.0.0', '224.0.0.1', '100.64.0.1', '192.0.2.1'])
      assert.equal(classifyAddress(a, relaxed).allowed, false, a);
  });

  it('refuses text that is not an address', () => assert.equal(classifyAddress('example.com', relaxed).allowed, false));
});

describe('refusedUrlReason (when a URL is saved)', () => {
  it('refuses every literal form of a loopback address and names the setting', () => {
    for (const url of [
      'http://127.0.0.1:9/x',
      'http://localhost/',
      'http://api.localhost/',
      'http://[::1]:8080/',
      'http://0x7f000001/',
      'http://2130706433/',
      'http://127.1/',
      'http://0177.0.0.1/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::ffff:7f00:1]/',
    ]) {
      const reason = refusedUrlReason(url, strict);
      assert.match(reason ?? '', /loopback/, url);
      assert.match(reason ?? '', /ALLOW_PRIVATE_DESTINATIONS=true/, url);
    }
  });

  it('refuses link-local and metadata addresses even with the setting, without offering it', () => {
    const reason = refusedUrlReason('http://169.254.169.254/latest/meta-data/', relaxed);
    assert.match(reason ?? '', /link-local/);
    assert.doesNotMatch(reason ?? '', /ALLOW_PRIVATE/);
  });

  it('refuses credentials in the URL, other schemes and non-URLs', () => {
    assert.match(refusedUrlReason('https://user:pass@hooks.example.com/', relaxed) ?? '', /user name or password/);
    assert.match(refusedUrlReason('https://user@hooks.example.com/', relaxed) ?? '', /user name or password/);
    assert.match(refusedUrlReason('ftp://hooks.example.com/', relaxed) ?? '', /http/);
    assert.match(refusedUrlReason('not a url', relaxed) ?? '', /http/);
    assert.match(refusedUrlReason(42, relaxed) ?? '', /http/);
  });

  it('accepts public names and addresses, and loopback with the setting', () => {
    assert.equal(refusedUrlReason('https://hooks.example.com/in?x=1', strict), null);
    assert.equal(refusedUrlReason('http://93.184.216.34/', strict), null);
    assert.equal(refusedUrlReason('http://127.0.0.1:3000/', relaxed), null);
    assert.equal(refusedUrlReason('http://localhost:3000/', relaxed), null);
  });

  it('redactUrl drops credentials and the query', () => {
    assert.equal(redactUrl('https://user:secret@hooks.example.com:8443/in?token=abc'), 'https://hooks.example.com:8443/in');
  });
});

describe('guardedLookup (no connection is made)', () => {
  const stub =
    (table: Record<string, { address: string; family: number }[]>): ResolveAll =>
    async (name) =>
      table[name] ?? Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }));
  const lookupOf = (resolveAll: ResolveAll, name: string, all: boolean) =>
    new Promise<{ err: Error | null; result: unknown }>((resolve) =>
      guardedLookup(strict, resolveAll)(name, { all }, (err, address) => resolve({ err, result: address })),
    );

  it('refuses a name that resolves to the metadata address, a link-local or a mapped loopback address', async () => {
    const resolveAll = stub({
      'metadata.test': [{ address: '169.254.169.254', family: 4 }],
      'v6ll.test': [{ address: 'fe80::1', family: 6 }],
      'mapped.test': [{ address: '::ffff:127.0.0.1', family: 6 }],
      'mixed.test': [
        { address: '93.184.216.34', family: 4 },
        { address: '10.0.0.1', family: 4 },
      ],
    });
    for (const name of ['metadata.test', 'v6ll.test', 'mapped.test', 'mixed.test']) {
      const { err } = await lookupOf(resolveAll, name, true);
      assert.ok(err instanceof OutboundRefusedError, name);
      assert.match(err.message, new RegExp(name.replace('.', '\\.')));
    }
  });

  it('passes a public name through in the form asked for', async () => {
    const resolveAll = stub({ 'public.test': [{ address: '93.184.216.34', family: 4 }] });
    assert.deepEqual((await lookupOf(resolveAll, 'public.test', true)).result, [{ address: '93.184.216.34', family: 4 }]);
    assert.equal((await lookupOf(resolveAll, 'public.test', false)).result, '93.184.216.34');
  });
});

describe('createOutboundFetch against loopback listeners', () => {
  let server: Server;
  let target: Server;
  let port = 0;
  let targetPort = 0;
  let hits = 0;
  let targetHits = 0;
  const loopbackName: ResolveAll = async (name) =>
    name === 'rebind.test' ? [{ address: '127.0.0.1', family: 4 }] : Promise.reject(Object.assign(new Error('nx'), { code: 'ENOTFOUND' }));

  beforeAll(async () => {
    target = createServer((_req, res) => {
      targetHits++;
      res.end('internal secret');
    });
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    targetPort = (target.address() as AddressInfo).port;
    server = createServer((req, res) => {
      hits++;
      if (req.url === '/redirect') res.writeHead(302, { location: `http://127.0.0.1:${targetPort}/` }).end();
      else res.writeHead(200).end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await new Promise((r) => target.close(r));
  });

  it('refuses every form of the loopback address at connect time, and the listener sees nothing', async () => {
    const guarded = createOutboundFetch({ policy: strict, resolveAll: loopbackName });
    for (const host of ['127.0.0.1', '0x7f000001', '2130706433', '127.1', '[::ffff:127.0.0.1]', '[::1]', 'rebind.test', 'localhost']) {
      const err = await guarded(`http://${host}:${port}/`).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof OutboundRefusedError, `${host}: ${String(err)}`);
      assert.match(outboundFailureReason(err), /ALLOW_PRIVATE_DESTINATIONS/);
    }
    assert.equal(hits, 0);
  });

  it('connects to loopback with ALLOW_PRIVATE_DESTINATIONS, and never follows a redirect', async () => {
    const guarded = createOutboundFetch({ policy: relaxed, resolveAll: loopbackName });
    const ok = await guarded(`http://rebind.test:${port}/`);
    assert.equal(ok.status, 200);
    const redirected = await guarded(`http://127.0.0.1:${port}/redirect`);
    assert.equal(redirected.status, 302);
    assert.equal(targetHits, 0);
    assert.equal(hits, 2);
  });

  it('gives a short reason for network failures', async () => {
    const guarded = createOutboundFetch({ policy: relaxed, resolveAll: loopbackName });
    const closed = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const err = await guarded(`http://127.0.0.1:${closed}/`).catch((e: unknown) => e);
    assert.equal(outboundFailureReason(err), 'connection refused');
    const missing = await guarded(`http://nowhere.test:${port}/`).catch((e: unknown) => e);
    assert.equal(outboundFailureReason(missing), 'host not found');
  });
});
