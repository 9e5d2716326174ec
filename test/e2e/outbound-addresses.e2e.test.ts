import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestSystem, type TestSystem } from './harness.js';
import { draftFeed, eventually, startDnsServer, startFakeGhost, startFakeWordPress } from './publishing-fixtures.js';

/**
 * Server-side request forgery: with ALLOW_PRIVATE_DESTINATIONS off (the
 * default), destinations and webhooks never reach loopback, private,
 * link-local or other special-purpose addresses. Literal addresses are refused
 * when saved (400); names are checked on the address actually connected (the
 * test's DNS server resolves them to loopback, as a rebinding attacker would).
 * Every listener here is on loopback; nothing is sent anywhere else.
 */

const SECRET = `whsec_${Buffer.from('an outbound test secret of 32 b!').toString('base64')}`;

let t: TestSystem;
let dns: Awaited<ReturnType<typeof startDnsServer>>;
let feed: ReturnType<typeof draftFeed>;
let org: string;
/** A loopback listener counting every request it gets. */
let sink: Server;
let sinkPort: number;
let sinkHits = 0;

beforeAll(async () => {
  dns = await startDnsServer();
  sink = createServer((_req, res) => {
    sinkHits++;
    res.writeHead(500).end('internal service: secret body');
  });
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
  sinkPort = (sink.address() as AddressInfo).port;
  t = await startTestSystem({ DELIVERY_TICK_MS: '50', DELIVERY_BACKOFF_MS: '50', DNS_SERVERS: dns.address });
  feed = draftFeed(t.dataDir);
  org = (await t.api('GET', '/org/me')).body.org_id;
});
afterAll(async () => {
  await feed.close();
  await t.stop();
  await dns.close();
  await new Promise((r) => sink.close(r));
});

const hook = (url: string) => t.api('POST', '/org/webhooks', { body: { url, event_kinds: ['content.approved'], secret: SECRET } });

describe('addresses refused when a destination or webhook is saved', () => {
  const loopbackForms = [
    'http://127.0.0.1:9/any/path?q=',
    'http://localhost:9/',
    'http://[::1]:9/',
    'http://0x7f000001:9/',
    'http://2130706433:9/',
    'http://127.1:9/',
    'http://[::ffff:127.0.0.1]:9/',
  ];

  it('webhook subscriptions: every form of loopback, private and metadata addresses is 400 naming the setting', async () => {
    for (const url of [...loopbackForms, 'http://10.0.0.7/', 'http://192.168.1.1/', 'http://[fd00::1]/']) {
      const res = await hook(url);
      assert.equal(res.status, 400, `${url}: ${res.text}`);
      assert.match(res.body.error.message, /ALLOW_PRIVATE_DESTINATIONS=true/, url);
    }
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://[fe80::1]/', 'http://0.0.0.0:9/', 'http://100.64.0.1/']) {
      const res = await hook(url);
      assert.equal(res.status, 400, `${url}: ${res.text}`);
      assert.doesNotMatch(res.body.error.message, /ALLOW_PRIVATE/, `${url} stays refused with the setting`);
    }
    assert.equal(sinkHits, 0);
  });

  it('WordPress, Ghost and webhook destinations at loopback addresses are 400', async () => {
    const bodies = [
      {
        type: 'wordpress',
        name: 'WP',
        config: { base_url: `http://127.0.0.1:${sinkPort}/any/path?q=`, username: 'u' },
        secret: 'an application password',
      },
      { type: 'ghost', name: 'Ghost', config: { admin_url: `http://[::1]:${sinkPort}/` }, secret: `abc:${'ab'.repeat(16)}` },
      { type: 'webhook', name: 'Hook', config: { url: `http://2130706433:${sinkPort}/` }, secret: SECRET },
    ];
    for (const body of bodies) {
      const res = await t.api('POST', '/org/destinations', { body });
      assert.equal(res.status, 400, `${body.type}: ${res.text}`);
      assert.match(res.body.error.message, /loopback address.*ALLOW_PRIVATE_DESTINATIONS=true/, body.type);
    }
  });

  it('URLs that carry user:pass@ are 400 for subscriptions and destinations', async () => {
    const sub = await hook('https://user:hunter2@hooks.example.test/in');
    assert.equal(sub.status, 400, sub.text);
    assert.match(sub.body.error.message, /user name or password/);
    assert.doesNotMatch(sub.text, /hunter2/);
    const dest = await t.api('POST', '/org/destinations', {
      body: { type: 'webhook', name: 'Hook', config: { url: 'https://user:hunter2@hooks.example.test/in' }, secret: SECRET },
    });
    assert.equal(dest.status, 400, dest.text);
    assert.doesNotMatch(dest.text, /hunter2/);
  });
});

describe('names checked on the address connected (DNS rebinding)', () => {
  it('a webhook subscription whose name resolves to loopback is saved, but its deliveries are refused and never reach the listener', async () => {
    dns.addresses.set('hooks.rebind.test', ['127.0.0.1']);
    const sub = await hook(`http://hooks.rebind.test:${sinkPort}/in`);
    assert.equal(sub.status, 201, sub.text);
    const test = await t.api('POST', `/org/webhooks/${sub.body.subscription_id}/test`, { body: {} });
    assert.equal(test.status, 202, test.text);
    const attempt = await eventually(async () => {
      const log = await t.api('GET', `/org/webhooks/${sub.body.subscription_id}/deliveries`);
      return log.body.find((d: { delivery_id: string; attempts: number }) => d.delivery_id === test.body.delivery_id && d.attempts > 0);
    }, 'a refused attempt');
    assert.equal(attempt.log[0].status_code, null);
    assert.match(attempt.log[0].error, /hooks\.rebind\.test is a loopback address.*ALLOW_PRIVATE_DESTINATIONS=true/);
    assert.equal(sinkHits, 0);
  });

  it('a name resolving to an IPv6 loopback or IPv4-mapped address is refused too', async () => {
    dns.addresses.set('v6.rebind.test', ['::1']);
    dns.addresses.set('mapped.rebind.test', ['::ffff:127.0.0.1']);
    for (const name of ['v6.rebind.test', 'mapped.rebind.test']) {
      const sub = await hook(`http://${name}:${sinkPort}/in`);
      assert.equal(sub.status, 201, sub.text);
      const test = await t.api('POST', `/org/webhooks/${sub.body.subscription_id}/test`, { body: {} });
      const attempt = await eventually(async () => {
        const log = await t.api('GET', `/org/webhooks/${sub.body.subscription_id}/deliveries`);
        return log.body.find((d: { delivery_id: string; attempts: number }) => d.delivery_id === test.body.delivery_id && d.attempts > 0);
      }, `a refused attempt to ${name}`);
      assert.match(attempt.log[0].error, /loopback address/, name);
    }
    assert.equal(sinkHits, 0);
  });

  it('WordPress and Ghost at names resolving to loopback: publish is 502 with a short reason, and the CMS gets no request', async () => {
    const wordpress = await startFakeWordPress('editor', 'abcd efgh ijkl mnop');
    const ghostKey = `6489c8e4f1a2b3c4d5e6f708:${'ab12'.repeat(16)}`;
    const ghost = await startFakeGhost(ghostKey);
    try {
      dns.addresses.set('wp.rebind.test', ['127.0.0.1']);
      dns.addresses.set('ghost.rebind.test', ['::1', '127.0.0.1']);
      const wp = await t.api('POST', '/org/destinations', {
        body: {
          type: 'wordpress',
          name: 'WP',
          config: { base_url: `http://wp.rebind.test:${new URL(wordpress.url).port}/`, username: 'editor' },
          secret: 'abcd efgh ijkl mnop',
        },
      });
      assert.equal(wp.status, 201, wp.text);
      const gh = await t.api('POST', '/org/destinations', {
        body: {
          type: 'ghost',
          name: 'Ghost',
          config: { admin_url: `http://ghost.rebind.test:${new URL(ghost.url).port}` },
          secret: ghostKey,
        },
      });
      assert.equal(gh.status, 201, gh.text);
      const d = await feed.created(feed.draft(org, { title: 'Never leaves' }));
      await eventually(async () => (await t.api('GET', `/org/content/pieces/${d.draft_id}`)).status === 200, 'the piece');
      await t.api('POST', `/org/content/pieces/${d.draft_id}/submit`, { body: {} });
      assert.equal((await t.api('POST', `/org/content/pieces/${d.draft_id}/approve`, { body: {} })).status, 200);
      for (const dest of [wp.body.destination_id, gh.body.destination_id]) {
        const pub = await t.api('POST', `/org/content/pieces/${d.draft_id}/publish`, { body: { destination_ids: [dest] } });
        assert.equal(pub.status, 502, pub.text);
        assert.match(pub.text, /was not called: [a-z.]*rebind\.test is a loopback address/);
      }
      assert.equal(wordpress.calls.length, 0);
      assert.equal(ghost.calls.length, 0);
    } finally {
      await wordpress.close();
      await ghost.close();
    }
  });
});
