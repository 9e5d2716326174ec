import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { startTestSystem, type TestSystem } from './harness.js';

/** The gateway serves the built console at / (static files only; everything else stays as it was). */
const root = new URL('../../', import.meta.url).pathname;
const consoleDir = join(root, 'web/console/dist');

describe('the web console’s files, served by the gateway', () => {
  let t: TestSystem;
  let bare: TestSystem;
  beforeAll(async () => {
    execFileSync(process.execPath, [join(root, 'scripts/build-console.mjs')], { stdio: 'inherit' });
    [t, bare] = await Promise.all([startTestSystem({ CONSOLE_DIR: consoleDir }), startTestSystem()]);
  });
  afterAll(async () => {
    await t?.stop();
    await bare?.stop();
  });

  it('serves index.html at / with a strict content security policy, revalidated on every load', async () => {
    const res = await fetch(`${t.url}/`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/html/);
    assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'self'/);
    assert.equal(res.headers.get('cache-control'), 'no-cache');
    assert.match(await res.text(), /<div id="app">/);
  });

  it('serves the hashed assets as immutable', async () => {
    const asset = readdirSync(join(consoleDir, 'assets')).find((f) => f.endsWith('.js'))!;
    const res = await fetch(`${t.url}/assets/${asset}`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('cache-control') ?? '', /immutable/);
  });

  it('keeps the router’s plain-text 404 for any other path, and the API as it was', async () => {
    const res = await fetch(`${t.url}/no-such-page`);
    assert.equal(res.status, 404);
    assert.match(res.headers.get('content-type') ?? '', /text\/plain/);
    assert.equal((await t.api('GET', '/org/me', { key: null })).status, 401);
  });

  it('serves /favicon.ico', async () => {
    const res = await fetch(`${t.url}/favicon.ico`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /image\//);
    assert.ok((await res.arrayBuffer()).byteLength > 0);
  });

  it('serves nothing at / without CONSOLE_DIR', async () => {
    assert.equal((await fetch(`${bare.url}/`)).status, 404);
  });
});

describe('the API reference at /api/v1/docs', () => {
  let t: TestSystem;
  beforeAll(async () => {
    t = await startTestSystem();
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('renders the OpenAPI document with scripts served here, without a credential (no CDN)', async () => {
    const res = await fetch(`${t.url}/api/v1/docs/`, { redirect: 'follow' });
    assert.equal(res.status, 200);
    const html = await res.text();
    assert.match(html, /swagger-ui/i);
    const sources = [...html.matchAll(/<(?:script|link)[^>]+(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    assert.ok(sources.length > 0);
    assert.deepEqual(
      sources.filter((s) => /^(https?:)?\/\//.test(s)),
      [],
      'every script and style comes from this service',
    );
    for (const source of sources.filter((s) => s.endsWith('.js'))) {
      const asset = await fetch(new URL(source, res.url));
      assert.equal(asset.status, 200, source);
    }
    const initializer = await fetch(`${t.url}/api/v1/docs/static/swagger-initializer.js`);
    assert.equal(initializer.status, 200);
    // It loads ./json beside the page: /api/v1/docs/json, the document below.
    assert.match(await initializer.text(), /resolveUrl\('\.\/json'\)/);
  });

  it('serves the same document as /api/v1/openapi.json, and is not itself an operation of it', async () => {
    const reference = (await (await fetch(`${t.url}/api/v1/docs/json`)).json()) as { paths: Record<string, unknown> };
    const openapi = (await t.api('GET', '/openapi.json', { key: null })).body;
    assert.deepEqual(Object.keys(reference.paths).sort(), Object.keys(openapi.paths).sort());
    assert.ok(!Object.keys(openapi.paths).some((p) => p.startsWith('/api/v1/docs')));
  });
});
