import { Parser } from 'htmlparser2';
import type { Block } from '../types.js';

const SKIP = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'head',
  'nav',
  'footer',
  'aside',
  'form',
  'button',
  'iframe',
  'select',
  'textarea',
  'object',
  'embed',
  'canvas',
  'audio',
  'video',
  'map',
]);
const BLOCK = new Set([
  'p',
  'div',
  'li',
  'ul',
  'ol',
  'dl',
  'blockquote',
  'pre',
  'section',
  'article',
  'main',
  'header',
  'dd',
  'dt',
  'figure',
  'figcaption',
  'br',
  'hr',
  'caption',
  'table',
  'details',
  'summary',
  'address',
  'fieldset',
  'legend',
  'center',
]);
/** The permalink anchors documentation sites put in headings ("#", "¶"): not text. */
const PERMALINK_CLASS = /\b(?:headerlink|header-anchor|heading-anchor|hash-link|anchorjs-link|anchor-link|permalink)\b/;
/**
 * Private-use characters mark where inline <code> and <a> start and end while their text is
 * gathered; a paragraph, heading or cell resolves them when it is complete.
 */
const CODE_OPEN = '\uE010';
const CODE_CLOSE = '\uE011';
const LINK_OPEN = '\uE012';
const LINK_CLOSE = '\uE013';
const MARKERS = /[\uE010-\uE013]/g;
const INLINE_CODE = /\uE010([^\uE010\uE011]*)\uE011/g;
const PERMALINK = /\uE012\s*[#¶§🔗⚓]?\s*\uE013/gu;

/** Gathered text made final: inline code in backticks (nothing when empty), a heading's permalink anchors gone, whitespace collapsed. */
function resolve(text: string, inHeading: boolean): string {
  let out = text.replace(INLINE_CODE, (_, inner: string) => {
    const code = inner.replace(MARKERS, '').replace(/\s+/g, ' ').trim();
    return code ? `\`${code}\`` : '';
  });
  if (inHeading) out = out.replace(PERMALINK, '');
  return out.replace(MARKERS, '').replace(/\s+/g, ' ').trim();
}

/** The lines of a <pre> block: the newline right after <pre> goes, as do trailing spaces and blank lines at either end. */
function codeText(raw: string): string {
  const lines = raw
    .replace(/\r\n?/g, '\n')
    .replace(/^\n/, '')
    .split('\n')
    .map((l) => l.replace(/\s+$/, ''));
  while (lines.length > 0 && lines[0] === '') lines.shift();
  while (lines.length > 0 && lines.at(-1) === '') lines.pop();
  return lines.join('\n');
}

/**
 * The main text of an HTML page (also DOCX through mammoth's HTML): headings,
 * paragraphs, table rows and code blocks (<pre>, lines kept); scripts, styles
 * and page chrome (nav, footer, aside) are left out, tags never reach the text,
 * inline <code> is written in backticks (bare in headings) and a heading's
 * permalink anchor ("#", "¶") is dropped.
 */
export function extractHtml(html: string): Block[] {
  const blocks: Block[] = [];
  let text = '';
  let skipDepth = 0;
  let heading: number | undefined;
  let row: string[] | undefined;
  let cell: string | undefined;
  /** Inside <pre>: how deep, and its text so far. */
  let preDepth = 0;
  let code = '';
  const flush = () => {
    const clean = resolve(text, heading !== undefined);
    text = '';
    if (!clean) return;
    blocks.push(heading ? { kind: 'heading', level: heading, text: clean } : { kind: 'paragraph', text: clean });
  };
  /** Adds text (or a marker) to the open cell, else to the open paragraph or heading. */
  const add = (data: string) => {
    if (cell !== undefined) cell += data;
    else text += data;
  };

  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (skipDepth > 0 || SKIP.has(name)) {
          skipDepth++;
          return;
        }
        if (preDepth > 0) {
          if (name === 'pre') preDepth++;
          else if (name === 'br') code += '\n';
          return;
        }
        if (name === 'pre' && cell === undefined) {
          flush();
          preDepth = 1;
          code = '';
        } else if (/^h[1-6]$/.test(name)) {
          flush();
          heading = Number(name[1]);
        } else if (name === 'tr') {
          flush();
          row = [];
        } else if ((name === 'td' || name === 'th') && row) {
          cell = '';
        } else if (name === 'br' && cell !== undefined) {
          cell += ' ';
        } else if (name === 'a' && (PERMALINK_CLASS.test(attributes.class ?? '') || attributes['aria-hidden'] === 'true')) {
          skipDepth++;
        } else if (name === 'a') {
          add(LINK_OPEN);
        } else if (name === 'code' && heading === undefined) {
          add(CODE_OPEN);
        } else if (BLOCK.has(name) && cell === undefined) flush();
      },
      ontext(data) {
        if (skipDepth > 0) return;
        if (preDepth > 0) code += data;
        else add(data.replace(MARKERS, ''));
      },
      onclosetag(name) {
        if (skipDepth > 0) {
          skipDepth--;
          return;
        }
        if (preDepth > 0) {
          if (name === 'pre' && --preDepth === 0) {
            const body = codeText(code);
            if (body) blocks.push({ kind: 'code', text: body });
            code = '';
          }
          return;
        }
        if (name === 'a') add(LINK_CLOSE);
        else if (name === 'code' && heading === undefined) add(CODE_CLOSE);
        else if (/^h[1-6]$/.test(name)) {
          flush();
          heading = undefined;
        } else if ((name === 'td' || name === 'th') && row && cell !== undefined) {
          row.push(resolve(cell, false));
          cell = undefined;
        } else if (name === 'tr' && row) {
          const cells = row.filter((c) => c.length > 0);
          if (cells.length > 0) blocks.push({ kind: 'row', text: row.join(' | ') });
          row = undefined;
        } else if (BLOCK.has(name) && cell === undefined) flush();
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.write(html);
  parser.end();
  if (preDepth > 0) {
    const body = codeText(code);
    if (body) blocks.push({ kind: 'code', text: body });
  }
  flush();
  return blocks;
}
