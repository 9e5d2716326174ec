import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { fixedClock, isAppError, randomIds } from '@kb/platform';
import { eventCatalog } from '@kb/events';
import { createCommandBus, rebuildReadModels, snapshotReadModels } from '@kb/eventsourcing';
import { createSqliteStore } from '@kb/store/sqlite';
import type { Store } from '@kb/store';
import type { CallContext } from '@kb/rpc';
import { publishingProjections } from '../projections/index.js';
import { createSecretBox } from './secrets.js';
import { createDomainsService, type DomainsService } from './domains.js';

/** Custom domains against squatting: a host name is claimed by verification only, and a pending registration expires. */
let dir: string;
let store: Store;
let domains: DomainsService;
const clock = fixedClock(new Date('2026-04-01T00:00:00Z'));
const txt = new Map<string, string[]>();
const ctxOf = (org: string): CallContext => ({
  org_id: org,
  principal: { type: 'user', id: randomUUID() },
  permissions: [],
  folder_scope: null,
  request_id: 'r',
});
const owner = ctxOf(randomUUID());
const squatter = ctxOf(randomUUID());
const HOUR = 3600;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'kb-domains-'));
  store = createSqliteStore({ path: join(dir, 'store.db') });
  domains = createDomainsService({
    store,
    commands: createCommandBus({ store, catalog: eventCatalog, projections: publishingProjections, ids: randomIds, clock }),
    ids: randomIds,
    clock,
    secrets: createSecretBox('a-test-key-of-some-length'),
    onDeliveriesQueued: () => undefined,
    resolver: { resolveTxt: async (name) => (txt.get(name) ?? []).map((v) => [v]) },
    random: randomBytes,
    verificationTtlSeconds: HOUR,
  });
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const code = async (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (err: unknown) => (isAppError(err) ? err.code : String(err)),
  );
const publish = (d: { verification: { name: string; value: string } }) =>
  txt.set(d.verification.name, [...(txt.get(d.verification.name) ?? []), d.verification.value]);

describe('custom domains', () => {
  it('a pending registration does not block the real owner; the first to verify claims the name', async () => {
    const squat = await domains.register(squatter, { hostname: 'docs.owner.test' });
    assert.equal(squat.status, 'pending');
    assert.equal(squat.expires_at, '2026-04-01T01:00:00.000Z');
    const mine = await domains.register(owner, { hostname: 'docs.owner.test' });
    assert.equal(await code(domains.register(owner, { hostname: 'docs.owner.test' })), 'domain_taken', 'not twice in one organization');
    publish(mine);
    publish(squat); // even a squatter who can publish a record comes second
    assert.equal((await domains.verify(owner, mine.domain_id)).status, 'verified');
    assert.equal((await domains.verify(owner, mine.domain_id)).expires_at, null);
    assert.equal(await code(domains.verify(squatter, squat.domain_id)), 'domain_taken');
    assert.equal(await code(domains.register(ctxOf(randomUUID()), { hostname: 'docs.owner.test' })), 'domain_taken');

    // Removing the squatter's pending registration leaves the owner's claim alone.
    await domains.remove(squatter, squat.domain_id);
    assert.equal(await code(domains.register(ctxOf(randomUUID()), { hostname: 'docs.owner.test' })), 'domain_taken');
  });

  it('a pending registration expires: it can no longer be verified, and registering again replaces it', async () => {
    const late = await domains.register(owner, { hostname: 'late.owner.test' });
    publish(late);
    clock.advance(HOUR * 1000);
    assert.equal(await code(domains.verify(owner, late.domain_id)), 'verification_expired');
    const again = await domains.register(owner, { hostname: 'late.owner.test' });
    assert.notEqual(again.verification.value, late.verification.value);
    assert.equal(await code(domains.get(owner, late.domain_id)), 'not_found');
    publish(again);
    assert.equal((await domains.verify(owner, again.domain_id)).status, 'verified');

    const before = await snapshotReadModels(store, publishingProjections);
    await rebuildReadModels(store, publishingProjections);
    assert.deepEqual(await snapshotReadModels(store, publishingProjections), before);
  });
});
