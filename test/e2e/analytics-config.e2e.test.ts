import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestSystem, type TestSystem } from './harness.js';
import { newMember, newOrgAdmin } from './identity-fixtures.js';
import { startFakeAnswerEngine, type FakeAnswerEngine } from './fake-answer-engine.js';

/** Tracked sources, tracked competitors, brand settings and scheduled runs over HTTP. */
let t: TestSystem;
let engine: FakeAnswerEngine;
beforeAll(async () => {
  engine = await startFakeAnswerEngine();
  // The scheduler's own ticks stay out of the way: runs here are started by POST /org/run-configuration/runs.
  t = await startTestSystem({ ANSWER_ENGINE_BASE_URL: engine.url, ANSWER_ENGINE_API_KEY: 'engine-key', SCHEDULER_TICK_MS: '3600000' });
});
afterAll(async () => {
  await t?.stop();
  await engine?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('tracked sources', () => {
  it('create (201, normalised pattern), get, list, replace, delete (204), then 404', async () => {
    const created = await t.api('POST', '/org/tracked-sources', {
      body: { match_type: 'path_prefix', pattern: 'https://www.Docs.Example.com/guides/', tier: 'tracked', label: 'Guides' },
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.pattern, 'docs.example.com/guides');
    assert.equal(created.body.source_origin, 'manual');
    const id = created.body.source_id;
    assert.deepEqual((await t.api('GET', `/org/tracked-sources/${id}`)).body, created.body);
    const list = await t.api('GET', '/org/tracked-sources?limit=100');
    assert.equal(list.status, 200);
    assert.ok(list.body.some((s: { source_id: string }) => s.source_id === id));
    assert.equal(list.headers.get('x-total-count'), String(list.body.length));
    const replaced = await t.api('PUT', `/org/tracked-sources/${id}`, {
      body: { match_type: 'exact_url', pattern: 'http://docs.example.com/guides/a?utm_medium=x', tier: 'primary' },
    });
    assert.equal(replaced.status, 200, replaced.text);
    assert.deepEqual(
      [replaced.body.match_type, replaced.body.pattern, replaced.body.tier, replaced.body.label],
      ['exact_url', 'docs.example.com/guides/a', 'primary', undefined],
    );
    assert.equal((await t.api('DELETE', `/org/tracked-sources/${id}`)).status, 204);
    assert.equal((await t.api('GET', `/org/tracked-sources/${id}`)).status, 404);
    assert.equal(
      (await t.api('PUT', `/org/tracked-sources/${id}`, { body: { match_type: 'domain', pattern: 'a.com', tier: 'primary' } })).status,
      404,
    );
    assert.equal((await t.api('DELETE', `/org/tracked-sources/${id}`)).status, 404);
  });

  it('400 for a bad match type, tier, pattern, id or unknown field', async () => {
    for (const body of [
      { match_type: 'regex', pattern: 'a.com', tier: 'primary' },
      { match_type: 'domain', pattern: 'a.com', tier: 'gold' },
      { match_type: 'domain', pattern: 'a.com/path', tier: 'primary' },
      { match_type: 'exact_url', pattern: 'ftp://a.com/x', tier: 'primary' },
      { match_type: 'domain', pattern: 'a.com', tier: 'primary', extra: true },
    ])
      assert.equal((await t.api('POST', '/org/tracked-sources', { body })).status, 400, JSON.stringify(body));
    assert.equal((await t.api('GET', '/org/tracked-sources/not-a-uuid')).status, 400);
    assert.equal((await t.api('GET', '/org/tracked-sources?limit=0')).status, 400);
  });

  it('the organization websites are published owned rules: read-only (409)', async () => {
    const admin = await newOrgAdmin(t, 'websites');
    const settings = await admin.call('PUT', '/org/analytics/settings', { brand_name: 'Web Co', websites: ['https://www.webco.io/'] });
    assert.equal(settings.status, 200, settings.text);
    assert.deepEqual(settings.body.websites, ['webco.io']);
    const rules = (await admin.call('GET', '/org/tracked-sources')).body;
    assert.equal(rules.length, 1);
    assert.deepEqual(
      [rules[0].match_type, rules[0].pattern, rules[0].tier, rules[0].source_origin],
      ['domain', 'webco.io', 'primary', 'published'],
    );
    assert.equal(
      (await admin.call('PUT', `/org/tracked-sources/${rules[0].source_id}`, { match_type: 'domain', pattern: 'x.io', tier: 'tracked' }))
        .status,
      409,
    );
    assert.equal((await admin.call('DELETE', `/org/tracked-sources/${rules[0].source_id}`)).status, 409);
    // Removing the website from the settings removes its rule.
    await admin.call('PUT', '/org/analytics/settings', { brand_name: 'Web Co', websites: [] });
    assert.equal((await admin.call('GET', '/org/tracked-sources')).body.length, 0);
  });

  it('the websites of the organization profile (PUT /org/me) become published owned rules too', async () => {
    const admin = await newOrgAdmin(t, 'profile-sites');
    const put = await admin.call('PUT', '/org/me', { websites: ['https://www.profile-site.com/'] });
    assert.equal(put.status, 200, put.text);
    let rules = (await admin.call('GET', '/org/tracked-sources')).body;
    for (let i = 0; i < 100 && rules.length === 0; i++) {
      await sleep(50);
      rules = (await admin.call('GET', '/org/tracked-sources')).body;
    }
    assert.deepEqual(
      rules.map((r: { pattern: string; tier: string; source_origin: string }) => [r.pattern, r.tier, r.source_origin]),
      [['profile-site.com', 'primary', 'published']],
    );
    const id = rules[0].source_id;
    assert.equal((await admin.call('GET', `/org/tracked-sources/${id}`)).status, 200);
    assert.equal((await admin.call('DELETE', `/org/tracked-sources/${id}`)).status, 409);
    assert.equal(
      (await admin.call('PUT', `/org/tracked-sources/${id}`, { match_type: 'domain', pattern: 'x.io', tier: 'tracked' })).status,
      409,
    );
    // Citations of the website count as Owned.
    const imported = await admin.call('POST', '/org/analytics/answers/import', [
      { prompt_id: randomUUID(), model: 'm', run_at: '2026-03-01T00:00:00Z', text: 'x', citations: ['https://blog.profile-site.com/post'] },
    ]);
    assert.equal(imported.status, 200);
    const tiers = await admin.call('GET', '/org/analytics/citations?from=2026-03-01&to=2026-03-01');
    assert.equal(tiers.body.totals.tier_citations.primary, 1);
  });

  it('batch import: per-item results, 400 when nothing is valid', async () => {
    const res = await t.api('POST', '/org/tracked-sources/batch', {
      body: {
        sources: [
          { match_type: 'domain', pattern: 'batch-one.com', tier: 'tracked' },
          { match_type: 'domain', pattern: '', tier: 'tracked' },
          'junk',
        ],
      },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.created, 1);
    assert.deepEqual(
      res.body.results.map((r: { status: string }) => r.status),
      ['created', 'rejected', 'rejected'],
    );
    assert.equal(res.body.results[0].source.source_origin, 'import');
    assert.equal((await t.api('POST', '/org/tracked-sources/batch', { body: { sources: [{ match_type: 'x' }] } })).status, 400);
    assert.equal((await t.api('POST', '/org/tracked-sources/batch', { body: { sources: [] } })).status, 400);
  });

  it('scoped to the organization (another org gets 404), 401 without a key, 403 for a viewer writing', async () => {
    const created = await t.api('POST', '/org/tracked-sources', {
      body: { match_type: 'host', pattern: 'scoped.example', tier: 'tracked' },
    });
    const other = await newOrgAdmin(t, 'sources-other');
    assert.equal((await other.call('GET', `/org/tracked-sources/${created.body.source_id}`)).status, 404);
    assert.equal((await other.call('DELETE', `/org/tracked-sources/${created.body.source_id}`)).status, 404);
    assert.equal((await t.api('GET', '/org/tracked-sources', { key: null })).status, 401);
    const viewer = await newMember(t, other, 'viewer');
    assert.equal((await viewer.call('GET', '/org/tracked-sources')).status, 200);
    assert.equal(
      (await viewer.call('POST', '/org/tracked-sources', { match_type: 'host', pattern: 'v.example', tier: 'tracked' })).status,
      403,
    );
  });
});

describe('tracked competitors', () => {
  it('create, get, list, replace, delete; names unique per organization (409)', async () => {
    const admin = await newOrgAdmin(t, 'competitors');
    const created = await admin.call('POST', '/org/competitors', {
      name: 'Globex',
      aliases: ['Globex Corp', 'globex'],
      website: 'https://www.globex.com',
    });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual([created.body.name, created.body.aliases, created.body.website], ['Globex', ['Globex Corp'], 'globex.com']);
    const id = created.body.competitor_id;
    assert.equal((await admin.call('POST', '/org/competitors', { name: 'GLOBEX' })).status, 409);
    assert.deepEqual((await admin.call('GET', `/org/competitors/${id}`)).body, created.body);
    const second = await admin.call('POST', '/org/competitors', { name: 'Initech' });
    assert.equal((await admin.call('PUT', `/org/competitors/${second.body.competitor_id}`, { name: 'globex' })).status, 409);
    const renamed = await admin.call('PUT', `/org/competitors/${id}`, { name: 'Globex Group', aliases: [] });
    assert.equal(renamed.status, 200);
    assert.deepEqual([renamed.body.name, renamed.body.aliases], ['Globex Group', []]);
    // The old name is free again.
    assert.equal((await admin.call('POST', '/org/competitors', { name: 'Globex' })).status, 201);
    const list = await admin.call('GET', '/org/competitors?limit=2&offset=0');
    assert.equal(list.headers.get('x-total-count'), '3');
    assert.deepEqual(
      list.body.map((c: { name: string }) => c.name),
      ['Globex Group', 'Initech'],
    );
    assert.equal((await admin.call('DELETE', `/org/competitors/${id}`)).status, 204);
    assert.equal((await admin.call('GET', `/org/competitors/${id}`)).status, 404);
    assert.equal((await admin.call('DELETE', `/org/competitors/${id}`)).status, 404);
    assert.equal((await t.api('GET', `/org/competitors/${second.body.competitor_id}`)).status, 404, 'another organization');
  });

  it('400 for bad bodies and ids; 401; 403 for a viewer writing', async () => {
    for (const body of [{}, { name: '' }, { name: 'x'.repeat(201) }, { name: 'Ok', website: 'not a host/x' }, { name: 'Ok', extra: 1 }])
      assert.equal((await t.api('POST', '/org/competitors', { body })).status, 400, JSON.stringify(body));
    assert.equal((await t.api('GET', '/org/competitors/123')).status, 400);
    assert.equal((await t.api('GET', '/org/competitors', { key: null })).status, 401);
    const admin = await newOrgAdmin(t, 'comp-viewer');
    const viewer = await newMember(t, admin, 'viewer');
    assert.equal((await viewer.call('POST', '/org/competitors', { name: 'Nope' })).status, 403);
    assert.equal((await viewer.call('POST', '/org/competitors/suggest', {})).status, 200);
  });

  it('batch import with per-item results; 400 when none can be created', async () => {
    const admin = await newOrgAdmin(t, 'comp-batch');
    await admin.call('POST', '/org/competitors', { name: 'Existing' });
    const res = await admin.call('POST', '/org/competitors/batch', {
      competitors: [{ name: 'One' }, { name: 'existing' }, { name: 'one' }, { name: '' }, { name: 'Two', aliases: ['2'] }],
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.body.results.map((r: { status: string }) => r.status),
      ['created', 'rejected', 'rejected', 'rejected', 'created'],
    );
    assert.equal(res.body.results[4].competitor.name, 'Two');
    assert.equal((await admin.call('POST', '/org/competitors/batch', { competitors: [{ name: 'One' }] })).status, 400);
    assert.equal((await admin.call('POST', '/org/competitors/batch', { competitors: [] })).status, 400);
  });

  it('suggest: brands named in answers, ranked by mentions, without the organization or tracked ones', async () => {
    const admin = await newOrgAdmin(t, 'suggest');
    await admin.call('PUT', '/org/analytics/settings', { brand_name: 'Acme' });
    await admin.call('POST', '/org/competitors', { name: 'Globex', aliases: ['Globex Corp'] });
    const answer = (text: string, brands?: string[]) => ({
      prompt_id: randomUUID(),
      model: 'm',
      run_at: '2026-03-01T00:00:00Z',
      text,
      citations: [],
      ...(brands && { brands }),
    });
    const imported = await admin.call('POST', '/org/analytics/answers/import', [
      answer('Acme, Hooli and Hooli again; Globex Corp; Umbrella.', ['Acme', 'Hooli', 'Globex Corp', 'Umbrella']),
      answer('1. **Initech**: good\n2. **Hooli**: fine\n- Vandelay - ok'),
    ]);
    assert.equal(imported.status, 200, imported.text);
    const res = await admin.call('POST', '/org/competitors/suggest', { limit: 3 });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.body.suggestions.map((s: { name: string; mention_count: number; answer_count: number }) => [
        s.name,
        s.mention_count,
        s.answer_count,
      ]),
      [
        ['Hooli', 3, 2],
        ['Initech', 1, 1],
        ['Umbrella', 1, 1],
      ],
    );
    assert.equal((await admin.call('POST', '/org/competitors/suggest', { limit: 0 })).status, 400);
    assert.equal((await admin.call('POST', '/org/competitors/suggest', { sort: 'x' })).status, 400);
  });
});

describe('brand settings', () => {
  it('default to the organization name; replace; 400 on bad input', async () => {
    const admin = await newOrgAdmin(t, 'brand');
    let got = await admin.call('GET', '/org/analytics/settings');
    for (let i = 0; i < 50 && got.body.brand_name === null; i++) {
      await sleep(50);
      got = await admin.call('GET', '/org/analytics/settings');
    }
    assert.equal(got.status, 200);
    assert.match(got.body.brand_name, /^brand org /);
    assert.equal(got.body.source, 'organization');
    const put = await admin.call('PUT', '/org/analytics/settings', { brand_name: 'Brandy', aliases: ['Brandy Inc', 'Brandy Inc'] });
    assert.equal(put.status, 200);
    assert.deepEqual([put.body.brand_name, put.body.aliases, put.body.source], ['Brandy', ['Brandy Inc'], 'settings']);
    for (const body of [{}, { brand_name: '' }, { brand_name: 'x', websites: ['not a host/'] }, { brand_name: 'x', other: 1 }])
      assert.equal((await admin.call('PUT', '/org/analytics/settings', body)).status, 400, JSON.stringify(body));
    const viewer = await newMember(t, admin, 'viewer');
    assert.equal((await viewer.call('PUT', '/org/analytics/settings', { brand_name: 'V' })).status, 403);
    assert.equal((await t.api('GET', '/org/analytics/settings', { key: null })).status, 401);
  });
});

describe('run configuration and scheduled runs', () => {
  it('defaults, validation, 422 when a run cannot start, 401 and 403', async () => {
    const admin = await newOrgAdmin(t, 'runs-basic');
    const got = await admin.call('GET', '/org/run-configuration');
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, {
      enabled: false,
      models: [],
      locations: ['global'],
      cadence: 'daily',
      prompt_ids: [],
      tag_ids: [],
      updated_at: null,
      engine_configured: true,
      runs_enabled: true,
    });
    assert.equal((await admin.call('POST', '/org/run-configuration/runs')).status, 422);
    for (const body of [
      { enabled: true, models: [], cadence: 'daily' },
      { enabled: false, models: ['m'], cadence: 'monthly' },
      { enabled: true, models: ['m'] },
      { enabled: true, models: ['m'], cadence: 'daily', x: 1 },
      { enabled: true, models: ['*'], cadence: 'daily' },
      { enabled: true, models: ['m'], locations: ['us', '*'], cadence: 'daily' },
    ])
      assert.equal((await admin.call('PUT', '/org/run-configuration', body)).status, 400, JSON.stringify(body));
    const viewer = await newMember(t, admin, 'viewer');
    assert.equal((await viewer.call('PUT', '/org/run-configuration', { enabled: false, models: [], cadence: 'daily' })).status, 403);
    assert.equal((await viewer.call('GET', '/org/run-configuration/runs')).status, 200);
    assert.equal((await t.api('GET', '/org/run-configuration', { key: null })).status, 401);
    assert.equal((await admin.call('GET', '/org/run-configuration/runs?limit=500')).status, 400);
  });

  it('runs every prompt x model x location once per slot through the answer engine, reporting progress and failures per engine', async () => {
    const admin = await newOrgAdmin(t, 'runs');
    await admin.call('PUT', '/org/analytics/settings', { brand_name: 'Acme' });
    const prompt = await admin.call('POST', '/org/prompts', { name: 'Best CRM', text: 'What is the best CRM?', tags: ['crm'] });
    assert.equal(prompt.status, 201, prompt.text);
    const other = await admin.call('POST', '/org/prompts', { name: 'Untagged', text: 'Something else?' });
    assert.equal(other.status, 201);
    const tagId = prompt.body.tags[0].tag_id;
    const config = await admin.call('PUT', '/org/run-configuration', {
      enabled: true,
      models: ['sonar', 'gpt-4o', 'plain', 'broken'],
      locations: ['us'],
      cadence: 'hourly',
      tag_ids: [tagId],
    });
    assert.equal(config.status, 200, config.text);
    assert.deepEqual(config.body.tag_ids, [tagId]);

    // Analytics learns prompts from knowledge-base events: wait until the tagged one is known (it then names it in reports).
    const probe = { prompt_id: prompt.body.prompt_id, model: 'probe', run_at: '2026-01-01T00:00:00Z', text: '', citations: [] };
    assert.equal((await admin.call('POST', '/org/analytics/answers/import', [probe])).status, 200);
    for (let i = 0; i < 100; i++) {
      const r = await admin.call('GET', '/org/analytics/prompts?from=2026-01-01&to=2026-01-01');
      if (r.body.prompts[0]?.name === 'Best CRM') break;
      await sleep(50);
    }

    const before = engine.requests.length;
    const started = await admin.call('POST', '/org/run-configuration/runs');
    assert.equal(started.status, 202, started.text);
    assert.equal(started.body.planned, 4, 'one tagged prompt x 4 models x 1 location');
    let run = started.body;
    for (let i = 0; i < 100 && run.status === 'running'; i++) {
      await sleep(50);
      run = (await admin.call('GET', '/org/run-configuration/runs')).body[0];
    }
    assert.equal(run.status, 'completed');
    assert.deepEqual([run.collected, run.failed], [3, 1]);
    assert.deepEqual(run.engines.sonar, { collected: 1, failed: 0, last_error: null });
    assert.equal(run.engines.broken.failed, 1);
    assert.match(run.engines.broken.last_error, /500/);
    const sent = engine.requests.slice(before);
    assert.equal(sent.length, 4);
    assert.ok(sent.every((r) => r.authorization === 'Bearer engine-key'));
    assert.deepEqual(sent[0]!.messages.at(-1), { role: 'user', content: 'What is the best CRM?' });

    // Citations from each wire style, and the answers in the reports.
    const latest = await admin.call(
      'GET',
      `/org/analytics/answers/latest?prompt_id=${prompt.body.prompt_id}&location=us&sort=model&order=asc`,
    );
    const byModel = Object.fromEntries(latest.body.answers.map((a: { model: string }) => [a.model, a]));
    assert.deepEqual(Object.keys(byModel), ['gpt-4o', 'plain', 'sonar']);
    assert.deepEqual(
      byModel.sonar.citations.map((c: { normalized_url: string }) => c.normalized_url),
      ['acme.com/guide', 'review.example/acme'],
    );
    assert.deepEqual(
      byModel['gpt-4o'].citations.map((c: { normalized_url: string }) => c.normalized_url),
      ['globex.com/x'],
    );
    assert.deepEqual(
      byModel.plain.citations.map((c: { url: string }) => c.url),
      ['https://acme.com/a', 'https://news.example.org/b'],
    );
    assert.equal(byModel.sonar.origin, 'scheduled');
    assert.equal(byModel.sonar.won, true);

    // Once per slot: triggering again returns the same run and asks nothing.
    const again = await admin.call('POST', '/org/run-configuration/runs');
    assert.equal(again.status, 202);
    assert.equal(again.body.run_id, run.run_id);
    assert.equal(engine.requests.length, before + 4);
  });
});

describe('the organization runs switch (PATCH /org/me/runs-enabled)', () => {
  it('switched off, a run cannot start (422) and the engine is not asked; switched on again, it runs', async () => {
    const admin = await newOrgAdmin(t, 'runs-switch');
    const prompt = await admin.call('POST', '/org/prompts', { name: 'Switch prompt', text: 'Which tool is best?' });
    assert.equal(prompt.status, 201, prompt.text);
    const config = await admin.call('PUT', '/org/run-configuration', {
      enabled: true,
      models: ['sonar'],
      cadence: 'weekly',
      prompt_ids: [prompt.body.prompt_id],
    });
    assert.equal(config.status, 200, config.text);
    assert.equal(config.body.runs_enabled, true);
    // Analytics learns the switch (and the prompt) from the gateway's and knowledge-base's events.
    const waitFor = async (runsEnabled: boolean) => {
      let got = await admin.call('GET', '/org/run-configuration');
      for (let i = 0; i < 100 && got.body.runs_enabled !== runsEnabled; i++) {
        await sleep(50);
        got = await admin.call('GET', '/org/run-configuration');
      }
      assert.equal(got.body.runs_enabled, runsEnabled);
    };
    assert.equal((await admin.call('PATCH', '/org/me/runs-enabled', { runs_enabled: false })).status, 200);
    await waitFor(false);
    const asked = engine.requests.length;
    assert.equal((await admin.call('POST', '/org/run-configuration/runs')).status, 422);
    assert.equal(engine.requests.length, asked);
    assert.deepEqual((await admin.call('GET', '/org/run-configuration/runs')).body, []);

    assert.equal((await admin.call('PATCH', '/org/me/runs-enabled', { runs_enabled: true })).status, 200);
    await waitFor(true);
    const probe = { prompt_id: prompt.body.prompt_id, model: 'probe', run_at: '2026-01-01T00:00:00Z', text: '', citations: [] };
    assert.equal((await admin.call('POST', '/org/analytics/answers/import', [probe])).status, 200);
    for (let i = 0; i < 100; i++) {
      const r = await admin.call('GET', '/org/analytics/prompts?from=2026-01-01&to=2026-01-01');
      if (r.body.prompts[0]?.name === 'Switch prompt') break;
      await sleep(50);
    }
    const started = await admin.call('POST', '/org/run-configuration/runs');
    assert.equal(started.status, 202, started.text);
    assert.equal(started.body.planned, 1);
  });
});

describe('sort and order exist only on analytics endpoints (rule 10)', () => {
  it('the analytics lists sort; the other lists of this area answer 400 to sort or order', async () => {
    assert.equal((await t.api('GET', '/org/analytics/answers/latest?sort=run_at&order=asc')).status, 200);
    assert.equal((await t.api('GET', '/org/analytics/answers/latest?sort=text')).status, 400);
    for (const path of ['/org/tracked-sources', '/org/competitors', '/org/run-configuration/runs'])
      for (const q of ['sort=created_at', 'order=asc']) assert.equal((await t.api('GET', `${path}?${q}`)).status, 400, `${path}?${q}`);
  });
});

describe('scheduled runs without an answer engine', () => {
  it('each run reports "no answer engine configured" while imports still work', async () => {
    const bare = await startTestSystem({ SCHEDULER_TICK_MS: '3600000' });
    try {
      const cfg = await bare.api('PUT', '/org/run-configuration', { body: { enabled: true, models: ['sonar'], cadence: 'daily' } });
      assert.equal(cfg.status, 200, cfg.text);
      assert.equal(cfg.body.engine_configured, false);
      const started = await bare.api('POST', '/org/run-configuration/runs');
      assert.equal(started.status, 202, started.text);
      let runs = await bare.api('GET', '/org/run-configuration/runs');
      for (let i = 0; i < 100 && runs.body[0].status === 'running'; i++) {
        await sleep(50);
        runs = await bare.api('GET', '/org/run-configuration/runs');
      }
      assert.equal(runs.body[0].status, 'failed');
      assert.match(runs.body[0].error, /no answer engine configured/);
      assert.match(runs.body[0].engines.sonar.last_error, /no answer engine configured/);
      const imported = await bare.api('POST', '/org/analytics/answers/import', {
        body: [{ prompt_id: randomUUID(), model: 'm', run_at: '2026-03-01T00:00:00Z', text: 'x', citations: [] }],
      });
      assert.equal(imported.status, 200);
    } finally {
      await bare.stop();
    }
  });
});
