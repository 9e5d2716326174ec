import type { DraftRevision } from '@kb/events';

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

interface Reference {
  n: number;
  content_id: string;
  chunk_id: string;
  quote: string;
}

type Section = DraftRevision['sections'][number];

/**
 * The sections a page shows: sentences with text only, and only sections left
 * with at least one, so no heading stands over nothing and no FAQ answer is empty.
 */
export function shownSections(draft: Pick<DraftRevision, 'sections'>): Section[] {
  return draft.sections
    .map((s) => ({ ...s, sentences: s.sentences.filter((x) => x.text.trim().length > 0) }))
    .filter((s) => s.sentences.length > 0);
}

/** Numbers each distinct cited chunk of the shown sentences in order of first use. */
function referencesOf(sections: Section[]): { refs: Reference[]; numberOf: Map<string, number> } {
  const refs: Reference[] = [];
  const numberOf = new Map<string, number>();
  for (const section of sections)
    for (const sentence of section.sentences)
      for (const c of sentence.citations)
        if (!numberOf.has(c.chunk_id)) {
          numberOf.set(c.chunk_id, refs.length + 1);
          refs.push({ n: refs.length + 1, content_id: c.content_id, chunk_id: c.chunk_id, quote: c.quote });
        }
  return { refs, numberOf };
}

export function jsonLd(site: Site, page: SitePage, draft: DraftRevision): Record<string, unknown> {
  const url = pageUrl(site, page.slug);
  const sections = shownSections(draft);
  const { refs } = referencesOf(sections);
  const article = {
    '@type': 'Article',
    '@id': `${url}#article`,
    headline: draft.title,
    description: draft.description,
    url,
    mainEntityOfPage: url,
    datePublished: page.published_at,
    dateModified: page.updated_at,
    author: { '@type': 'Organization', name: site.org_name },
    publisher: { '@type': 'Organization', name: site.org_name },
    citation: refs.map((r) => ({ '@type': 'CreativeWork', identifier: r.chunk_id, text: r.quote })),
  };
  const graph: Record<string, unknown>[] = [article];
  // A Question with an empty answer is invalid FAQPage markup; a FAQPage without questions is left out.
  const questions = sections
    .map((s) => ({ name: s.title, text: s.sentences.map((x) => x.text).join(' ') }))
    .filter((q) => q.text.trim().length > 0)
    .map((q) => ({ '@type': 'Question', name: q.name, acceptedAnswer: { '@type': 'Answer', text: q.text } }));
  if (draft.content_kind === 'qa' && questions.length > 0) graph.push({ '@type': 'FAQPage', '@id': `${url}#faq`, mainEntity: questions });
  return { '@context': 'https://schema.org', '@graph': graph };
}

/**
 * The article's body: sections with inline citation marks linking to the
 * numbered references, which quote the cited chunks. Also what CMS destinations get.
 * A section without sentences is left out, heading and all.
 */
export function renderArticleBody(draft: DraftRevision): string {
  const shown = shownSections(draft);
  const { refs, numberOf } = referencesOf(shown);
  const sections = shown
    .map((s) => {
      const sentences = s.sentences
        .map((x) => {
          const marks = [...new Set(x.citations.map((c) => numberOf.get(c.chunk_id)!))]
            .map((n) => `<sup><a class="cite" href="#ref-${n}">[${n}]</a></sup>`)
            .join('');
          return `${esc(x.text)}${marks}`;
        })
        .join(' ');
      return `<section id="${esc(s.section_id)}">${s.title ? `<h2>${esc(s.title)}</h2>` : ''}<p>${sentences}</p></section>`;
    })
    .join('\n');
  const references = refs
    .map(
      (r) =>
        `<li id="ref-${r.n}"><blockquote>${esc(r.quote)}</blockquote><cite data-content-id="${esc(r.content_id)}" data-chunk-id="${esc(r.chunk_id)}">Source ${esc(r.content_id)}</cite></li>`,
    )
    .join('\n');
  return `${sections}
<footer><h2>Sources</h2><ol class="references">
${references}
</ol></footer>`;
}

/** One published piece as a complete HTML page: meta, Open Graph, JSON-LD, inline citations and references. */
export function renderPage(site: Site, page: SitePage, draft: DraftRevision): string {
  const url = pageUrl(site, page.slug);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(draft.title)}</title>
<meta name="description" content="${esc(draft.description)}">
<link rel="canonical" href="${esc(url)}">
<link rel="alternate" type="application/atom+xml" title="${esc(site.org_name)}" href="${esc(site.base_url)}/feed.xml">
<meta property="og:type" content="article">
<meta property="og:title" content="${esc(draft.title)}">
<meta property="og:description" content="${esc(draft.description)}">
<meta property="og:url" content="${esc(url)}">
<meta property="og:site_name" content="${esc(site.org_name)}">
<meta property="article:published_time" content="${esc(page.published_at)}">
<meta property="article:modified_time" content="${esc(page.updated_at)}">
<script type="application/ld+json">${scriptJson(jsonLd(site, page, draft))}</script>
</head>
<body>
<article>
<h1>${esc(draft.title)}</h1>
<p class="description">${esc(draft.description)}</p>
${renderArticleBody(draft)}
</article>
</body>
</html>
`;
}

export function renderIndex(site: Site, pages: SitePage[]): string {
  const items = pages.map((p) => `<li><a href="${esc(pageUrl(site, p.slug))}">${esc(p.title)}</a></li>`).join('\n');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${esc(site.org_name)}</title>
<link rel="canonical" href="${esc(site.base_url)}/">
<link rel="alternate" type="application/atom+xml" title="${esc(site.org_name)}" href="${esc(site.base_url)}/feed.xml">
</head>
<body>
<h1>${esc(site.org_name)}</h1>
<ul>
${items}
</ul>
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
