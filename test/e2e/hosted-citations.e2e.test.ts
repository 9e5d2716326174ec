import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { TestSystem } from './harness.js';
import type { draftFeed } from './publishing-fixtures.js';
import { citation, page, publishDraft, sentence, startHostedSystem, withKey } from './hosted-fixtures.js';

/**
 * A hosted page's citations: every [n] leads to the span that backs its own
 * sentence, even when several sentences cite different words of the same chunk,
 * and the quotes carry no heading or anchor that chunking glued to them.
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

describe('hosted citations', () => {
  it('show each sentence the span that backs it, and list every cited span in JSON-LD', async () => {
    const server = { content_id: randomUUID(), version_id: randomUUID() };
    const plugins = { content_id: randomUUID(), version_id: randomUUID() };
    // Three sentences quote different words of chunk 0 of one document; the first quote starts at its heading.
    const closeQuote = citation('## Server\n\n<a id="close"></a>\nThe close method stops the server from accepting new connections.', {
      ...server,
      chunk: 0,
    });
    const waitQuote = citation('It then waits for every open connection to end.', { ...server, chunk: 0 });
    const hookQuote = citation('The onClose hooks run after the server stops.', { ...server, chunk: 0 });
    const pluginQuote = citation('Setext heading\n==============\nPlugins load in the order they are registered.', {
      ...plugins,
      chunk: 3,
    });
    const d = feed.draft(org, {
      title: 'Closing a server',
      sections: [
        {
          section_id: 's1',
          title: 'Stopping',
          sentences: [
            sentence(0, 'Closing stops new connections.', [closeQuote]),
            sentence(1, 'Open connections are allowed to end.', [waitQuote]),
            sentence(2, 'Close hooks run afterwards.', [hookQuote]),
          ],
        },
        {
          section_id: 's2',
          title: 'Order',
          sentences: [
            sentence(3, 'Plugins load in registration order.', [pluginQuote]),
            // The same span again keeps its number.
            sentence(4, 'New connections are refused once closing starts.', [closeQuote]),
          ],
        },
      ],
      source_content_ids: [server.content_id, plugins.content_id],
    });
    const pageSlug = await publishDraft(feed, withKey(t), d);
    const res = await fetch(`${t.url}/sites/${slug}/${pageSlug}`);
    assert.equal(res.status, 200);
    const p = page(await res.text());

    const expected = [
      ['Closing stops new connections.', 'The close method stops the server from accepting new connections.'],
      ['Open connections are allowed to end.', 'It then waits for every open connection to end.'],
      ['Close hooks run afterwards.', 'The onClose hooks run after the server stops.'],
      ['Plugins load in registration order.', 'Plugins load in the order they are registered.'],
      ['New connections are refused once closing starts.', 'The close method stops the server from accepting new connections.'],
    ];
    const marks = p.all((e) => e.name === 'a' && e.attribs.class === 'cite');
    assert.equal(marks.length, expected.length, 'one mark per cited sentence');
    const paragraphs = p.all((e) => e.name === 'p' && e.parent?.type === 'tag' && (e.parent as { name?: string }).name === 'section');
    const shownText = paragraphs.map((x) => p.text(x)).join(' ');
    for (const [i, [text, quote]] of expected.entries()) {
      const href = marks[i]!.attribs.href!;
      assert.ok(shownText.includes(`${text}[${href.replace('#ref-', '')}]`), `${text} carries ${href}`);
      const ref = p.one((e) => e.attribs.id === href.slice(1));
      const shown = p.text(p.one((e) => e.name === 'blockquote' && e.parent === ref));
      assert.equal(shown, quote, `[${href}] of "${text}" quotes its own span`);
    }
    assert.equal(marks[4]!.attribs.href, marks[0]!.attribs.href, 'the same span keeps its number');
    const refs = p.all((e) => e.name === 'li' && /^ref-\d+$/.test(e.attribs.id ?? ''));
    assert.equal(refs.length, 4, 'one reference per distinct span');
    for (const r of refs) assert.doesNotMatch(p.text(r), /##|Server\s*The close|<a id|Setext heading|====/);

    const article = p.jsonLd()['@graph'][0];
    const cited = article.citation as { identifier: string; text: string }[];
    assert.deepEqual(
      cited.map((c) => c.text),
      expected.slice(0, 4).map(([, q]) => q),
      'JSON-LD lists every cited span',
    );
    assert.deepEqual(new Set(cited.map((c) => c.identifier)), new Set([closeQuote.chunk_id, pluginQuote.chunk_id]));
  });
});
