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

  it('serves nothing at / without CONSOLE_DIR', async () => {
    assert.equal((await fetch(`${bare.url}/`)).status, 404);
  });
});
