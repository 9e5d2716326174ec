import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVICES as SUITE } from '../e2e/multiprocess-harness.js';
import { SERVICES, entryOf, gatewayPort, grpcVariable, publicSettings, serviceEnv } from '../../scripts/stack/services.js';

const root = new URL('../..', import.meta.url).pathname;

/** scripts/stack.ts and the multi-process suite start the same processes from one definition. */
describe('the one-machine stack', () => {
  it("is the multi-process suite's set of services, each with an entry point", () => {
    assert.deepEqual(
      SUITE.map((s) => [s.name, s.kind]),
      SERVICES.map((s) => [s.name, s.kind]),
    );
    for (const s of SERVICES) assert.ok(existsSync(join(root, entryOf(s.name, 'source'))), entryOf(s.name, 'source'));
    assert.equal(SERVICES.at(-1)!.name, 'gateway', 'the gateway, which calls the others, starts last');
  });

  it('gives each process its address, every other gRPC address, the shared settings, then its own', () => {
    const addresses = new Map(SERVICES.filter((s) => s.kind === 'grpc').map((s, i) => [s.name, `127.0.0.1:${50051 + i}`]));
    const shared = { KAFKA_BROKERS: '127.0.0.1:9092', INTERNAL_TOKEN: 'x'.repeat(32) };
    for (const spec of SERVICES) {
      const env = serviceEnv(spec, { shared, dataDir: `/data/${spec.name}`, host: '127.0.0.1', port: 4000, addresses });
      assert.equal(env.BUS, 'kafka');
      assert.equal(env.KAFKA_BROKERS, shared.KAFKA_BROKERS);
      assert.equal(env.INTERNAL_TOKEN, shared.INTERNAL_TOKEN);
      assert.equal(env.DATA_DIR, `/data/${spec.name}`);
      assert.equal(spec.kind === 'grpc' ? env.GRPC_PORT : env.PORT, '4000');
      for (const [name, address] of addresses) assert.equal(env[grpcVariable(name)], name === spec.name ? undefined : address);
      for (const [k, v] of Object.entries(spec.env ?? {})) assert.equal(env[k], v);
    }
    assert.ok(SERVICES.find((s) => s.name === 'publishing')!.env!.PUBLISHING_SECRET_KEY, 'publishing gets the secret it requires');
    assert.ok(SERVICES.find((s) => s.name === 'gateway')!.env!.BOOTSTRAP_API_KEY, 'the gateway bootstraps an organization and key');
  });

  it('listens where npm start does: PORT, else 8080; a PORT that is not a port stops the start', () => {
    assert.equal(gatewayPort({}), 8080);
    assert.equal(gatewayPort({ PORT: ' 3000 ' }), 3000);
    assert.throws(() => gatewayPort({ PORT: 'eighty' }), /PORT="eighty" is invalid/);
    assert.throws(() => gatewayPort({ PORT: '70000' }), /PORT="70000" is invalid/);
  });

  it('links hosted pages to the public URL and serves the console when it is built', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kb-stack-'));
    try {
      const gateway = { host: '127.0.0.1', port: 8080, consoleDir: join(dir, 'dist') };
      assert.deepEqual(publicSettings({}, gateway), { PUBLIC_BASE_URL: 'http://127.0.0.1:8080' });
      assert.equal(publicSettings({ PUBLIC_URL: 'https://kb.example.com/' }, gateway).PUBLIC_BASE_URL, 'https://kb.example.com');
      assert.equal(
        publicSettings({ PUBLIC_URL: 'https://kb.example.com', PUBLIC_BASE_URL: 'https://pages.example.com' }, gateway).PUBLIC_BASE_URL,
        'https://pages.example.com',
      );
      mkdirSync(gateway.consoleDir);
      writeFileSync(join(gateway.consoleDir, 'index.html'), '<!doctype html>');
      assert.equal(publicSettings({}, gateway).CONSOLE_DIR, gateway.consoleDir);
      assert.equal(
        publicSettings({ CONSOLE_DIR: '/elsewhere' }, gateway).CONSOLE_DIR,
        undefined,
        'a CONSOLE_DIR given is passed on as it is',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
