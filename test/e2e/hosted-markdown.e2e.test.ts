import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { TestSystem } from './harness.js';
import type { draftFeed } from './publishing-fixtures.js';
import { citation, page, publishDraft, sentence, startHostedSystem, withKey } from './hosted-fixtures.js';

/**
 * A piece whose content type writes Markdown: the page shows it rendered (and
 * safe), links that lead nowhere from the page lose their link but keep their
 * words, and every place that wants text (meta tags, JSON-LD, the Atom feed,
 * llms.txt) gets plain text.
 */
let t: TestSystem;
let feed: ReturnType<typeof draftFeed>;
let org: string;
let slug: string;

beforeAll(async () => {
  ({ t, feed, org, slug } = await startHostedSystem());
});
afterAll(async () => {
  await feed?.close();
  await t?.stop();
});

const site = async (path: string) => {
  const res = await fetch(`${t.url}/sites/${slug}/${path}`);
  assert.equal(res.status, 200, path);
  return res.text();
};

describe('Markdown on hosted pages', () => {
  let pageSlug: string;

  beforeAll(async () => {
    const d = feed.draft(org, {
      format: 'markdown',
      content_kind: 'qa',
      title: 'Closing a **Fastify** server',
      description: 'How `fastify.close()` works, from [the docs](https://fastify.dev/docs/latest/).',
      sections: [
        {
          section_id: 'q1',
          title: 'What does `close()` do?',
          sentences: [
            sentence(0, 'Call `fastify.close()` to **stop** the server, see [Server](./Server.md#close).', [
              citation('Calls `server.close()` and runs the `onClose` hooks.'),
            ]),
            sentence(
              1,
              'Read [the reference](https://fastify.dev/docs/latest/Reference/Server/) <script>alert(1)</script> ![diagram](./close.png).',
              [citation('See [Hooks](../Hooks.md) for the order.')],
            ),
          ],
        },
      ],
    });
    pageSlug = await publishDraft(feed, withKey(t), d);
  });

  it('renders the sentences, headings and quotes as HTML, keeping only links that lead somewhere', async () => {
    const html = await site(pageSlug);
    const p = page(html);
    const article = p.one((e) => e.name === 'article')!;
    const inArticle = (name: string) => p.allIn(article, (e) => e.name === name);
    const codes = inArticle('code').map((e) => p.text(e));
    for (const c of ['fastify.close()', 'close()', 'server.close()', 'onClose'])
      assert.ok(codes.includes(c), `<code>${c}</code> in ${codes.join(', ')}`);
    assert.deepEqual(
      inArticle('strong').map((e) => p.text(e)),
      ['Fastify', 'stop'],
    );
    assert.doesNotMatch(p.text(article), /\*\*|`|\]\(/, 'no Markdown syntax left on the page');
    const hrefs = inArticle('a').map((e) => e.attribs.href ?? '');
    assert.ok(hrefs.includes('https://fastify.dev/docs/latest/Reference/Server/'));
    for (const h of hrefs) assert.match(h, /^(https:\/\/|#ref-\d+$)/, `no link that leads nowhere: ${h}`);
    assert.match(p.text(article), /see Server\./, 'a dropped link keeps its words');
    assert.match(p.text(article), /See Hooks for the order\./);
    assert.equal(p.all((e) => e.name === 'img').length, 0, 'a relative image is not hotlinked');
    assert.equal(p.all((e) => e.name === 'script' && e.attribs.type !== 'application/ld+json').length, 0, 'raw HTML is never let through');
    assert.match(p.text(article), /<script>alert\(1\)<\/script>/, 'it is shown as text');
  });

  it('puts plain text in the title, meta tags and JSON-LD', async () => {
    const p = page(await site(pageSlug));
    assert.equal(p.text(p.one((e) => e.name === 'title')), 'Closing a Fastify server');
    assert.equal(p.meta('name', 'description'), 'How fastify.close() works, from the docs.');
    assert.equal(p.meta('property', 'og:title'), 'Closing a Fastify server');
    assert.equal(p.meta('property', 'og:description'), 'How fastify.close() works, from the docs.');
    const [article, faq] = p.jsonLd()['@graph'];
    assert.equal(article.headline, 'Closing a Fastify server');
    assert.equal(article.description, 'How fastify.close() works, from the docs.');
    assert.equal(article.citation[0].text, 'Calls server.close() and runs the onClose hooks.');
    assert.equal(faq.mainEntity[0].name, 'What does close() do?');
    assert.match(faq.mainEntity[0].acceptedAnswer.text, /^Call fastify\.close\(\) to stop the server, see Server\. Read the reference/);
  });

  it('puts plain text in the Atom feed, llms.txt and the index', async () => {
    const atom = await site('feed.xml');
    assert.equal(XMLValidator.validate(atom), true);
    const entries = [new XMLParser({ ignoreAttributes: false }).parse(atom).feed.entry].flat();
    const entry = entries.find((e: { id: string }) => e.id.endsWith(`/${pageSlug}`));
    assert.equal(entry.title, 'Closing a Fastify server');
    assert.equal(entry.summary, 'How fastify.close() works, from the docs.');
    const llms = await site('llms.txt');
    const line = llms.split('\n').find((l) => l.includes(`/sites/${slug}/${pageSlug})`));
    assert.match(line ?? '', /^- \[Closing a Fastify server\]\(https?:\/\/\S+\): How fastify\.close\(\) works, from the docs\.$/, llms);
    assert.doesNotMatch(llms, /\*\*|`|<strong>/);
    const index = page(await site(''));
    const link = index.one((e) => e.name === 'a' && (e.attribs.href ?? '').endsWith(`/${pageSlug}`));
    assert.equal(index.text(link), 'Closing a Fastify server');
  });
});
