import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestSystem, type TestSystem } from './harness.js';
import { SOURCES, addSource, eventually, textPdf, waitForRun, waitIndexed } from './generation-helpers.js';
import { postForm, waitForOutcome } from './ingest-helpers.js';

/**
 * The newcomer's walk (issue 9, "done means"): a brand kit and a content type,
 * a run for a prompt watched to completion, a draft whose every sentence links
 * to its source span, and the draft flagged when a cited source changes.
 */

let t: TestSystem;
let contentTypeId: string;
let promptId: string;
let solar: { id: string; version_id: string };

beforeAll(async () => {
  t = await startTestSystem();
  // A file, so that it can be re-uploaded as a new version later.
  const upload = await postForm(t, 'POST', '/content/file', [
    { name: 'title', data: 'Solar panels' },
    { name: 'file', filename: 'solar.pdf', data: textPdf(SOURCES.solar.split('\n').filter((l) => l && !l.startsWith('#'))) },
  ]);
  assert.equal(upload.status, 202, upload.text);
  solar = await waitForOutcome(t, upload.body.id);
  assert.equal((solar as any).processing_status, 'completed');
  const battery = await addSource(t, 'Home batteries', SOURCES.battery);
  await waitIndexed(t, 'monocrystalline solar panels efficiency', solar.id);
  await waitIndexed(t, 'home battery lithium charge cycles', battery.id);

  const kit = await t.api('PUT', '/org/brand-kit', {
    body: {
      name: 'House style',
      guidelines: {
        voice: 'plain and confident',
        banned_terms: ['polycrystalline'],
        preferred_terms: [{ term: 'PV modules', instead_of: ['solar panels'] }],
      },
    },
  });
  assert.equal(kit.status, 200, kit.text);
  const type = await t.api('POST', '/org/content-types', {
    body: {
      name: 'Explainer',
      description: 'A short cited explainer',
      config: {
        format: 'markdown',
        sections: [
          { title: 'Solar panel efficiency', instructions: 'How much sunlight panels convert' },
          { title: 'Home battery storage' },
        ],
        target_length: { min_words: 20, max_words: 200 },
      },
    },
  });
  assert.equal(type.status, 201, type.text);
  contentTypeId = type.body.content_type_id;
  const prompt = await t.api('POST', '/org/prompts', {
    body: { name: 'Solar efficiency', text: 'How efficient are solar panels and home batteries?' },
  });
  assert.equal(prompt.status, 201, prompt.text);
  promptId = prompt.body.prompt_id;
});
afterAll(() => t.stop());

describe('POST /org/generation/runs: a run from request to verified draft', () => {
  let runId: string;
  let draft: any;

  it('answers 202 with the queued run, which completes through its states with a draft', async () => {
    const res = await t.api('POST', '/org/generation/runs', { body: { content_type_id: contentTypeId, geo_question_id: promptId } });
    assert.equal(res.status, 202, res.text);
    assert.equal(res.body.state, 'queued');
    assert.equal(res.body.progress, 0);
    assert.equal(res.body.geo_question_id, promptId);
    runId = res.body.run_id;
    const done = await waitForRun(t, runId);
    assert.equal(done.state, 'completed', done.reason);
    assert.equal(done.progress, 1);
    assert.ok(done.draft_id);
    const d = await t.api('GET', `/org/generation/drafts/${done.draft_id}`);
    assert.equal(d.status, 200, d.text);
    draft = d.body;
  });

  it('drafts the content type’s sections, every sentence cited to a chunk with the quoted span and supported', async () => {
    assert.deepEqual(
      draft.sections.map((s: any) => s.title),
      ['Solar panel efficiency', 'Home battery storage'],
    );
    const sentences = draft.sections.flatMap((s: any) => s.sentences);
    assert.ok(sentences.length >= 2, JSON.stringify(draft.sections));
    for (const s of sentences) {
      assert.equal(s.verdict, 'supported', s.text);
      assert.ok(s.citations.length >= 1, s.text);
      for (const c of s.citations) {
        assert.ok(c.chunk_id.startsWith(`${c.version_id}:`));
        assert.ok(c.quote.length > 0);
      }
    }
    assert.equal(draft.verification, 'verified');
    assert.deepEqual(draft.totals, { sentences: sentences.length, factual: sentences.length, supported: sentences.length, unsupported: 0 });
    assert.deepEqual(draft.target_prompt_ids, [promptId]);
    assert.equal(draft.title, 'How efficient are solar panels and home batteries?');
    assert.match(draft.body, /^## Solar panel efficiency/);
    assert.match(draft.body, /\[1\]/);
    assert.ok(draft.source_content_ids.includes(solar.id));
  });

  it('applies the brand kit: no banned term; preferred terms replace the source’s words and still check as supported', () => {
    const sentences = draft.sections.flatMap((s: any) => s.sentences);
    assert.ok(
      sentences.some((s: any) => s.text.includes('PV modules')),
      'the preferred term is used',
    );
    for (const s of sentences) {
      assert.doesNotMatch(s.text.toLowerCase(), /polycrystalline/);
      assert.doesNotMatch(s.text.toLowerCase(), /solar panels/);
      assert.equal(s.verdict, 'supported', s.text);
    }
  });

  it('lists the run, and the prompt’s generation run history shows it', async () => {
    const list = await t.api('GET', '/org/generation/runs');
    assert.equal(list.status, 200);
    assert.ok(list.body.some((r: any) => r.run_id === runId));
    assert.ok(Number(list.headers.get('x-total-count')) >= 1);
    const history = await t.api('GET', `/org/prompts/${promptId}/generation-runs`);
    assert.equal(history.status, 200, history.text);
    assert.deepEqual(
      history.body.map((r: any) => r.run_id),
      [runId],
    );
    const unknown = await t.api('GET', `/org/prompts/${randomUUID()}/generation-runs`);
    assert.equal(unknown.status, 404);
    const drafts = await t.api('GET', '/org/generation/drafts');
    assert.equal(drafts.status, 200);
    assert.ok(drafts.body.some((d: any) => d.draft_id === draft.draft_id));
  });

  it('flags the draft when a cited source gets a new version with different text', async () => {
    const put = await postForm(t, 'PUT', `/content/file/${solar.id}`, [
      { name: 'title', data: 'Solar panels' },
      { name: 'file', filename: 'solar.pdf', data: textPdf(['Solar panels now convert about 24 percent of sunlight into electricity.']) },
    ]);
    assert.equal(put.status, 202, put.text);
    const stale = await eventually(async () => {
      const d = await t.api('GET', `/org/generation/drafts/${draft.draft_id}`);
      return d.body.stale_sources.length > 0 ? d.body.stale_sources : undefined;
    }, 'the draft to list a stale source');
    assert.equal(stale[0].content_id, solar.id);
    assert.equal(stale[0].version_id, solar.version_id);
    assert.equal(stale[0].reason, 'new_version');
  });

  it('fails a run with a reason when the knowledge base holds nothing in scope', async () => {
    const folder = await t.api('POST', '/org/kb/folders', { body: { name: `empty-${randomUUID()}` } });
    assert.equal(folder.status, 201, folder.text);
    const res = await t.api('POST', '/org/generation/runs', {
      body: { content_type_id: contentTypeId, instructions: 'solar panels', scope: { folder_ids: [folder.body.kb_node_id] } },
    });
    assert.equal(res.status, 202, res.text);
    const done = await waitForRun(t, res.body.run_id);
    assert.equal(done.state, 'failed');
    assert.match(done.reason, /nothing/);
  });
});

describe('POST /org/generation/runs: errors', () => {
  it('400 without a content type, and on an unknown field', async () => {
    assert.equal((await t.api('POST', '/org/generation/runs', { body: {} })).status, 400);
    const res = await t.api('POST', '/org/generation/runs', { body: { content_type_id: contentTypeId, colour: 'red' } });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /colour/);
  });
  it('404 for an unknown content type, product line or prompt', async () => {
    for (const body of [
      { content_type_id: randomUUID() },
      { content_type_id: contentTypeId, product_line_id: randomUUID() },
      { content_type_id: contentTypeId, geo_question_id: randomUUID() },
    ]) {
      const res = await t.api('POST', '/org/generation/runs', { body });
      assert.equal(res.status, 404, `${JSON.stringify(body)}: ${res.text}`);
    }
  });
  it('401 without a key; 404 for an unknown run', async () => {
    assert.equal((await t.api('POST', '/org/generation/runs', { body: { content_type_id: contentTypeId }, key: null })).status, 401);
    assert.equal((await t.api('GET', `/org/generation/runs/${randomUUID()}`)).status, 404);
    assert.equal((await t.api('GET', `/org/generation/drafts/${randomUUID()}`)).status, 404);
  });
  it('422 while the organization’s runs switch is off, and runs again once it is on', async () => {
    const admin = await t.api('POST', '/auth/login', { body: { email: 'admin@example.com', password: 'development-password' }, key: null });
    assert.equal(admin.status, 200, admin.text);
    const bearer = { authorization: `Bearer ${admin.body.token ?? admin.body.session_token}` };
    const off = await t.api('PATCH', '/org/me/runs-enabled', { body: { runs_enabled: false }, key: null, headers: bearer });
    assert.equal(off.status, 200, off.text);
    const refused = await eventually(async () => {
      const res = await t.api('POST', '/org/generation/runs', { body: { content_type_id: contentTypeId } });
      if (res.status === 202) await waitForRun(t, res.body.run_id);
      return res.status === 422 ? res : undefined;
    }, 'runs to be refused');
    assert.equal(refused.body.error.code, 'runs_disabled');
    const on = await t.api('PATCH', '/org/me/runs-enabled', { body: { runs_enabled: true }, key: null, headers: bearer });
    assert.equal(on.status, 200, on.text);
    await eventually(
      async () => (await t.api('POST', '/org/generation/runs', { body: { content_type_id: contentTypeId } })).status === 202,
      'runs to be accepted',
    );
  });
});

describe('generation runs survive a restart', () => {
  it('a run accepted just before the system stops completes after it starts again', async () => {
    const res = await t.api('POST', '/org/generation/runs', { body: { content_type_id: contentTypeId, geo_question_id: promptId } });
    assert.equal(res.status, 202, res.text);
    await t.restart();
    const done = await waitForRun(t, res.body.run_id);
    assert.equal(done.state, 'completed', done.reason);
    assert.equal((await t.api('GET', `/org/generation/drafts/${done.draft_id}`)).status, 200);
  });
});
