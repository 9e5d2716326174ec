import { afterAll, beforeAll, describe, it } from 'vitest';
import { describeOrSkip } from '@kb/testing';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { startTestSystem, type TestSystem } from './harness.js';
import { draftFeed, eventually } from './publishing-fixtures.js';
import { page as parsePage, publishDraft, sentence, withKey } from './hosted-fixtures.js';
import { chunksOf, postForm, waitForOutcome } from './ingest-helpers.js';

/**
 * Hosted pages as a reader gets them, in a real browser (Debian's Chromium driven
 * by playwright-core, as the console's tests do): sources named by their document
 * titles from the knowledge base, a readable measure in system fonts, dark mode,
 * print, a 375 px screen without sideways scrolling, and axe-core with no serious
 * or critical violation. Screenshots go to test/artifacts/hosted/.
 */
const root = new URL('../../', import.meta.url).pathname;
const shots = join(root, 'test/artifacts/hosted');
const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const skip = existsSync(executablePath) ? false : `no Chromium at ${executablePath} (apt-get install chromium, or set CHROMIUM_PATH)`;
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

const SOURCE_TITLE = 'Fastify Server reference';
const SOURCE_TEXT = `# Server

The server object is what calling fastify() returns.

## close

<a id="close"></a>
Calling \`fastify.close()\` stops the server from accepting new connections and then runs the \`onClose\` hooks of every plugin.

## listen

Starts the server on the given port and host; see [Hooks](./Hooks.md) for what runs before it answers.
`;

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
const shot = (page: Page, name: string) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
/** Runs a script in the page (written as text: this file is compiled without the DOM's types). */
const inPage = <T>(page: Page, script: string) => page.evaluate(script) as Promise<T>;
/** No sideways scrolling: nothing is wider than the screen. */
const fitsWidth = (page: Page) =>
  inPage<{ scroll: number; screen: number }>(
    page,
    '({ scroll: document.documentElement.scrollWidth, screen: document.documentElement.clientWidth })',
  );
const bodyStyle = (page: Page, property: 'fontFamily' | 'backgroundColor') =>
  inPage<string>(page, `getComputedStyle(document.body).${property}`);

describeOrSkip('hosted pages in Chromium', skip, () => {
  let t: TestSystem;
  let feed: ReturnType<typeof draftFeed>;
  let browser: Browser;
  let slug: string;
  let pageUrl: string;
  let sourceId: string;

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    t = await startTestSystem();
    feed = draftFeed(t.dataDir);
    const me = await t.api('GET', '/org/me');
    assert.equal(me.status, 200, me.text);
    slug = me.body.slug;

    // A document of the knowledge base, and a piece citing three of its chunks.
    const raw = await t.api('POST', '/org/kb/raw', { body: { title: SOURCE_TITLE, text: SOURCE_TEXT } });
    assert.equal(raw.status, 202, raw.text);
    sourceId = raw.body.id;
    const done = await waitForOutcome(t, raw.body.id);
    assert.equal(done.processing_status, 'completed', done.failure_reason);
    const { chunks, version_id } = await chunksOf(t, raw.body.id);
    const chunk = (words: RegExp) => {
      const c = chunks.find((x: { text: string }) => words.test(x.text));
      assert.ok(c, `a chunk with ${words}`);
      return { content_id: raw.body.id as string, version_id, chunk_id: `${version_id}:${c.chunk_index}`, quote: c.text as string };
    };
    const d = feed.draft(me.body.org_id, {
      format: 'markdown',
      title: 'Stopping a Fastify server cleanly',
      description: 'What `fastify.close()` does, and in which order, according to the server reference.',
      sections: [
        {
          section_id: 'what',
          title: 'What closing does',
          sentences: [
            sentence(0, 'Calling `fastify.close()` makes the server refuse **new** connections.', [chunk(/fastify\.close/)]),
            sentence(1, 'Every plugin’s `onClose` hooks run once the server has stopped, see [the reference](./Server.md#close).', [
              chunk(/onClose/),
            ]),
          ],
        },
        {
          section_id: 'listen',
          title: 'Starting again',
          sentences: [
            sentence(2, 'A server starts answering on the port and host that `listen` is given.', [chunk(/given port/)]),
            sentence(
              3,
              'The object a call to fastify() returns is the server itself, with a long name to wrap: averyveryveryverylongidentifierthatmustwrapratherthanscroll.',
              [chunk(/what calling fastify\(\) returns/)],
            ),
          ],
        },
      ],
      source_content_ids: [raw.body.id],
    });
    const pageSlug = await publishDraft(feed, withKey(t), d);
    pageUrl = `${t.url}/sites/${slug}/${pageSlug}`;
    // The title reaches publishing from ingest's events; the page is rendered again once it has.
    await eventually(async () => (await (await fetch(pageUrl)).text()).includes(`>${SOURCE_TITLE}</cite>`), 'source title on the page');

    browser = await chromium.launch({
      executablePath,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await feed?.close();
    await t?.stop();
  });

  describe('a published piece', () => {
    it('names every source by its document title and quotes spans without headings or anchors', async () => {
      const p = parsePage(await (await fetch(pageUrl)).text());
      // The piece quotes one document: listed once, however many spans it quotes.
      const cites = p.all((e) => e.name === 'cite');
      assert.equal(cites.length, 1);
      for (const c of cites) assert.equal(p.text(c), SOURCE_TITLE);
      const quotes = p.all((e) => e.name === 'blockquote').map((q) => p.text(q));
      for (const q of quotes) {
        assert.doesNotMatch(q, /^#|^(Server|close|listen)\b|<a id/, `quote "${q}"`);
        assert.ok(q.length > 20, q);
      }
      assert.doesNotMatch(p.text(p.one((e) => e.name === 'body')), /Source [0-9a-f]{8}-/);
      const spans = p.jsonLd()['@graph'][0].citation.map((c: { name: string }) => c.name);
      assert.ok(spans.length >= 3);
      assert.deepEqual(
        spans,
        spans.map(() => SOURCE_TITLE),
      );
    });

    it('reads well on a wide screen: system fonts, a measure of about 70 characters, no serious axe violation', async () => {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
      await page.goto(pageUrl);
      // The column's width in widths of "0" (CSS's ch) of the body text.
      const look = await inPage<{ font: string; width: number; ch: number }>(
        page,
        `(() => {
          const p = document.querySelector('article section p');
          const probe = document.createElement('span');
          probe.textContent = '0'.repeat(10);
          p.appendChild(probe);
          const ch = probe.getBoundingClientRect().width / 10;
          probe.remove();
          return { font: getComputedStyle(document.body).fontFamily, width: p.getBoundingClientRect().width, ch };
        })()`,
      );
      assert.match(look.font, /system-ui/);
      assert.doesNotMatch(look.font.split(',')[0]!, /serif|Times/i);
      const measure = look.width / look.ch;
      assert.ok(measure >= 55 && measure <= 80, `a line holds about ${measure.toFixed(0)} characters`);
      await axe(page, 'page, light');
      await shot(page, 'page-1280-light');

      await page.emulateMedia({ colorScheme: 'dark' });
      const background = await bodyStyle(page, 'backgroundColor');
      const [r, g, b] = (background.match(/\d+/g) ?? []).map(Number);
      assert.ok(r! + g! + b! < 120, `dark background, got ${background}`);
      await axe(page, 'page, dark');
      await shot(page, 'page-1280-dark');

      await page.emulateMedia({ media: 'print', colorScheme: 'light' });
      const print = await inPage<{ header: string; background: string }>(
        page,
        `({ header: getComputedStyle(document.querySelector('header.site')).display, background: getComputedStyle(document.body).backgroundColor })`,
      );
      assert.equal(print.header, 'none', 'print leaves the site chrome out');
      assert.equal(print.background, 'rgb(255, 255, 255)');
      await shot(page, 'page-print');
      await page.close();
    });

    it('fits a 375 px screen without sideways scrolling', async () => {
      const page = await browser.newPage({ viewport: { width: 375, height: 812 }, bypassCSP: true });
      await page.goto(pageUrl);
      const { scroll, screen } = await fitsWidth(page);
      assert.ok(scroll <= screen, `page is ${scroll} px wide on a ${screen} px screen`);
      await axe(page, 'page, 375 px');
      await shot(page, 'page-375');
      await page.close();
    });
  });

  describe('the site index and feed', () => {
    it('lists the piece with the same stylesheet, accessible and narrow-screen safe', async () => {
      const page = await browser.newPage({ viewport: { width: 375, height: 812 }, bypassCSP: true });
      await page.goto(`${t.url}/sites/${slug}/`);
      assert.equal(await page.getByRole('link', { name: 'Stopping a Fastify server cleanly' }).count(), 1);
      assert.match(await bodyStyle(page, 'fontFamily'), /system-ui/);
      const { scroll, screen } = await fitsWidth(page);
      assert.ok(scroll <= screen, `index is ${scroll} px wide on a ${screen} px screen`);
      await axe(page, 'index');
      await shot(page, 'index-375');
      await page.setViewportSize({ width: 1280, height: 900 });
      await shot(page, 'index-1280');
      await page.close();
    });

    it('offers an Atom feed whose entries carry plain titles, summaries and the site as author', async () => {
      const atom = await (await fetch(`${t.url}/sites/${slug}/feed.xml`)).text();
      assert.equal(XMLValidator.validate(atom), true);
      const doc = new XMLParser({ ignoreAttributes: false }).parse(atom).feed;
      assert.ok(doc.author.name);
      const [entry] = [doc.entry].flat();
      assert.equal(entry.title, 'Stopping a Fastify server cleanly');
      assert.equal(entry.summary, 'What fastify.close() does, and in which order, according to the server reference.');
      const index = parsePage(await (await fetch(`${t.url}/sites/${slug}/`)).text());
      const alternate = index.one((e) => e.name === 'link' && e.attribs.rel === 'alternate');
      assert.equal(alternate?.attribs.type, 'application/atom+xml');
    });
  });

  describe('a renamed source', () => {
    it('is named by its new title on pages already published', async () => {
      const renamed = await postForm(t, 'PATCH', `/content/file/${sourceId}`, [{ name: 'title', data: 'Fastify Server API' }]);
      assert.equal(renamed.status, 200, renamed.text);
      await eventually(
        async () => (await (await fetch(pageUrl)).text()).includes('>Fastify Server API</cite>'),
        'the new title on the page',
      );
      assert.doesNotMatch(await (await fetch(pageUrl)).text(), new RegExp(`>${SOURCE_TITLE}</cite>`));
    });
  });
});
