import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { silentLogger, systemClock } from '@kb/platform';
import { openStore } from '@kb/runtime';
import { snapshotReadModels } from '@kb/eventsourcing';
import { startSystem } from './system.js';
import { rebuildService, serviceProjections } from './rebuild.js';

const adminScript = fileURLToPath(new URL('./admin.ts', import.meta.url));

/** `npm run admin -- <args>` as its own process on the data directory. */
function admin(dir: string, ...args: string[]) {
  return spawnSync(process.execPath, ['--conditions=source', '--import', 'tsx', adminScript, ...args], {
    env: { ...process.env, DATA_DIR: dir, LOG_LEVEL: 'warn' },
    encoding: 'utf8',
    timeout: 120_000,
  });
}

async function dropReadModels(dir: string, service: string) {
  const store = await openStore(settings(dir), service, systemClock, silentLogger());
  try {
    await store.dropCollections(serviceProjections[service]!.flatMap((p) => p.collections));
  } finally {
    await store.close();
  }
}

const settings = (dir: string) => ({ DATA_DIR: dir, STORE: 'sqlite' as const, BUS: 'sqlite' as const });

async function snapshot(dir: string, service: string) {
  const store = await openStore(settings(dir), service, systemClock, silentLogger());
  try {
    return await snapshotReadModels(store, serviceProjections[service]!);
  } finally {
    await store.close();
  }
}

describe('read-model rebuild by replay', () => {
  it('rebuilds every service to exactly the state it had', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kb-rebuild-'));
    try {
      const system = await startSystem({ env: { DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1' }, logger: silentLogger() });
      const call = async (method: string, path: string, body?: unknown) => {
        const res = await fetch(`${system.url}/api/v1${path}`, {
          method,
          headers: { 'x-api-key': 'kb_dev_0000000000000000000000000000', ...(body ? { 'content-type': 'application/json' } : {}) },
          ...(body ? { body: JSON.stringify(body) } : {}),
        });
        return (res.status === 204 ? undefined : await res.json()) as any;
      };
      const batch = await call('POST', '/categories/batch-create', {
        categories: [
          { name: 'Alpha', description: 'a', topics: [{ name: 'A1' }, { name: 'A2', description: 'x' }] },
          { name: 'Beta', topics: [{ name: 'B1' }] },
        ],
      });
      const gamma = await call('POST', '/categories', { name: 'Gamma' });
      await call('PATCH', `/categories/${batch[0].category_id}`, { name: 'Alpha renamed', description: null });
      await call('PUT', `/categories/${batch[1].category_id}`, { name: 'Beta', description: 'now described' });
      await call('PATCH', `/categories/${batch[0].category_id}/topics/${batch[0].topics[1].topic_id}`, { name: 'A2 renamed' });
      await call('DELETE', `/categories/${batch[1].category_id}/topics/${batch[1].topics[0].topic_id}`);
      await call('DELETE', `/categories/${gamma.category_id}`);
      await call('POST', '/categories', { name: 'Gamma' });
      // Ingest: content items, versions and chunks (processed before the stop).
      const notes = await call('POST', '/org/kb/raw', { title: 'Notes', text: '# Solar\n\nPanels.\n\n## Storage\n\nBatteries.' });
      const gone = await call('POST', '/content', { title: 'Gone', text: 'Deleted soon.' });
      for (let i = 0; (await call('GET', `/org/kb/content/${notes.id}`)).processing_status !== 'completed'; i++) {
        assert.ok(i < 200, 'raw text is processed');
        await new Promise((r) => setTimeout(r, 50));
      }
      await call('DELETE', `/content/${gone.id}`);
      // Analytics: brand settings, a competitor, a source rule and imported answers folded into counts.
      await call('PUT', '/org/analytics/settings', { brand_name: 'Acme', websites: ['acme.com'] });
      await call('POST', '/org/competitors', { name: 'Globex' });
      await call('POST', '/org/tracked-sources', { match_type: 'host', pattern: 'news.example.org', tier: 'tracked' });
      const promptId = '6f1c2a4e-0000-4000-8000-000000000001';
      await call('POST', '/org/analytics/answers/import', [
        { prompt_id: promptId, model: 'm', run_at: '2026-03-02T10:00:00Z', text: 'Acme, then Globex', citations: ['https://acme.com/a'] },
        { prompt_id: promptId, model: 'm', run_at: '2026-03-01T10:00:00Z', text: 'Globex only', citations: ['https://news.example.org/b'] },
      ]);
      // Generation: a brand kit, a content type and a product line.
      await call('PUT', '/org/brand-kit', { guidelines: { voice: 'plain', banned_terms: ['cheap'] } });
      await call('POST', '/org/content-types', { name: 'Explainer', config: { sections: [{ title: 'Overview' }] } });
      await call('POST', '/org/product-lines', { name: 'Solar', details: { sku: 'S1' } });
      await system.stop();

      const originals: Record<string, Record<string, unknown[]>> = {};
      for (const service of Object.keys(serviceProjections)) {
        const before = await snapshot(dir, service);
        originals[service] = before;
        assert.ok(
          Object.values(before).some((docs) => docs.length > 0),
          `${service} has read models to rebuild`,
        );
        const progress = await rebuildService(service, settings(dir), silentLogger());
        assert.ok(progress.events > 0);
        assert.deepEqual(await snapshot(dir, service), before, `${service} rebuilt state equals the original`);
      }

      // The operator command, from read models that are gone entirely.
      for (const service of Object.keys(serviceProjections)) {
        await dropReadModels(dir, service);
        assert.ok(
          Object.values(await snapshot(dir, service)).every((docs) => docs.length === 0),
          `${service} read models dropped`,
        );
      }
      const run = admin(dir, 'rebuild-read-models', 'gateway', 'knowledge-base', 'ingest', 'analytics', 'generation');
      assert.equal(run.status, 0, run.stderr);
      for (const service of Object.keys(serviceProjections)) {
        // Not a terminal: whole lines, no carriage returns running them together.
        assert.match(run.stdout, new RegExp(`^${service}: done, [1-9]\\d* events replayed$`, 'm'));
        assert.deepEqual(await snapshot(dir, service), originals[service], `${service} rebuilt by the command equals the original`);
      }
      assert.doesNotMatch(run.stdout, /\r/);
      const unknown = admin(dir, 'rebuild-read-models', 'nonexistent');
      assert.equal(unknown.status, 1);
      assert.match(unknown.stderr, /Unknown service nonexistent; one of: gateway, knowledge-base, ingest, analytics, generation/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
