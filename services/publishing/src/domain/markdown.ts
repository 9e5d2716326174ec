import MarkdownIt from 'markdown-it';
import type { Token } from 'markdown-it';

/**
 * Inline Markdown of a draft (its sentences, titles, quotes) as HTML or as plain
 * text, with markdown-it. Raw HTML is never let through (`html: false` escapes
 * it, which markdown-it documents as safe without a separate sanitizer), and a
 * link is kept only when it leads somewhere from the hosted page: an absolute
 * http(s) or mailto URL. Relative links copied from a source (`./Server.md#close`)
 * would point nowhere, so they keep their text and lose the link; images keep
 * their alt text (a hosted page does not hotlink a source's pictures).
 */
const md = new MarkdownIt('commonmark', { html: false, linkify: false, typographer: false });
md.enable('strikethrough');

const REACHABLE = /^(https?:\/\/[^\s/]|mailto:)/i;

/** The inline children with unreachable links unwrapped and images turned into their alt text. */
function hostedChildren(children: Token[]): Token[] {
  const out: Token[] = [];
  const dropped: boolean[] = [];
  for (const token of children) {
    if (token.type === 'link_open') {
      const href = String(token.attrGet('href') ?? '');
      const keep = REACHABLE.test(href);
      dropped.push(!keep);
      if (keep) {
        token.attrSet('rel', 'nofollow noopener');
        out.push(token);
      }
    } else if (token.type === 'link_close') {
      if (!dropped.pop()) out.push(token);
    } else if (token.type === 'image') {
      token.content = token.children ? plainOf(token.children) : token.content;
      Object.assign(token, { type: 'text', tag: '', attrs: null, children: null });
      out.push(token);
    } else out.push(token);
  }
  return out;
}

function plainOf(children: Token[]): string {
  let s = '';
  for (const t of children) {
    if (t.type === 'text' || t.type === 'code_inline' || t.type === 'html_inline') s += t.content;
    else if (t.type === 'softbreak' || t.type === 'hardbreak') s += ' ';
    else if (t.type === 'image') s += t.children ? plainOf(t.children) : t.content;
  }
  return s;
}

const inlineTokens = (text: string): Token[] => md.parseInline(text, {})[0]?.children ?? [];

/** One line of inline Markdown as safe HTML (no <p> around it). */
export function markdownInlineHtml(text: string): string {
  return md.renderer.renderInline(hostedChildren(inlineTokens(text)), md.options, {});
}

/** What a reader sees of one line of inline Markdown, as text: no markup, whitespace collapsed. */
export function markdownPlainText(text: string): string {
  return plainOf(inlineTokens(text)).replace(/\s+/g, ' ').trim();
}
