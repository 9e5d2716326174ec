import { afterAll, beforeAll, it } from 'vitest';
import { describeOrSkip } from '@kb/testing';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium, type Browser, type Page } from 'playwright-core';
import { developmentDefaults } from '@kb/all-in-one';
import { startTestSystem, type TestSystem } from './harness.js';

/**
 * The web console in a real browser (Debian's Chromium, driven by
 * playwright-core; nothing is downloaded): the journeys a newcomer takes, an
 * axe-core accessibility check on every screen, a narrow screen, and the size of
 * the first load. Screenshots of each screen go to test/artifacts/console/.
 */
const root = new URL('../../', import.meta.url).pathname;
const consoleDir = join(root, 'web/console/dist');
const shots = join(root, 'test/artifacts/console');
const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const skip = existsSync(executablePath) ? false : `no Chromium at ${executablePath} (apt-get install chromium, or set CHROMIUM_PATH)`;
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const pdf = join(root, 'test/fixtures/formats/sample.pdf');

async function axe(page: Page, screen: string) {
  await page.addScriptTag({ content: axeSource });
  const violations = await page.evaluate(async () => {
    const result = await (
      globalThis as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string; nodes: unknown[] }[] }> } }
    ).axe.run();
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
  });
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(serious, [], `${screen}: accessibility violations ${JSON.stringify(serious)}`);
}

/** How many pixels the page is wider than the window (0: no sideways scrolling). */
const overflowOf = (page: Page) =>
  page.evaluate(() => {
    const g = globalThis as unknown as { document: { documentElement: { scrollWidth: number } }; innerWidth: number };
    return g.document.documentElement.scrollWidth - g.innerWidth;
  });

/** Every section of the console, as its navigation names it, with a region each shows once loaded. */
const SECTIONS: [link: string, region: string][] = [
  ['Knowledge base', 'All content'],
  ['Search', 'Ask the knowledge base'],
  ['Categories', 'Categories and topics'],
  ['Generation', 'Content types'],
  ['Review', 'Review queue'],
  ['Analytics', 'Overview'],
  ['Organization', 'Destinations'],
];

const shot = (page: Page, name: string) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });

describeOrSkip('web console in Chromium', skip, () => {
  let t: TestSystem;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    execFileSync(process.execPath, [join(root, 'scripts/build-console.mjs')], { stdio: 'inherit' });
    mkdirSync(shots, { recursive: true });
    t = await startTestSystem({ CONSOLE_DIR: consoleDir });
    browser = await chromium.launch({
      executablePath,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    // bypassCSP lets the test inject axe-core; the console itself runs under its strict CSP.
    page = await browser.newPage({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  it('keeps the first load under 200 KB of compressed JavaScript', () => {
    const assets = join(consoleDir, 'assets');
    const js = readdirSync(assets).filter((f) => f.endsWith('.js'));
    const gz = js.reduce((n, f) => n + gzipSync(readFileSync(join(assets, f))).length, 0);
    assert.ok(js.length > 0);
    assert.ok(gz < 200 * 1024, `first load is ${gz} bytes of gzipped JavaScript`);
  });

  it('refuses a wrong password, then signs in with the bootstrap admin', async () => {
    await page.goto(`${t.url}/`);
    await page.getByLabel('Email').fill(developmentDefaults.BOOTSTRAP_ADMIN_EMAIL);
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    await axe(page, 'sign in');
    await shot(page, '01-sign-in');
    await page.getByLabel('Password').fill(developmentDefaults.BOOTSTRAP_ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Sections' }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'Knowledge base' }).getAttribute('aria-current'), 'page');
  });

  it('uploads a PDF, shows its progress and watches it complete, then opens its chunks', async () => {
    await page.locator('input[type=file]').first().setInputFiles(pdf);
    await page.getByText('Uploaded').waitFor({ timeout: 30_000 });
    const row = page.getByRole('row', { name: /sample\.pdf/ });
    await row.getByText('Completed').waitFor({ timeout: 60_000 });
    await axe(page, 'knowledge base');
    await shot(page, '02-knowledge-base');
    await row.getByRole('link', { name: 'sample.pdf' }).click();
    await page.getByText('The panels carry a twenty five year performance warranty.').first().waitFor();
    await shot(page, '03-content-detail');
  });

  it('asks a question and opens the cited passage', async () => {
    await page.getByRole('link', { name: 'Search' }).click();
    await page.getByLabel('Question').fill('How long is the panel warranty?');
    await page.getByRole('button', { name: 'Ask' }).click();
    const cite = page.getByRole('button', { name: /^Source 1/ }).first();
    await cite.waitFor({ timeout: 30_000 });
    await cite.click();
    const passage = page.getByRole('blockquote', { name: 'Cited passage 1' });
    await passage.waitFor();
    assert.match((await passage.textContent()) ?? '', /warranty/i);
    await axe(page, 'search');
    await shot(page, '04-search');
  });

  it('reads the analytics after importing answers: chart, ratios with their counts, latest answers by tier', async () => {
    const prompt = await t.api('POST', '/org/prompts', { body: { name: 'Best solar panels', text: 'Which solar panels last longest?' } });
    // n days before now (never in the future, whatever the time of day the test runs at).
    const at = (n: number) => new Date(Date.now() - n * 86_400_000 - 60_000).toISOString();
    const answers = [0, 1, 2, 3].map((n) => ({
      prompt_id: prompt.body.prompt_id,
      model: 'gpt-4o',
      run_at: at(n),
      text: n % 2 ? 'Development panels last longest, then Globex.' : 'Globex leads.',
      citations: ['https://development.example/warranty', 'https://news.example.org/solar'],
      brands: n % 2 ? ['Development', 'Globex'] : ['Globex'],
    }));
    assert.equal((await t.api('POST', '/org/analytics/answers/import', { body: answers })).status, 200);
    await page.getByRole('link', { name: 'Analytics' }).click();
    await page.getByRole('region', { name: 'Overview' }).waitFor();
    await page.locator('.chart canvas').waitFor();
    const ratio = page.locator('.metrics .ratio').nth(1); // citation rate
    await ratio.hover();
    assert.match((await ratio.locator('[role=tooltip]').textContent()) ?? '', /^4 \/ 4 answers$/);
    await page
      .getByRole('region', { name: /Latest answers/ })
      .getByText('External')
      .first()
      .waitFor();
    await axe(page, 'analytics');
    await shot(page, '05-analytics');
  });

  it('creates an API key limited to a folder and shows it once', async () => {
    await t.api('POST', '/org/kb/folders', { body: { name: 'Handbooks' } });
    await page.getByRole('link', { name: 'Organization' }).click();
    await page.getByLabel('New key name').fill('Handbook bot');
    await page.getByLabel('Limit to folders').check();
    await page.getByLabel('Handbooks', { exact: true }).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.getByTestId('new-key').textContent()) ?? '';
    assert.match(key, /^kb_/);
    await page
      .getByRole('row', { name: /Handbook bot/ })
      .getByText('1 folder(s)')
      .waitFor();
    // The key works on the public API and is limited to its folder.
    const tree = await t.api('GET', '/org/kb/tree', { key });
    assert.equal(tree.status, 403);
    // Destinations (secrets never shown) and lifecycle webhooks.
    await page.getByRole('region', { name: 'Destinations' }).getByRole('cell', { name: 'Hosted pages (default set)' }).waitFor();
    await page.getByLabel('Subscription URL').fill('https://hooks.example.test/kb');
    await page.getByLabel('prompt.lost').check();
    await page.getByLabel('Signing secret', { exact: true }).last().fill('a-signing-secret-of-32-characters');
    await page.getByRole('button', { name: 'Subscribe' }).click();
    await page.getByText('https://hooks.example.test/kb').waitFor();
    assert.deepEqual(
      (await t.api('GET', '/org/webhooks')).body.map((s: { url: string; event_kinds: string[] }) => [s.url, s.event_kinds]),
      [['https://hooks.example.test/kb', ['prompt.lost']]],
    );
    await axe(page, 'organization');
    await shot(page, '06-organization');
  });

  it('edits the brand kit, creates a content type, runs it, reads the verified draft, then approves and publishes it', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.getByRole('link', { name: 'Generation' }).click();
    await page.getByRole('region', { name: 'Brand kit' }).waitFor();
    await page.getByLabel('Voice').fill('Plain and warm');
    await page.getByRole('button', { name: 'Save brand kit' }).click();
    await page.getByText('Brand kit saved.').waitFor();
    assert.equal((await t.api('GET', '/org/brand-kit')).body.guidelines.voice, 'Plain and warm');

    // Runs come first on the page; a content type is made in the form below them.
    await page.getByRole('button', { name: 'New content type' }).click();
    await page.locator('#ct-name').fill('Warranty note');
    await page.locator('select[name="c.kind"]').selectOption('article');
    await page.getByRole('button', { name: 'Create content type' }).click();
    await page.getByRole('option', { name: 'Warranty note' }).waitFor({ state: 'attached' });
    await page.getByLabel('Instructions').fill('How long is the solar panel warranty?');
    await page.getByRole('button', { name: 'Start run' }).click();
    const open = page.getByRole('link', { name: 'Open draft' }).first();
    await open.waitFor({ timeout: 90_000 });
    await axe(page, 'generation');
    await shot(page, '07-generation');

    await open.click();
    // Under every supported sentence, the source's own words and where they are.
    const first = page
      .locator('.draft-sentences li')
      .filter({ has: page.locator('.sentence.v-supported') })
      .first();
    await first.waitFor();
    assert.match((await first.locator('.source-span').first().textContent()) ?? '', /^Source says: “.+” — .+, chunk \d+$/s);
    await axe(page, 'draft');
    await shot(page, '08-draft');

    await page.getByRole('link', { name: 'Review this piece' }).click();
    const submit = page.getByRole('button', { name: 'Submit for review' });
    await submit.waitFor({ timeout: 30_000 });
    await submit.click();
    await page.getByText('Submitted for review.').waitFor();
    const approve = page.getByRole('button', { name: 'Approve' });
    await approve.waitFor({ timeout: 30_000 });
    await approve.click();
    await page.getByText('Approved.').waitFor();
    await page.getByRole('button', { name: 'Publish', exact: true }).click();
    await page.getByText('Published.').waitFor();
    await page.getByRole('heading', { name: 'Publications' }).waitFor();
    const link = await page.locator('a[href*="/sites/"]').first().getAttribute('href');
    assert.ok(link, 'the hosted page is linked');
    // The page's canonical URL names the configured public origin; it is served here under the same path.
    assert.equal((await fetch(`${t.url}${new URL(link, t.url).pathname}`)).status, 200, 'and it serves');
    await axe(page, 'review');
    await shot(page, '09-review');
  });

  it('edits a content type in the form: sections added and removed, the JSON view alongside', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.getByRole('link', { name: 'Generation' }).click();
    const types = page.getByRole('region', { name: 'Content types' });
    await types.getByRole('button', { name: 'Edit Warranty note' }).click();
    await types.getByRole('button', { name: 'Add section' }).click();
    await types.getByRole('button', { name: 'Add section' }).click();
    const titles = types.getByLabel('Title', { exact: true });
    await titles.nth(0).fill('Warranty length');
    await titles.nth(1).fill('To be removed');
    await titles.nth(2).fill('Making a claim');
    await types.getByRole('button', { name: 'Remove section 2' }).click();
    await types.getByRole('button', { name: 'JSON' }).click();
    const json = JSON.parse(await types.getByLabel('Configuration (JSON)').inputValue());
    assert.deepEqual(json.sections, [{ title: 'Warranty length' }, { title: 'Making a claim' }]);
    await types.getByRole('button', { name: 'Form' }).click();
    await types.getByRole('button', { name: 'Save content type' }).click();
    await types.getByText('Sections: Warranty length, Making a claim').waitFor();
    const saved = (await t.api('GET', '/org/content-types?limit=100')).body.find((c: { name: string }) => c.name === 'Warranty note');
    assert.deepEqual(saved.config.sections, [{ title: 'Warranty length' }, { title: 'Making a claim' }]);
    // Preferred terms of the brand kit: a term and what it replaces, as fields.
    const kit = page.getByRole('region', { name: 'Brand kit' });
    assert.equal(await kit.getByText('Dont rules').count(), 0);
    await kit.getByText("Don't rules").waitFor();
    await kit.getByRole('button', { name: 'Add preferred term' }).click();
    await kit.getByLabel('Term', { exact: true }).fill('solar panel');
    await kit.getByLabel('Instead of').fill('PV module\nsolar module');
    await kit.getByRole('button', { name: 'Save brand kit' }).click();
    await kit.getByText('Brand kit saved.').waitFor();
    assert.deepEqual((await t.api('GET', '/org/brand-kit')).body.guidelines.preferred_terms, [
      { term: 'solar panel', instead_of: ['PV module', 'solar module'] },
    ]);
    await axe(page, 'generation forms');
    await shot(page, '10-generation-forms');
  });

  for (const width of [1280, 375]) {
    it(`shows every page without sideways scrolling at ${width} px`, async () => {
      await page.setViewportSize({ width, height: 800 });
      const wide: string[] = [];
      for (const [link, region] of SECTIONS) {
        await page.getByRole('link', { name: link, exact: true }).click();
        await page.getByRole('region', { name: region }).first().waitFor();
        const overflow = await overflowOf(page);
        if (overflow > 0) wide.push(`${link}: ${overflow}px wider than the window`);
      }
      // An item's detail, opened from the list, comes into view.
      await page.getByRole('link', { name: 'Knowledge base', exact: true }).click();
      await page
        .getByRole('row', { name: /sample\.pdf/ })
        .getByRole('link', { name: 'sample.pdf' })
        .click();
      const detail = page.locator('.content-detail');
      await detail.waitFor();
      await page.waitForFunction(() => {
        const el = (
          globalThis as unknown as { document: { querySelector(s: string): { getBoundingClientRect(): { top: number } } | null } }
        ).document.querySelector('.content-detail');
        const g = globalThis as unknown as { innerHeight: number };
        return el !== null && el.getBoundingClientRect().top < g.innerHeight && el.getBoundingClientRect().top > -50;
      });
      const overflow = await overflowOf(page);
      if (overflow > 0) wide.push(`content detail: ${overflow}px wider than the window`);
      assert.deepEqual(wide, []);
      await shot(page, width === 375 ? '11-narrow' : '12-content-detail-in-view');
    });
  }
});
