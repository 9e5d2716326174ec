import type { DraftRevision } from '@kb/events';
import { markdownInlineHtml, markdownPlainText } from './markdown.js';
import { referencesOf, sourceLabel, type Reference, type SourceTitles } from './references.js';
import { HOSTED_CSS } from './stylesheet.js';

export type { SourceTitles } from './references.js';

/** The hosted site of one organization: where its pages live and what they are called. */
export interface Site {
  org_name: string;
  /** Absolute URL of the site root, without a trailing slash (custom domain or /sites/<slug>). */
  base_url: string;
}

export interface SitePage {
  slug: string;
  title: string;
  description: string;
  published_at: string;
  updated_at: string;
}

const esc = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
/** JSON inside <script>: no "</script>" can close it early. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');

export const pageUrl = (site: Site, slug: string) => `${site.base_url}/${slug}`;

/** Lower-case words joined by dashes, at most 80 characters. */
export function slugify(title: string): string {
  const s = title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80)
    .replace(/-+$/g, '');
  return s || 'piece';
}

type Section = DraftRevision['sections'][number];
type Sentence = Section['sentences'][number];
type Format = DraftRevision['format'];

/** A draft's text as a reader sees it, without markup: for meta tags, feeds, llms.txt and JSON-LD. */
export const plainText = (text: string, format: Format) =>
  format === 'markdown' ? markdownPlainText(text) : text.replace(/\s+/g, ' ').trim();
/** A draft's text as page HTML: Markdown rendered when the content type writes Markdown, else escaped. */
const inlineHtml = (text: string, format: Format) => (format === 'markdown' ? markdownInlineHtml(text) : esc(text));
/** A cited span is the source's own text, which is often Markdown: rendered as such, links and HTML made safe. */
const quoteHtml = (quote: string) => markdownInlineHtml(quote);

/** The listing of a live page (index, sitemap, feeds): its title and description as plain text. */
export function sitePageOf(page: Omit<SitePage, 'title' | 'description'>, draft: Pick<DraftRevision, 'title' | 'description' | 'format'>) {
  return { ...page, title: plainText(draft.title, draft.format), description: plainText(draft.description, draft.format) };
}

/**
 * The sections a page shows: sentences with text only, and only sections left
 * with at least one, so no heading stands over nothing and no FAQ answer is empty.
 */
export function shownSections(draft: Pick<DraftRevision, 'sections'>): Section[] {
  return draft.sections
    .map((s) => ({ ...s, sentences: s.sentences.filter((x) => x.text.trim().length > 0) }))
    .filter((s) => s.sentences.length > 0);
}

export function jsonLd(site: Site, page: SitePage, draft: DraftRevision, titles: SourceTitles = new Map()): Record<string, unknown> {
  const url = pageUrl(site, page.slug);
  const sections = shownSections(draft);
  const { refs } = referencesOf(sections);
  const plain = (text: string) => plainText(text, draft.format);
  const article = {
    '@type': 'Article',
    '@id': `${url}#article`,
    headline: plain(draft.title),
    description: plain(draft.description),
    url,
    mainEntityOfPage: url,
    datePublished: page.published_at,
    dateModified: page.updated_at,
    author: { '@type': 'Organization', name: site.org_name },
    publisher: { '@type': 'Organization', name: site.org_name },
    // Every span the page cites, each named by the document it comes from.
    citation: refs.map((r) => ({
      '@type': 'CreativeWork',
      ...(titles.has(r.content_id) && { name: titles.get(r.content_id) }),
      identifier: r.chunk_id,
      text: markdownPlainText(r.quote),
    })),
  };
  const graph: Record<string, unknown>[] = [article];
  // A Question with an empty answer is invalid FAQPage markup; a FAQPage without questions is left out.
  const questions = sections
    .map((s) => ({ name: plain(s.title), text: s.sentences.map((x) => plain(x.text)).join(' ') }))
    .filter((q) => q.text.trim().length > 0)
    .map((q) => ({ '@type': 'Question', name: q.name, acceptedAnswer: { '@type': 'Answer', text: q.text } }));
  if (draft.content_kind === 'qa' && questions.length > 0) graph.push({ '@type': 'FAQPage', '@id': `${url}#faq`, mainEntity: questions });
  return { '@context': 'https://schema.org', '@graph': graph };
}

/**
 * The article's body: sections in the draft's paragraphs, with inline citation
 * marks linking to the numbered references, each the span that backs the
 * sentences marked with it (and naming it on hover). The sources list each cited
 * document once, by its title, with its quoted spans folded beneath it, so the
 * page does not read twice. Also what CMS destinations get. A section without
 * sentences is left out, heading and all.
 */
export function renderArticleBody(draft: DraftRevision, titles: SourceTitles = new Map()): string {
  const shown = shownSections(draft);
  const { refs, numbersOf } = referencesOf(shown);
  const quoteOf = new Map(refs.map((r) => [r.n, markdownPlainText(r.quote)]));
  const sections = shown
    .map((s) => {
      const sentence = (x: Sentence) => {
        // Each mark names its own quote (shown on hover) and links to it in the sources.
        const marks = numbersOf(x)
          .map((n) => `<sup><a class="cite" href="#ref-${n}" title="${esc(quoteOf.get(n) ?? '')}">[${n}]</a></sup>`)
          .join('');
        return `${inlineHtml(x.text, draft.format)}${marks}`;
      };
      const paragraphs = paragraphsOf(s.sentences)
        .map((p) => `<p>${p.map(sentence).join(' ')}</p>`)
        .join('');
      return `<section id="${esc(s.section_id)}">${s.title ? `<h2>${inlineHtml(s.title, draft.format)}</h2>` : ''}${paragraphs}</section>`;
    })
    .join('\n');
  if (refs.length === 0) return sections;
  // Each document once, under its title, with the spans the page quotes from it folded away beneath.
  const documents = new Map<string, Reference[]>();
  for (const r of refs) documents.set(r.content_id, [...(documents.get(r.content_id) ?? []), r]);
  const sources = [...documents.entries()]
    .map(([contentId, spans]) => {
      const quotes = spans
        .map(
          (r) =>
            `<li id="ref-${r.n}" value="${r.n}" data-chunk-id="${esc(r.chunk_id)}"><blockquote>${quoteHtml(r.quote)}</blockquote></li>`,
        )
        .join('\n');
      const numbers = spans.map((r) => `[${r.n}]`).join(' ');
      return `<li class="source"><cite data-content-id="${esc(contentId)}">${esc(sourceLabel(titles, contentId))}</cite>
<details><summary>Quoted ${numbers}</summary><ol class="references">
${quotes}
</ol></details></li>`;
    })
    .join('\n');
  return `${sections}
<footer class="sources"><h2>Sources</h2><ul class="documents">
${sources}
</ul></footer>`;
}

/** A section's sentences grouped by the paragraph the draft puts them in; a draft without paragraphs is one. */
function paragraphsOf(sentences: Sentence[]): Sentence[][] {
  const out: Sentence[][] = [];
  sentences.forEach((x, i) => {
    if (out.length === 0 || (x.paragraph !== undefined && x.paragraph !== sentences[i - 1]!.paragraph)) out.push([]);
    out.at(-1)!.push(x);
  });
  return out;
}

/** The date part of an ISO timestamp, for display (the full one stays in datetime). */
const day = (iso: string) => iso.slice(0, 10);
const time = (iso: string) => `<time datetime="${esc(iso)}">${esc(day(iso))}</time>`;

/** The head every hosted HTML page shares: charset, viewport, the stylesheet, the feed. */
function head(site: Site, title: string, description: string, canonical: string, extra = ''): string {
  return `<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${esc(title)}</title>
<meta name="description" content="${esc(description)}">
<link rel="canonical" href="${esc(canonical)}">
<link rel="alternate" type="application/atom+xml" title="${esc(site.org_name)}" href="${esc(site.base_url)}/feed.xml">
${extra}<style>${HOSTED_CSS}</style>
</head>`;
}

const siteFooter = (site: Site) =>
  `<footer class="site"><span>Every factual sentence cites its source.</span><a href="${esc(site.base_url)}/feed.xml">Atom feed</a></footer>`;

/** One published piece as a complete HTML page: meta, Open Graph, JSON-LD, inline citations and references. */
export function renderPage(site: Site, page: SitePage, draft: DraftRevision, titles: SourceTitles = new Map()): string {
  const url = pageUrl(site, page.slug);
  const title = plainText(draft.title, draft.format);
  const description = plainText(draft.description, draft.format);
  const updated = day(page.updated_at) !== day(page.published_at) ? ` · Updated ${time(page.updated_at)}` : '';
  return `<!DOCTYPE html>
<html lang="en">
${head(
  site,
  title,
  description,
  url,
  `<meta property="og:type" content="article">
<meta property="og:title" content="${esc(title)}">
<meta property="og:description" content="${esc(description)}">
<meta property="og:url" content="${esc(url)}">
<meta property="og:site_name" content="${esc(site.org_name)}">
<meta property="article:published_time" content="${esc(page.published_at)}">
<meta property="article:modified_time" content="${esc(page.updated_at)}">
<script type="application/ld+json">${scriptJson(jsonLd(site, page, draft, titles))}</script>
`,
)}
<body>
<header class="site"><a class="name" href="${esc(site.base_url)}/">${esc(site.org_name)}</a></header>
<main>
<article>
<h1>${inlineHtml(draft.title, draft.format)}</h1>
${description ? `<p class="description">${inlineHtml(draft.description, draft.format)}</p>\n` : ''}<p class="dates">Published ${time(page.published_at)}${updated}</p>
${renderArticleBody(draft, titles)}
</article>
</main>
${siteFooter(site)}
</body>
</html>
`;
}

/** The site's home: every live page, newest first, with its description. */
export function renderIndex(site: Site, pages: SitePage[]): string {
  const items = pages
    .map(
      (p) =>
        `<li><a href="${esc(pageUrl(site, p.slug))}">${esc(p.title)}</a>${p.description ? `<p>${esc(p.description)}</p>` : ''}<p class="dates">${time(p.published_at)}</p></li>`,
    )
    .join('\n');
  return `<!DOCTYPE html>
<html lang="en">
${head(site, site.org_name, `Verified content published by ${site.org_name}.`, `${site.base_url}/`)}
<body>
<header class="site"><span class="name">${esc(site.org_name)}</span></header>
<main>
<h1>${esc(site.org_name)}</h1>
${pages.length > 0 ? `<ul class="pages">\n${items}\n</ul>` : '<p>Nothing is published here yet.</p>'}
</main>
${siteFooter(site)}
</body>
</html>
`;
}

/** sitemaps.org urlset of every live page. */
export function renderSitemap(site: Site, pages: SitePage[]): string {
  const urls = pages.map((p) => `  <url><loc>${esc(pageUrl(site, p.slug))}</loc><lastmod>${esc(p.updated_at)}</lastmod></url>`).join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
${urls}
</urlset>
`;
}

export function renderRobots(site: Site): string {
  return `User-agent: *\nAllow: /\nSitemap: ${site.base_url}/sitemap.xml\n`;
}

/**
 * robots.txt (RFC 9309) at the root of the shared host, the only place crawlers
 * read it: the hosted sites are open, the API is not, and every site's sitemap is named.
 */
export function renderSharedRobots(sitemapUrls: string[]): string {
  return `User-agent: *\nAllow: /sites/\nDisallow: /api/\n${sitemapUrls.map((u) => `\nSitemap: ${u}`).join('')}\n`;
}

/** Atom 1.0 feed of every live page, newest first. */
export function renderAtom(site: Site, pages: SitePage[]): string {
  const updated = pages.reduce((m, p) => (p.updated_at > m ? p.updated_at : m), '1970-01-01T00:00:00.000Z');
  const entries = pages
    .map(
      (p) => `  <entry>
    <title>${esc(p.title)}</title>
    <link href="${esc(pageUrl(site, p.slug))}"/>
    <id>${esc(pageUrl(site, p.slug))}</id>
    <published>${esc(p.published_at)}</published>
    <updated>${esc(p.updated_at)}</updated>
    <summary>${esc(p.description)}</summary>
  </entry>`,
    )
    .join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>${esc(site.org_name)}</title>
  <id>${esc(site.base_url)}/</id>
  <link href="${esc(site.base_url)}/"/>
  <link rel="self" href="${esc(site.base_url)}/feed.xml"/>
  <updated>${updated}</updated>
  <author><name>${esc(site.org_name)}</name></author>
${entries}
</feed>
`;
}

/** llms.txt (llmstxt.org): a title, a summary and a list of every page. */
export function renderLlmsTxt(site: Site, pages: SitePage[]): string {
  const lines = pages.map(
    (p) => `- [${p.title.replace(/[[\]]/g, '')}](${pageUrl(site, p.slug)})${p.description ? `: ${p.description}` : ''}`,
  );
  return `# ${site.org_name}\n\n> Verified content published by ${site.org_name}; every factual sentence cites its source.\n\n## Pages\n\n${lines.join('\n')}\n`;
}
