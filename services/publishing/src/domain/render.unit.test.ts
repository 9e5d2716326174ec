import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import type { DraftRevision } from '@kb/events';
import { jsonLd, renderArticleBody, renderLlmsTxt, renderPage, renderSharedRobots, shownSections, sitePageOf } from './render.js';

const site = { org_name: 'Acme', base_url: 'https://a.test' };
const page = { slug: 'p', title: 't', description: 'd', published_at: 'x', updated_at: 'y' };
const cite = (chunk_id: string, quote: string) => ({
  content_id: '00000000-0000-4000-8000-000000000001',
  version_id: '00000000-0000-4000-8000-000000000002',
  chunk_id,
  quote,
});
const sentence = (index: number, text: string, chunk?: string) => ({
  index,
  text,
  verdict: 'supported',
  citations: chunk ? [cite(chunk, `quote of ${chunk}`)] : [],
});
/** Sections: a full one, one without sentences, one whose only sentence is blank, another full one. */
const draft = (content_kind: 'article' | 'qa') =>
  ({
    draft_id: 'd',
    org_id: 'o',
    revision: 1,
    content_kind,
    title: 'Title',
    description: 'Desc',
    sections: [
      { section_id: 'a', title: 'What is it?', sentences: [sentence(0, 'It is a pump.', 'v:0')] },
      { section_id: 'empty', title: 'Nothing here', sentences: [] },
      { section_id: 'blank', title: 'Blank answer', sentences: [sentence(1, '  ', 'v:9')] },
      { section_id: 'b', title: 'How does it work?', sentences: [sentence(2, 'It moves heat.', 'v:1'), sentence(3, 'Quietly.')] },
    ],
    source_folder_ids: [],
    stale_sources: [],
  }) as unknown as DraftRevision;

type Graph = { '@type': string; mainEntity?: { '@type': string; name: string; acceptedAnswer: { '@type': string; text: string } }[] }[];
const graphOf = (d: DraftRevision) => (jsonLd(site, page, d) as { '@graph': Graph })['@graph'];

describe('sections without sentences', () => {
  it('are left out of the article body, heading and all', () => {
    const body = renderArticleBody(draft('article'));
    assert.doesNotMatch(body, /Nothing here|Blank answer|id="empty"|id="blank"/);
    assert.deepEqual(
      [...body.matchAll(/<h2>([^<]*)<\/h2>/g)].map((m) => m[1]),
      ['What is it?', 'How does it work?', 'Sources'],
    );
    assert.equal((body.match(/<section /g) ?? []).length, 2);
    assert.doesNotMatch(body, /<p><\/p>/);
  });

  it('number and list only the references the shown sentences cite', () => {
    const body = renderArticleBody(draft('article'));
    assert.match(body, /It is a pump\.<sup><a class="cite" href="#ref-1" title="quote of v:0">\[1\]<\/a><\/sup>/);
    assert.match(body, /It moves heat\.<sup><a class="cite" href="#ref-2" title="quote of v:1">\[2\]<\/a><\/sup>/);
    assert.doesNotMatch(body, /quote of v:9|ref-3/);
    const citation = graphOf(draft('article'))[0] as unknown as { citation: { identifier: string }[] };
    assert.deepEqual(
      citation.citation.map((c) => c.identifier),
      ['v:0', 'v:1'],
    );
  });

  it('give a FAQPage no Question, so no answer is ever empty', () => {
    const faq = graphOf(draft('qa')).find((g) => g['@type'] === 'FAQPage')!;
    assert.deepEqual(
      faq.mainEntity!.map((q) => [q.name, q.acceptedAnswer.text]),
      [
        ['What is it?', 'It is a pump.'],
        ['How does it work?', 'It moves heat. Quietly.'],
      ],
    );
    for (const q of faq.mainEntity!) assert.ok(q.acceptedAnswer.text.trim().length > 0);
  });

  it('leave no FAQPage at all when no section has a sentence, and no section on the page', () => {
    const empty = {
      ...draft('qa'),
      sections: [
        { section_id: 'x', title: 'Q?', sentences: [] },
        { section_id: 'y', title: 'R?', sentences: [sentence(0, '')] },
      ],
    } as unknown as DraftRevision;
    assert.deepEqual(
      graphOf(empty).map((g) => g['@type']),
      ['Article'],
    );
    const html = renderPage(site, page, empty);
    assert.doesNotMatch(html, /<section |Q\?|R\?|FAQPage/);
    assert.deepEqual(shownSections(empty), []);
  });

  it('keep every section that has a sentence, as it was', () => {
    const d = draft('qa');
    assert.deepEqual(
      shownSections(d).map((s) => s.section_id),
      ['a', 'b'],
    );
    assert.deepEqual(shownSections(d)[1], d.sections[3]);
    assert.deepEqual(
      graphOf(draft('article')).map((g) => g['@type']),
      ['Article'],
    );
  });
});

describe('sources and plain text', () => {
  it('name each source by its document title, and neutrally while the title is unknown', () => {
    const titles = new Map([['00000000-0000-4000-8000-000000000001', 'Pump manual']]);
    const body = renderArticleBody(draft('article'), titles);
    // One document, listed once, its two quoted spans beneath it, each still under its own number.
    assert.equal((body.match(/>Pump manual<\/cite>/g) ?? []).length, 1);
    assert.match(
      body,
      /<li id="ref-1" value="1"[^>]*><blockquote>quote of v:0<\/blockquote><\/li>\n<li id="ref-2" value="2"[^>]*><blockquote>quote of v:1<\/blockquote>/,
    );
    assert.doesNotMatch(body, /Source 0000/);
    assert.match(renderArticleBody(draft('article')), />Source document<\/cite>/);
    const citation = (jsonLd(site, page, draft('article'), titles)['@graph'] as { citation: { name: string }[] }[])[0]!.citation;
    assert.deepEqual(
      citation.map((c) => c.name),
      ['Pump manual', 'Pump manual'],
    );
  });

  it('list pages in llms.txt by their plain titles', () => {
    const listed = sitePageOf(page, {
      title: 'A **bold** [pump](https://x.test)',
      description: 'Uses `heat`.\nQuietly.',
      format: 'markdown',
    });
    assert.equal(
      renderLlmsTxt(site, [listed]),
      '# Acme\n\n> Verified content published by Acme; every factual sentence cites its source.\n\n## Pages\n\n- [A bold pump](https://a.test/p): Uses heat. Quietly.\n',
    );
  });

  it('name every sitemap in the shared robots.txt and keep crawlers out of the API', () => {
    assert.equal(
      renderSharedRobots(['https://h.test/sites/a/sitemap.xml', 'https://h.test/sites/b/sitemap.xml']),
      'User-agent: *\nAllow: /sites/\nDisallow: /api/\n\nSitemap: https://h.test/sites/a/sitemap.xml\nSitemap: https://h.test/sites/b/sitemap.xml\n',
    );
  });
});

describe('paragraphs', () => {
  it("render each of a section's paragraphs as its own <p>, a section without paragraph numbers as one", () => {
    const d = draft('article');
    const withParagraphs: DraftRevision = {
      ...d,
      sections: [
        {
          section_id: 's1',
          title: 'Pumps',
          sentences: [
            { ...sentence(0, 'It is a pump.', 'v:1'), paragraph: 0 },
            { ...sentence(1, 'It moves heat.', 'v:2'), paragraph: 0 },
            { ...sentence(2, 'Service it yearly.', 'v:1'), paragraph: 1 },
          ],
        },
      ] as DraftRevision['sections'],
    };
    const body = renderArticleBody(withParagraphs);
    assert.equal((body.match(/<p>/g) ?? []).length, 2, body);
    assert.match(body, /It moves heat\.<sup>.*<\/sup><\/p><p>Service it yearly\./);
    assert.equal((renderArticleBody(d).match(/<section[^>]*><h2>[^<]*<\/h2><p>/g) ?? []).length, 2);
  });
});
